"""A judge reply nested past what Python's JSON parser reads is a malformed verdict like any
other (asked again once, then a failed sample naming it), for every provider's protocol, against
real loopback servers; never an error classified as the judge's own crash."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.judge.fakes import (
    FakeAnthropic,
    FakeGoogle,
    FakeOpenAI,
    FakeServer,
    clear_provider_env,
    raw_text,
)

from agenteval import EvalCase, Trial
from agenteval.engine.trials import RetryPolicy
from agenteval.judge.judge import Judge, JudgeConfig
from agenteval.judge.rubrics import JudgeRubric

DEEP = "[" * 5_000 + "]" * 5_000
FAKES: dict[str, tuple[type[FakeServer], str]] = {
    "openai": (FakeOpenAI, "gpt-4o-mini"),
    "anthropic": (FakeAnthropic, "claude-haiku-4-5"),
    "google": (FakeGoogle, "gemini-2.5-flash"),
}


@pytest.mark.parametrize("provider", sorted(FAKES))
async def test_a_deep_reply_is_a_malformed_verdict(
    provider: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_provider_env(monkeypatch)
    fake_type, model = FAKES[provider]
    with fake_type() as fake:
        fake.push(raw_text(DEEP), raw_text(DEEP))
        config = JudgeConfig(
            spec=f"{provider}:{model}", base_url=fake.base_url, cache_path=tmp_path / "c.db"
        )
        judge = Judge.open(config, retry=RetryPolicy(max_retries=1, initial_wait_s=0.01))
        try:
            score = await JudgeRubric(name="answer_relevance", judge=judge)(
                EvalCase(input="Hi"), Trial(output="Hello!")
            )
        finally:
            await judge.aclose()
    assert score.error == "All LLM samples failed"
    assert score.judge is not None and score.judge.retries == {"invalid_verdict": 1}
    (sample,) = score.details["samples"]
    assert sample["error"].startswith("invalid_verdict"), sample
