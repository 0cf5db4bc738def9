"""One attempt under its time limit, in the worker's own task, holding even against an agent
that blocks the event loop or ignores cancellation.

`asyncio.timeout` alone holds neither: an async agent that blocks the loop past its deadline
(`time.sleep(4)` with a 2 s limit) and then returns is never cancelled, since the timer cannot
run while the loop is blocked; and one that swallows the cancellation keeps its worker forever.
`Deadline` drives the attempt's coroutine itself, step by step, as `await` would (the agent runs
in the worker's task, as before, with its context), and so:

- it times each step, the stretch the agent held the event loop: an attempt that ends past its
  deadline without the timer having run fails as `timeout`, naming the block ("blocked the event
  loop for 4.0 s") when its own step crossed the deadline;
- at the deadline it cancels the task, as `asyncio.timeout` does; an agent that lets the
  cancellation through ends as `timeout`;
- an agent that ignores the cancellation gets `grace_s` more; then the deadline stops driving it
  (its next cancellation is not passed on), closes its coroutine (which runs its `finally`
  blocks, so nothing is left pending at exit) and the attempt ends as `timeout`, saying so.

A blocked loop cannot be interrupted in-process (nothing runs until the step returns), and a
thread or a native call that never returns cannot be stopped: only a process of its own contains
those. The cost on the usual path is one timer per attempt (as `asyncio.timeout`) and two clock
reads per step.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Generator, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from agenteval.failures import TrialTimeoutError
from agenteval.interrupts import stop_requested

__all__ = ["Deadline", "grace_s"]

T = TypeVar("T")

_RUNNING, _EXPIRED, _ABANDONED = 0, 1, 2
_CLOSE_TRIES = 10
_MAX_GRACE_S = 5.0


def grace_s(timeout_s: float) -> float:
    """How long an agent that ignores its cancellation is waited for past its deadline: as long
    as the limit itself, at most 5 s."""
    return min(_MAX_GRACE_S, timeout_s)


class Deadline(Generic[T]):
    """`await Deadline(coro, timeout_s, grace_s)`: the coroutine's result, or `TrialTimeoutError`
    (see the module). One per attempt; awaited once, in the task that is to be cancelled."""

    __slots__ = (
        "_base",
        "_coro",
        "_deadline",
        "_grace",
        "_grace_s",
        "_loop",
        "_state",
        "_task",
        "_timeout_s",
        "_timer",
    )

    def __init__(self, coro: Coroutine[Any, Any, T], timeout_s: float, grace: float) -> None:
        self._coro = coro
        self._timeout_s = timeout_s
        self._grace_s = grace
        self._state = _RUNNING
        self._grace: asyncio.TimerHandle | None = None
        self._timer: asyncio.TimerHandle | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        """Stop the clock for the block: time spent waiting on the harness's side of the
        attempt (a simulated user writing its next message) is not the agent's. The deadline
        moves on by the time held; an attempt already past it is left as it is."""
        if self._state != _RUNNING or self._timer is None:
            yield
            return
        self._timer.cancel()
        started = self._loop.time()
        try:
            yield
        finally:
            self._deadline += self._loop.time() - started
            if self._state == _RUNNING:
                self._timer = self._loop.call_at(self._deadline, self._expire)

    def _expire(self) -> None:
        if self._state == _RUNNING:
            self._state = _EXPIRED
            self._task.cancel()
            self._grace = self._loop.call_later(self._grace_s, self._abandon)

    def _abandon(self) -> None:
        if self._state == _EXPIRED:
            self._state = _ABANDONED
            self._task.cancel()

    def _timed_out(self, longest_s: float) -> TrialTimeoutError:
        message = f"no answer within {self._timeout_s:g} s"
        if longest_s >= self._timeout_s / 2:
            message += f" (it blocked the event loop for {longest_s:.1f} s at once)"
        return TrialTimeoutError(message)

    def _overran(self, longest_s: float) -> TrialTimeoutError:
        if longest_s >= self._timeout_s:
            return TrialTimeoutError(
                f"blocked the event loop for {longest_s:.1f} s (time limit {self._timeout_s:g} s):"
                " an async agent must await, not block; run blocking calls with asyncio.to_thread"
            )
        return TrialTimeoutError(
            f"no answer within {self._timeout_s:g} s: the event loop was blocked past the "
            "deadline by other work"
        )

    def _close(self) -> None:
        """Stop the abandoned coroutine: closing runs its `finally` blocks; one that awaits in
        them is closed again, a few times (never left to be closed, loudly, at exit)."""
        for _ in range(_CLOSE_TRIES):
            try:
                self._coro.close()
                return
            except RuntimeError:  # it awaited while closing: close it again
                continue
            except BaseException:
                return

    def _uncancel(self, times: int) -> bool:
        """Withdraw our own cancellations; whether the run's stop is still pending. (One the
        agent asked for on its own task is the worker's to withdraw: `interrupts`.)"""
        for _ in range(times):
            self._task.uncancel()
        return self._task.cancelling() > self._base and stop_requested()

    def __await__(self) -> Generator[Any, Any, T]:
        loop = self._loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        if task is None:
            raise RuntimeError("Deadline must be awaited in a task")
        self._task = task
        self._base = task.cancelling()
        coro = self._coro
        clock = time.monotonic
        self._deadline = loop.time() + self._timeout_s
        self._timer = loop.call_at(self._deadline, self._expire)
        longest = 0.0
        value: Any = None
        error: BaseException | None = None
        try:
            while True:
                start = clock()
                try:
                    yielded = coro.send(value) if error is None else coro.throw(error)
                except StopIteration as stop:
                    longest = max(longest, clock() - start)
                    if self._state == _EXPIRED:  # it answered after being cancelled
                        if self._uncancel(1):
                            raise asyncio.CancelledError from None
                        raise self._timed_out(longest) from None
                    if task.cancelling() > self._base and stop_requested():
                        raise asyncio.CancelledError from None  # it swallowed the run's stop
                    if loop.time() >= self._deadline:  # the timer never ran: a blocked loop
                        raise self._overran(longest) from None
                    return stop.value  # type: ignore[no-any-return]
                except asyncio.CancelledError:
                    if self._state == _EXPIRED:  # ours, let through: the attempt timed out
                        longest = max(longest, clock() - start)
                        if self._uncancel(1):
                            raise
                        raise self._timed_out(longest) from None
                    raise  # someone else's, or the agent's own: the trial tells them apart
                except BaseException:
                    # The agent's own error stays its own, however late (a timeout would hide
                    # the bug as infrastructure); a cancellation it swallowed is withdrawn.
                    if self._state == _EXPIRED and self._uncancel(1):
                        raise asyncio.CancelledError from None
                    raise
                step = clock() - start
                if step > longest:
                    longest = step
                try:
                    value = yield yielded
                    error = None
                except BaseException as exc:  # thrown in by the task: a cancellation
                    if self._state == _ABANDONED:
                        self._close()
                        if self._uncancel(2):
                            raise
                        raise TrialTimeoutError(
                            f"no answer within {self._timeout_s:g} s, and it ignored the "
                            f"cancellation for {self._grace_s:g} s more: abandoned"
                        ) from None
                    value = None
                    error = exc
        finally:
            if self._timer is not None:
                self._timer.cancel()
            if self._grace is not None:
                self._grace.cancel()
