"""The judge's verdict schema is strict: a score written as a string (`"1"`), a boolean, or a
reasoning that is not text is a malformed verdict, asked again like any other, never read as
a number. Against a real loopback server speaking each provider's protocol."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.judge.fakes import (
    FakeAnthropic,
    FakeGoogle,
    FakeOpenAI,
    FakeServer,
    clear_provider_env,
    verdict,
)

from agenteval import EvalCase, Trial
from agenteval.engine.trials import RetryPolicy
from agenteval.judge.judge import Judge, JudgeConfig
from agenteval.judge.rubrics import JudgeRubric
from agenteval.judge.verdict import Verdict

FAST = RetryPolicy(max_retries=1, initial_wait_s=0.01, max_wait_s=0.02)
FAKES: dict[str, type[FakeServer]] = {
    "openai": FakeOpenAI,
    "anthropic": FakeAnthropic,
    "google": FakeGoogle,
}
MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5", "google": "gemini-2.5-flash"}
CASE = EvalCase(id="capital", input="What is the capital of France?", expected_output="Paris")
TRIAL = Trial(output="Paris.")

LAX: dict[str, dict[str, Any]] = {
    "score as a string": {"reasoning": "Same city.", "score": "1"},
    "score as a decimal string": {"reasoning": "Same city.", "score": "0.5"},
    "score as a boolean": {"reasoning": "Same city.", "score": True},
    "score as false": {"reasoning": "Wrong.", "score": False},
    "reasoning as a number": {"reasoning": 1, "score": 1.0},
    "reasoning as a list": {"reasoning": ["Same", "city"], "score": 1.0},
    "a field of its own": {"reasoning": "Same city.", "score": 1.0, "confidence": "high"},
    "no reasoning": {"score": 1.0},
}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_provider_env(monkeypatch)


@pytest.fixture(params=sorted(FAKES))
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def fake(provider: str) -> Iterator[FakeServer]:
    with FAKES[provider]() as server:
        yield server


def make_judge(provider: str, fake: FakeServer, tmp_path: Path) -> Judge:
    config = JudgeConfig(
        spec=f"{provider}:{MODELS[provider]}",
        base_url=fake.base_url,
        cache_path=tmp_path / "cache.db",
    )
    return Judge.open(config, retry=FAST)


@pytest.mark.parametrize("bad", sorted(LAX))
async def test_a_lax_verdict_is_asked_again_and_the_proper_one_counts(
    provider: str, fake: FakeServer, tmp_path: Path, bad: str
) -> None:
    fake.push(verdict(LAX[bad]), verdict({"reasoning": "Half of it.", "score": 0.5}))
    judge = make_judge(provider, fake, tmp_path)
    try:
        score = await JudgeRubric(name="correctness", judge=judge)(CASE, TRIAL)
    finally:
        await judge.aclose()
    assert fake.request_count == 2
    assert (score.value, score.reason) == (0.5, "Half of it.")
    assert score.judge is not None and score.judge.retries == {"invalid_verdict": 1}


async def test_a_string_score_twice_is_no_score_not_a_made_up_one(
    provider: str, fake: FakeServer, tmp_path: Path
) -> None:
    fake.push(*[verdict({"reasoning": "Same city.", "score": "1"})] * 2)
    judge = make_judge(provider, fake, tmp_path)
    try:
        score = await JudgeRubric(name="correctness", judge=judge)(CASE, TRIAL)
    finally:
        await judge.aclose()
    assert score.value is None and score.passed is None
    assert score.error == "All LLM samples failed"
    sample = score.details["samples"][0]
    assert sample["error"].startswith("invalid_verdict:") and "score" in sample["error"]
    assert fake.request_count == 2


async def test_a_whole_number_score_is_a_proper_number(
    provider: str, fake: FakeServer, tmp_path: Path
) -> None:
    fake.push(verdict({"reasoning": "Same city.", "score": 1}))
    judge = make_judge(provider, fake, tmp_path)
    try:
        score = await JudgeRubric(name="correctness", judge=judge)(CASE, TRIAL)
    finally:
        await judge.aclose()
    assert (score.value, score.passed) == (1.0, True)
    assert fake.request_count == 1


@pytest.mark.parametrize(
    "data",
    [
        {"reasoning": "r", "score": "1"},
        {"reasoning": "r", "score": True},
        {"reasoning": b"r", "score": 1.0},
        {"reasoning": "r", "score": b"1"},
        {"reasoning": "r", "score": float("nan")},
        {"reasoning": "r", "score": 1.5},
    ],
)
def test_the_verdict_model_coerces_nothing(data: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Verdict.model_validate(data)
