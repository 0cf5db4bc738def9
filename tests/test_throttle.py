"""The adaptive concurrency controller, driven by counting and a fake clock (no wall time)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import agenteval
from agenteval.engine.failures import classify
from agenteval.throttle import (
    DECREASE,
    RATE_LIMIT_RETRIES,
    AdaptiveLimit,
    RetryBudget,
    endpoint,
    shared_limit,
    shared_limits,
)


class FakeClock:
    """A clock that moves only when someone sleeps on it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        target = self.now + seconds
        await asyncio.sleep(0)
        self.now = max(self.now, target)


class ProviderError(agenteval.InfrastructureError):
    """What an SDK raises: an HTTP status, and headers (infrastructure by type, as declared)."""

    def __init__(
        self, status: int, retry_after: str | None = None, retry_after_ms: str | None = None
    ) -> None:
        cause = "rate_limited" if status == 429 else "provider_error"
        super().__init__(f"HTTP {status}", cause=cause)
        self.status_code = status
        self.headers: dict[str, str] = {}
        if retry_after is not None:
            self.headers["retry-after"] = retry_after
        if retry_after_ms is not None:
            self.headers["retry-after-ms"] = retry_after_ms


async def _hold(limit: AdaptiveLimit, n: int) -> list[Any]:
    """Take `n` slots at once (each as an entered context manager), to end one by one."""
    slots = [limit.slot() for _ in range(n)]
    for slot in slots:
        await slot.__aenter__()
    return slots


async def _end(slot: Any, exc: BaseException | None = None) -> None:
    if exc is None:
        await slot.__aexit__(None, None, None)
        return
    with pytest.raises(type(exc)):
        if not await slot.__aexit__(type(exc), exc, None):
            raise exc


async def test_without_429s_the_limit_stays_at_the_ceiling_and_bounds_the_calls() -> None:
    limit = AdaptiveLimit(4)
    in_flight = peak = 0

    async def call() -> None:
        nonlocal in_flight, peak
        async with limit.slot():
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0)
            in_flight -= 1

    await asyncio.gather(*(call() for _ in range(40)))
    assert peak == 4
    assert limit.limit == 4.0
    assert limit.cuts == 0 and limit.responses_429 == 0
    assert limit.in_flight == 0


async def test_a_congestion_event_cuts_the_limit_once() -> None:
    limit = AdaptiveLimit(8)
    slots = await _hold(limit, 8)
    # All eight calls in flight together get 429: one event, one cut.
    for slot in slots:
        await _end(slot, ProviderError(429))
    assert limit.responses_429 == 8
    assert limit.cuts == 1
    assert limit.limit == 8 * DECREASE
    # A call started after the cut that gets 429 is news: a second event.
    (slot,) = await _hold(limit, 1)
    await _end(slot, ProviderError(429))
    assert limit.cuts == 2
    # Cut from the calls in flight (1), not the nominal limit (4), and never below the floor.
    assert limit.limit == 1.0


async def test_the_limit_climbs_back_by_about_one_per_limit_of_successes() -> None:
    limit = AdaptiveLimit(8)
    for slot in await _hold(limit, 8):
        await _end(slot, ProviderError(429))
    assert limit.limit == 4.0
    successes = 0
    while limit.limit < 8:
        # Keep the limit binding: every slot it allows is taken.
        slots = await _hold(limit, int(limit.limit))
        for slot in slots:
            await _end(slot)
            successes += 1
        if successes == 4:
            assert 4.9 < limit.limit < 5.1  # four successes at limit 4: one slot more
    assert limit.limit == 8.0  # never past the ceiling
    assert limit.peak_since_cut == 8.0
    # Classic AIMD: from 4 to 8 in about (8² - 4²) / 2 successes.
    assert 20 <= successes <= 32


async def test_a_limit_nobody_presses_on_does_not_grow() -> None:
    limit = AdaptiveLimit(8)
    for slot in await _hold(limit, 8):
        await _end(slot, ProviderError(429))
    for _ in range(50):  # one call at a time, under a limit of 4
        async with limit.slot():
            pass
    assert limit.limit == 4.0


async def test_other_failures_leave_the_limit_alone() -> None:
    limit = AdaptiveLimit(4)
    for slot in await _hold(limit, 4):
        await _end(slot, ProviderError(503))
    (slot,) = await _hold(limit, 1)
    await _end(slot, TimeoutError())
    assert limit.limit == 4.0 and limit.cuts == 0 and limit.in_flight == 0


async def test_after_a_cut_calls_queue_and_never_exceed_the_limit() -> None:
    limit = AdaptiveLimit(8)
    for slot in await _hold(limit, 8):
        await _end(slot, ProviderError(429))
    in_flight = 0
    over: list[tuple[int, float]] = []

    async def call() -> None:
        nonlocal in_flight
        async with limit.slot():
            in_flight += 1
            if in_flight > limit.limit:
                over.append((in_flight, limit.limit))
            for _ in range(3):
                await asyncio.sleep(0)
            in_flight -= 1

    await asyncio.gather(*(call() for _ in range(30)))
    assert over == []
    assert limit.limit > 4.0  # it climbed meanwhile, as the limit was binding
    assert limit.in_flight == 0


async def test_retry_after_pauses_every_new_call_until_it_ends() -> None:
    clock = FakeClock()
    limit = AdaptiveLimit(4, clock=clock, sleep=clock.sleep)
    first, second = await _hold(limit, 2)
    await _end(first, ProviderError(429, retry_after="2.5"))
    assert limit.paused_until == 2.5
    # Another call's 429 in the same event, asking less, does not shorten the pause.
    await _end(second, ProviderError(429, retry_after="1"))
    assert limit.paused_until == 2.5
    started: list[float] = []

    async def call() -> None:
        async with limit.slot():
            started.append(clock())

    # More calls than the limit: some start at once after the pause, the rest queue.
    await asyncio.gather(*(call() for _ in range(6)))
    assert len(started) == 6
    assert min(started) >= 2.5


async def test_the_pause_is_capped_and_a_later_429_extends_it() -> None:
    clock = FakeClock()
    limit = AdaptiveLimit(4, clock=clock, sleep=clock.sleep)
    held = limit.slot(max_pause_s=3.0)
    await held.__aenter__()
    (other,) = await _hold(limit, 1)
    await _end(held, ProviderError(429, retry_after="3600"))
    assert limit.paused_until == 3.0  # as the retry's own wait is capped
    clock.now = 1.0
    await _end(other, ProviderError(429, retry_after="4"))
    assert limit.paused_until == 5.0


async def test_retry_after_ms_is_preferred_to_a_rounded_retry_after() -> None:
    clock = FakeClock()
    limit = AdaptiveLimit(4, clock=clock, sleep=clock.sleep)
    (slot,) = await _hold(limit, 1)
    await _end(slot, ProviderError(429, retry_after="1", retry_after_ms="120"))
    assert limit.paused_until == 0.12


async def test_the_slot_gives_the_time_waited_for_it() -> None:
    clock = FakeClock()
    limit = AdaptiveLimit(2, clock=clock, sleep=clock.sleep)
    (slot,) = await _hold(limit, 1)
    await _end(slot, ProviderError(429, retry_after="1.5"))
    async with limit.slot() as waited_s:
        assert waited_s == 1.5


async def test_a_retry_is_served_before_newer_calls() -> None:
    limit = AdaptiveLimit(1)
    (holder,) = await _hold(limit, 1)
    order: list[str] = []

    async def call(name: str, *, retry: bool = False) -> None:
        async with limit.slot(first=retry):
            order.append(name)

    waiting = [asyncio.create_task(call("new-1")), asyncio.create_task(call("new-2"))]
    await asyncio.sleep(0)
    waiting.append(asyncio.create_task(call("retry", retry=True)))
    await asyncio.sleep(0)
    await _end(holder)
    await asyncio.gather(*waiting)
    assert order == ["retry", "new-1", "new-2"]


async def test_a_cancelled_waiter_leaves_no_slot_taken() -> None:
    limit = AdaptiveLimit(1)
    (holder,) = await _hold(limit, 1)

    async def call() -> None:
        async with limit.slot():
            pass

    queued = asyncio.create_task(call())
    await asyncio.sleep(0)
    queued.cancel()
    await _end(holder)  # hands the slot to the cancelled waiter, which passes it on
    with pytest.raises(asyncio.CancelledError):
        await queued
    assert limit.in_flight == 0
    async with limit.slot():
        assert limit.in_flight == 1


async def test_no_ceiling_starts_unbounded_and_a_cut_starts_from_the_calls_in_flight() -> None:
    limit = AdaptiveLimit(None)
    slots = await _hold(limit, 12)
    assert limit.in_flight == 12
    for slot in slots:
        await _end(slot, ProviderError(429))
    assert limit.limit == 12 * DECREASE


def test_rate_limit_retries_have_a_budget_of_their_own_when_adaptive() -> None:
    limited, failed, wrong = (
        classify(ProviderError(429)),
        classify(ProviderError(503)),
        classify(ValueError("the agent's own")),
    )
    budget = RetryBudget(2, adaptive=True)
    assert budget.take(wrong) is None
    assert [budget.take(failed), budget.take(failed), budget.take(failed)] == [1, 2, None]
    numbers = [budget.take(limited) for _ in range(RATE_LIMIT_RETRIES + 1)]
    assert numbers == [*range(1, RATE_LIMIT_RETRIES + 1), None]
    assert budget.used == 2 + RATE_LIMIT_RETRIES
    # Without adaptive control, a 429 is one more infrastructure failure.
    plain = RetryBudget(2, adaptive=False)
    assert [plain.take(limited), plain.take(failed), plain.take(limited)] == [1, 2, None]
    # A larger configured budget is kept for 429s.
    assert RetryBudget(20, adaptive=True).take(limited) == 1
    big = RetryBudget(20, adaptive=True)
    assert [big.take(limited) for _ in range(21)][-1] is None


async def test_one_limit_per_endpoint_shared_with_the_widest_ceiling() -> None:
    key = endpoint("openai", "http://127.0.0.1:9/v1/", "m")
    assert key == endpoint("openai", "http://127.0.0.1:9/v1", "m")
    judge_limit = shared_limit(key, 8)
    assert judge_limit.limit == 8.0
    agent_limit = shared_limit(key, None)  # the built-in agent has no ceiling of its own
    assert agent_limit is judge_limit
    assert judge_limit.ceiling is None
    assert shared_limit(endpoint("openai", None, "m"), 8) is not judge_limit
    assert shared_limit(endpoint("openai", "http://127.0.0.1:9/v1", "other"), 8) is not judge_limit
    assert shared_limits()[key] is judge_limit


def test_each_event_loop_has_its_own_limits() -> None:
    async def get() -> AdaptiveLimit:
        return shared_limit("openai default m", 4)

    assert asyncio.run(get()) is not asyncio.run(get())
