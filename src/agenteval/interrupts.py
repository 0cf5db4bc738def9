"""Telling the run being stopped from a `KeyboardInterrupt` or a cancellation an agent causes
itself.

An agent's own `KeyboardInterrupt` (or `CancelledError`) is that trial's failure; a real Ctrl-C
must stop the run. Under `asyncio.run` the first Ctrl-C cancels the main task, so it reaches a
trial as a cancellation of its task (`Task.cancelling()`), but the second one, or the first under
a loop run with Python's own SIGINT handler, raises `KeyboardInterrupt` wherever the main thread
is, an async agent's own frame included. So while a run executes, SIGINT's handler is wrapped:
it counts the signal and then does what it did before. A `KeyboardInterrupt` after a counted
SIGINT is a real one. Nothing is wrapped when SIGINT raises no `KeyboardInterrupt` anyway
(ignored, default action) or outside the main thread (where no signal handler runs).

A cancellation of a worker's task is not always the run's either: an agent (a library that
captured `asyncio.current_task()` for a timeout of its own) can cancel the task it runs in. The
run's own stop reaches a worker in only two ways: the task running the run is cancelled (Ctrl-C
under `asyncio.run`, a caller's timeout; task groups pass it down), or one of the run's own tasks
fails (its task group then cancels the others). `RunStop` watches both, and a cancellation of a
worker's task while neither happened is the agent's: it is withdrawn (`Task.uncancel`), so that
it neither ends the worker nor lingers on its task to hit the next trial.
"""

from __future__ import annotations

import asyncio
import enum
import signal
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from types import FrameType
from typing import Any

from agenteval.scoped import scoped

__all__ = [
    "Interruption",
    "RunStop",
    "interruption",
    "running",
    "settle_own_cancellations",
    "stop_requested",
    "stops_the_run",
    "watching_sigint",
]

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


class RunStop:
    """Whether the run is being stopped: the task running it was cancelled, or one of the run's
    own tasks (a worker, the writer) failed, which makes their task group cancel the others.
    One per run (`running`), seen by every task the run starts."""

    __slots__ = ("_base", "_parent", "failed")

    def __init__(self) -> None:
        self._parent = asyncio.current_task()
        self._base = 0 if self._parent is None else self._parent.cancelling()
        self.failed = False
        """Set by the run's own task guards before a failure reaches their task group."""

    @property
    def requested(self) -> bool:
        """Whether the run is being stopped (not: whether some task of it was cancelled)."""
        if self.failed:
            return True
        return self._parent is not None and self._parent.cancelling() > self._base


_run: ContextVar[RunStop | None] = ContextVar("agenteval_run_stop", default=None)


def running() -> AbstractContextManager[RunStop]:
    """The block runs a run: the tasks it starts tell its stop from their own cancellations."""
    return scoped(_run, RunStop())


def stop_requested() -> bool:
    """Whether a cancellation of this task is to be taken as the run being stopped: in a run,
    when the run is stopping; outside one (a trial run on its own), always."""
    run = _run.get()
    return run is None or run.requested


class Interruption(enum.Enum):
    """What a `CancelledError` or `KeyboardInterrupt` caught around an agent (or a scorer) is."""

    OWN = "raised by the code itself"
    """Not a cancellation of the task, nor a real Ctrl-C: an exception like any other."""
    STOP = "the run is being stopped"
    CANCELLED_ITSELF = "the code cancelled the task it runs in"
    """Withdrawn already: the task goes on."""


def interruption(exc: BaseException) -> Interruption:
    """What `exc`, caught around an agent or a scorer, is (see `Interruption`). A cancellation
    of this task that the run did not ask for is withdrawn here (outside a run, every
    cancellation of the task is taken as a stop)."""
    if not isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
        return Interruption.OWN
    if isinstance(exc, KeyboardInterrupt) and _received > 0 and _depth > 0:
        return Interruption.STOP
    task = asyncio.current_task()
    if task is None or not task.cancelling():
        return Interruption.OWN
    if stop_requested():
        return Interruption.STOP
    while task.uncancel():
        pass
    if isinstance(exc, KeyboardInterrupt):  # its own, raised while its task was cancelled
        return Interruption.OWN
    return Interruption.CANCELLED_ITSELF


def stops_the_run(exc: BaseException) -> bool:
    """Whether `exc`, caught around an agent, is the run being stopped (a cancellation of this
    task by the run, a real Ctrl-C) rather than something the agent raised or caused itself
    (see `interruption`, which withdraws a cancellation the agent asked for)."""
    return interruption(exc) is Interruption.STOP


async def settle_own_cancellations(task: asyncio.Task[object]) -> None:
    """Withdraw the cancellations of `task` that the code it ran asked for and left behind (it
    caught its own, or cancelled its task and returned without awaiting), so that they hit
    neither the next trial nor the run; a pending one is delivered here first. The run's own
    stop is raised. Call it only when `task.cancelling()` is non-zero (the usual path checks
    that, and nothing else)."""
    if stop_requested():
        raise asyncio.CancelledError
    try:
        await asyncio.sleep(0)  # a cancellation still pending is delivered here (Python < 3.13)
    except asyncio.CancelledError:
        if stop_requested():
            raise
    while task.uncancel():
        pass
