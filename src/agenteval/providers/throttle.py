"""Adaptive concurrency per provider endpoint: how many model calls may be in flight at once,
learned from the provider's 429s, and a shared pause when a 429 says ``Retry-After``.

One `AdaptiveLimit` per endpoint (`endpoint`: provider, base URL and model, since providers
rate-limit per model and a local server per address), shared by every judge and built-in agent
of the process calling it (`shared_limit`). Each model call holds a slot of it (`slot`):

- **Additive increase.** A call that succeeds after the limit was binding during its flight
  (every slot taken, or calls queued) raises the limit by ``1 / limit``: about one more slot
  per limit's worth of successes, the classic AIMD climb, up to the ceiling. A limit nobody
  presses on does not grow.
- **Multiplicative decrease.** A 429 cuts the limit to `DECREASE` times the smaller of the limit
  and the calls in flight (never below `FLOOR`), once per congestion event: each slot carries
  the epoch it started in, and a cut starts a new epoch, so the 40 calls that were in flight
  together and all get 429 cut the limit once, not 40 times.
- **Retry-After.** A 429 that says wait N seconds pauses the endpoint: no call starts before
  then, whoever asked; calls already granted a slot wait out the pause holding it, so when the
  pause ends at most `limit` calls start together. ``retry-after-ms`` (OpenAI's exact wait) is
  preferred to ``Retry-After``, which providers round up to whole seconds: a pause of a whole
  second where a tenth was asked would idle the endpoint for the rest.

The limit starts at the ceiling (the judge's `concurrency`; the built-in agent has no ceiling of
its own, the run's concurrency bounds it), so nothing changes until a 429 arrives. Calls queued
for a slot are served in order; a retry goes to the front, so a call refused once is not starved
by newer ones. Only 429s move the limit: a timeout or a 5xx is the call's own failure.

`RetryBudget` is how many times one call is retried. Under adaptive control a 429 is the
expected signal to slow down, a few of which a call may meet while the limit settles, so 429s
draw on a budget of their own (at least `RATE_LIMIT_RETRIES`) instead of using up the
`retries` meant for faults; it is bounded, so a quota that is gone for good (also a 429) ends.

Asyncio waiters belong to one event loop, so the controllers are kept per loop: one run is one
loop, and a run started later (a new `asyncio.run`) starts from the ceiling again.
"""

from __future__ import annotations

import asyncio
import math
import time
import weakref
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from agenteval.failures import Classified, classify, retry_after_s
from agenteval.trace import FailureCause

__all__ = [
    "DECREASE",
    "FLOOR",
    "RATE_LIMIT_RETRIES",
    "AdaptiveLimit",
    "RetryBudget",
    "endpoint",
    "shared_limit",
    "shared_limits",
]

FLOOR = 1
"""The fewest calls in flight the limit allows."""
DECREASE = 0.5
"""What a congestion event multiplies the limit by."""
RATE_LIMIT_RETRIES = 10
"""Retries of one call refused with 429, under adaptive control, at the least."""


@dataclass(frozen=True)
class _Ticket:
    """A granted slot: the congestion epoch it started in, and the count of times the limit
    was reached before it."""

    epoch: int
    pressed: int


class AdaptiveLimit:
    """An AIMD limit on calls in flight to one endpoint, with a shared `Retry-After` pause.

    `ceiling` None means no ceiling of its own. `clock` and `sleep` are injectable so that tests
    drive it with a fake clock.
    """

    def __init__(
        self,
        ceiling: int | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if ceiling is not None and ceiling < FLOOR:
            raise ValueError(f"the ceiling must be at least {FLOOR}, got {ceiling}")
        self.ceiling = ceiling
        self.limit: float = math.inf if ceiling is None else float(ceiling)
        """Calls allowed in flight (a float: additive increase moves it by fractions)."""
        self.in_flight = 0
        self.paused_until = -math.inf
        """No call starts before this time (of `clock`)."""
        self.responses_429 = 0
        self.cuts = 0
        """Congestion events: how many times the limit was cut."""
        self.lowest = self.limit
        """The lowest the limit has been."""
        self.peak_since_cut: float | None = None
        """The highest the limit climbed back to after its first cut (None before one)."""
        self._clock = clock
        self._sleep = sleep
        self._epoch = 0
        self._pressed = 0
        """How many times a call found the limit reached (took its last slot, or queued)."""
        self._waiters: deque[asyncio.Future[None]] = deque()

    def __repr__(self) -> str:
        return (
            f"AdaptiveLimit(limit={self.limit:.2f}, ceiling={self.ceiling}, "
            f"in_flight={self.in_flight}, cuts={self.cuts})"
        )

    def widen(self, ceiling: int | None) -> None:
        """Let another user's ceiling in: the limit's ceiling is the largest any user has (each
        user keeps its own ceiling besides, as the judge's `concurrency` does)."""
        if self.ceiling is None or (ceiling is not None and ceiling <= self.ceiling):
            return
        self.ceiling = ceiling
        if self.cuts == 0:
            self.limit = math.inf if ceiling is None else float(ceiling)

    @asynccontextmanager
    async def slot(
        self, *, first: bool = False, max_pause_s: float = math.inf
    ) -> AsyncIterator[float]:
        """Hold a slot for one call, giving the seconds spent waiting for it; the call's outcome
        moves the limit: success raises it, a 429 cuts it and pauses for its `Retry-After`
        (at most `max_pause_s`), any other failure leaves it. `first`: a retry, served first."""
        start = self._clock()
        ticket = await self._acquire(first)
        try:
            yield self._clock() - start
        except BaseException as exc:
            if isinstance(exc, Exception) and classify(exc).cause is FailureCause.RATE_LIMITED:
                asked = _asked_pause_s(exc)
                self.rate_limited(ticket, None if asked is None else min(asked, max_pause_s))
            else:
                self._release()
            raise
        self.succeeded(ticket)

    # -- the limit

    def succeeded(self, ticket: _Ticket) -> None:
        """A call came back fine: one step of additive increase, when the limit was reached
        while it was in flight."""
        if self._pressed > ticket.pressed:
            ceiling = math.inf if self.ceiling is None else self.ceiling
            self.limit = min(ceiling, self.limit + 1 / self.limit)
            if self.cuts:
                self.peak_since_cut = max(self.peak_since_cut or 0.0, self.limit)
        self._release()

    def rate_limited(self, ticket: _Ticket, pause_s: float | None) -> None:
        """A call got 429: pause for `pause_s` when given, and cut the limit unless this call
        started before the last cut (then it belongs to that congestion event)."""
        self.responses_429 += 1
        if pause_s:
            self.paused_until = max(self.paused_until, self._clock() + pause_s)
        if ticket.epoch == self._epoch:
            self._epoch += 1
            self.cuts += 1
            self.limit = max(float(FLOOR), min(self.limit, self.in_flight) * DECREASE)
            self.lowest = min(self.lowest, self.limit)
        self._release()

    # -- slots

    def _has_room(self) -> bool:
        # `in_flight < floor(limit)`, written so that an infinite limit works too.
        return self.in_flight + 1 <= self.limit

    async def _acquire(self, first: bool) -> _Ticket:
        pressed = self._pressed
        if self._has_room() and not self._waiters:
            self.in_flight += 1
        else:
            await self._queue(first)
        if not self._has_room() or self._waiters:
            self._pressed += 1
        try:
            while (left := self.paused_until - self._clock()) > 0:
                await self._sleep(left)
        except BaseException:
            self._release()
            raise
        # The epoch the call starts in, after any pause: a call started after a cut is news.
        return _Ticket(self._epoch, pressed)

    async def _queue(self, first: bool) -> None:
        """Wait until `_release` hands this call a slot (counted in `in_flight` already)."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if first:
            self._waiters.appendleft(waiter)
        else:
            self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # handed a slot as it was cancelled: pass the slot on
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise

    def _release(self) -> None:
        self.in_flight -= 1
        while self._waiters and self._has_room():
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)


class RetryBudget:
    """The retries left to one call: `max_retries` for infrastructure failures; with `adaptive`
    on, 429s draw on a budget of their own, of at least `RATE_LIMIT_RETRIES`."""

    def __init__(self, max_retries: int, *, adaptive: bool) -> None:
        self._max = max_retries
        self._adaptive = adaptive
        self._used: Counter[bool] = Counter()

    @property
    def used(self) -> int:
        """Retries taken so far."""
        return self._used.total()

    def take(self, kind: Classified) -> int | None:
        """Take a retry for a failure of this kind: its number in its budget (1-based, for the
        backoff), or None when the failure is not retried or its budget is spent."""
        if not kind.retryable:
            return None
        limited = self._adaptive and kind.cause is FailureCause.RATE_LIMITED
        budget = max(self._max, RATE_LIMIT_RETRIES) if limited else self._max
        if self._used[limited] >= budget:
            return None
        self._used[limited] += 1
        return self._used[limited]


def _asked_pause_s(exc: Exception) -> float | None:
    """The wait a 429 asked for: ``retry-after-ms`` when given (exact), else `Retry-After`."""
    headers: Any = getattr(getattr(exc, "response", None), "headers", None) or getattr(
        exc, "headers", None
    )
    try:
        return max(0.0, float(headers.get("retry-after-ms"))) / 1000
    except (AttributeError, TypeError, ValueError):
        return retry_after_s(exc)


def endpoint(provider: str, base_url: str | None, model: str) -> str:
    """The key of one rate-limited endpoint (kept in memory only, never written)."""
    return f"{provider} {(base_url or 'default').rstrip('/')} {model}"


_LIMITS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, AdaptiveLimit]] = (
    weakref.WeakKeyDictionary()
)


def shared_limit(key: str, ceiling: int | None) -> AdaptiveLimit:
    """The running event loop's limit for endpoint `key`, made at its first use; its ceiling is
    the largest its users gave (None: no ceiling)."""
    limits = _LIMITS.setdefault(asyncio.get_running_loop(), {})
    limit = limits.get(key)
    if limit is None:
        limits[key] = limit = AdaptiveLimit(ceiling)
    else:
        limit.widen(ceiling)
    return limit


def shared_limits() -> Mapping[str, AdaptiveLimit]:
    """The running event loop's limits, by endpoint (to report on them)."""
    return dict(_LIMITS.get(asyncio.get_running_loop(), {}))
