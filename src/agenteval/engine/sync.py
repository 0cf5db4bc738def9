"""The sync form of an async door (`evaluate` of `evaluate_async`, `EvalSuite.run` of
`run_async`, ...): the same arguments, run to the end in a new event loop, refused inside a
running one."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["run_sync", "sync_form"]

P = ParamSpec("P")
T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T], *, instead: str) -> T:
    """Run `coro` to the end; inside a running event loop, refuse, saying what to await
    `instead`."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        coro.close()
        raise RuntimeError(f"called inside a running event loop; use {instead}")
    # Outside the `except`: run within it, every exception raised again in the loop (a sync
    # agent's, handed over from its thread) would take that RuntimeError as its context in
    # place of its own, and a failure a tool mock injected would no longer be seen behind it.
    return asyncio.run(coro)


def sync_form(
    fn: Callable[P, Coroutine[Any, Any, T]],
    *,
    name: str | None = None,
    doc: str | None = None,
    instead: str = "the `*_async` form with await",
) -> Callable[P, T]:
    """`fn`'s sync form: the same signature (typed, and shown by `help`) and arguments, passed
    through as they are; called `name` (by default `fn`'s without `_async`) and documented by
    `doc` (by default `fn`'s docstring)."""

    @functools.wraps(fn)
    def sync(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(fn(*args, **kwargs), instead=instead)

    sync.__name__ = name or fn.__name__.removesuffix("_async")
    owner, dot, _ = fn.__qualname__.rpartition(".")
    sync.__qualname__ = f"{owner}{dot}{sync.__name__}"
    sync.__doc__ = fn.__doc__ if doc is None else doc
    return sync
