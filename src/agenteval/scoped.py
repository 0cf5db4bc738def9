"""`scoped`: a context variable set for the length of a `with` block."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["scoped"]

T = TypeVar("T")


@contextmanager
def scoped(var: ContextVar[T | None], value: T) -> Iterator[T]:
    """`var` set to `value` within the block (and in the tasks and threads started from it),
    reset after it; the block gets `value`."""
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)
