"""Telling a real Ctrl-C from a `KeyboardInterrupt` an agent raises itself.

An agent's own `KeyboardInterrupt` (or `CancelledError`) is that trial's failure; a real Ctrl-C
must stop the run. Under `asyncio.run` the first Ctrl-C cancels the main task, so it reaches a
trial as a cancellation of its task (`Task.cancelling()`), but the second one, or the first under
a loop run with Python's own SIGINT handler, raises `KeyboardInterrupt` wherever the main thread
is, an async agent's own frame included. So while a run executes, SIGINT's handler is wrapped:
it counts the signal and then does what it did before. A `KeyboardInterrupt` after a counted
SIGINT is a real one. Nothing is wrapped when SIGINT raises no `KeyboardInterrupt` anyway
(ignored, default action) or outside the main thread (where no signal handler runs).
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["stops_the_run", "watching_sigint"]

_received = 0
_depth = 0
_previous: Any = None


def _on_sigint(signum: int, frame: FrameType | None) -> Any:
    global _received
    _received += 1
    if callable(_previous):
        return _previous(signum, frame)
    raise KeyboardInterrupt


@contextmanager
def watching_sigint() -> Iterator[None]:
    """Count SIGINTs while the block runs (nested blocks share one wrapper)."""
    global _depth, _previous, _received
    installed = False
    if _depth == 0 and threading.current_thread() is threading.main_thread():
        current = signal.getsignal(signal.SIGINT)
        if callable(current):
            _previous, _received = current, 0
            signal.signal(signal.SIGINT, _on_sigint)
            installed = True
    if installed or _depth:
        _depth += 1
    try:
        yield
    finally:
        if installed or _depth:
            _depth -= 1
        if _depth == 0 and installed and signal.getsignal(signal.SIGINT) is _on_sigint:
            signal.signal(signal.SIGINT, _previous)


def stops_the_run(exc: BaseException) -> bool:
    """Whether `exc`, caught around an agent, is the run being stopped (a cancellation of this
    task, a real Ctrl-C) rather than something the agent raised itself."""
    if not isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
        return False
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        return True
    return isinstance(exc, KeyboardInterrupt) and _received > 0 and _depth > 0
