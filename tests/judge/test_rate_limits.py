"""The judge against a loopback OpenAI-compatible server that admits a few requests per window
and answers the rest 429 with `Retry-After`: nothing is lost, and the endpoint's adaptive limit
is cut on the 429s and climbs back when they stop. Asserted by counting, never by the clock."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.judge.fakes import FakeOpenAI, RateLimit, http_error
from tests.judge.test_judge import CASE

from agenteval import Trial
from agenteval.engine.trials import RetryPolicy
from agenteval.judge.judge import Judge, JudgeConfig
from agenteval.judge.rubrics import JudgeRubric
from agenteval.throttle import endpoint, shared_limits

# Waits long enough to honour the server's Retry-After (a fraction of its window).
PATIENT = RetryPolicy(max_retries=2, initial_wait_s=0.01, max_wait_s=1.0)


def _judge(fake: FakeOpenAI, tmp_path: Path, *, adaptive: bool = True) -> Judge:
    config = JudgeConfig(
        spec="openai:gpt-4o-mini",
        base_url=fake.base_url,
        concurrency=8,
        use_cache=False,
        adaptive=adaptive,
        cache_path=tmp_path / "cache.db",
    )
    return Judge.open(config, retry=PATIENT)


async def _judge_all(judge: Judge, first: int, count: int) -> list[float | None]:
    rubric = JudgeRubric(name="correctness", judge=judge)
    scores = await asyncio.gather(
        *(rubric(CASE, Trial(output=f"Paris ({i})")) for i in range(first, first + count))
    )
    return [score.value for score in scores]


async def test_a_rate_limited_judge_loses_nothing_and_adapts(
    fake_openai: FakeOpenAI, tmp_path: Path, clean_env: None
) -> None:
    limiter = RateLimit(per_window=4, window_s=0.25)
    fake_openai.handler = limiter
    judge = _judge(fake_openai, tmp_path)
    values = await _judge_all(judge, 0, 24)
    assert values == [1.0] * 24  # every request completed: none lost to a 429
    limit = shared_limits()[endpoint("openai", fake_openai.base_url, "gpt-4o-mini")]
    assert limiter.refused > 0
    assert limit.responses_429 == limiter.refused  # each 429 seen once, and retried
    assert limit.cuts >= 1
    assert limit.lowest < 8

    # The 429s stop: the limit climbs back to the judge's concurrency.
    limiter.enabled = False
    values = await _judge_all(judge, 24, 80)
    await judge.aclose()
    assert values == [1.0] * 80
    assert limit.limit == 8.0
    assert limit.peak_since_cut == 8.0
    assert fake_openai.request_count == 24 + 80 + limiter.refused


async def test_rate_limit_retries_are_counted_on_the_score(
    fake_openai: FakeOpenAI, tmp_path: Path, clean_env: None
) -> None:
    limiter = RateLimit(per_window=2, window_s=0.2)
    fake_openai.handler = limiter
    judge = _judge(fake_openai, tmp_path)
    rubric = JudgeRubric(name="correctness", judge=judge)
    scores = await asyncio.gather(*(rubric(CASE, Trial(output=f"Paris {i}")) for i in range(8)))
    await judge.aclose()
    assert [s.value for s in scores] == [1.0] * 8
    counted = sum((s.judge.retries if s.judge else {}).get("rate_limited", 0) for s in scores)
    assert counted == limiter.refused > 0


async def test_adaptive_off_leaves_the_limit_alone(
    fake_openai: FakeOpenAI, tmp_path: Path, clean_env: None
) -> None:
    fake_openai.push(http_error(429, retry_after=0))
    judge = _judge(fake_openai, tmp_path, adaptive=False)
    assert await _judge_all(judge, 0, 4) == [1.0] * 4  # the 429 was retried as before
    await judge.aclose()
    assert fake_openai.request_count == 5
    assert endpoint("openai", fake_openai.base_url, "gpt-4o-mini") not in shared_limits()
