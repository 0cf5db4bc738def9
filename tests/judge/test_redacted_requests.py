"""Nothing the judge sends a provider, caches or reports holds a secret: the agent's answer,
its tool calls and results and the case are redacted before a request is made (and before its
cache key is computed), for every provider, against real loopback servers."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.judge.fakes import (
    FakeAnthropic,
    FakeGoogle,
    FakeOpenAI,
    FakeServer,
    clear_provider_env,
    http_error,
    raw_text,
    verdict,
)

from agenteval import EvalCase, ToolCall, Trial
from agenteval.engine.trials import RetryPolicy
from agenteval.judge.judge import Judge, JudgeConfig
from agenteval.judge.rubrics import JudgeRubric
from agenteval.redaction import REDACTED

FAST = RetryPolicy(max_retries=1, initial_wait_s=0.01, max_wait_s=0.02)

ENV_SECRET = "plain-words-Hunter2-horse-staple"
"""A secret of no known shape, known from the environment only."""
OPENAI_KEY = "sk-proj-Zq81mXvT4kLpW29sQeRt7uYiOp0aSdFg"
GITHUB_TOKEN = "ghp_R4nd0mT0k3nV4lu3Abcdefghijklmnopqrst"
URL_PASSWORD = "Tr0ub4dor-and-3"
SECRETS = (ENV_SECRET, OPENAI_KEY, GITHUB_TOKEN, URL_PASSWORD)

CASE = EvalCase(
    id="leaky",
    input=f"Use the key {OPENAI_KEY} to look up the weather",
    expected_output=f"Sunny (fetched with {ENV_SECRET})",
)
TRIAL = Trial(
    output=f"It is sunny. I used {ENV_SECRET} and {GITHUB_TOKEN}.",
    tool_calls=[
        ToolCall(
            name="fetch",
            arguments={"url": f"https://bot:{URL_PASSWORD}@api.example.com/w", "q": ENV_SECRET},
            result={"weather": "sunny", "echo": f"token {GITHUB_TOKEN} ok"},
        )
    ],
)

FAKES: dict[str, type[FakeServer]] = {
    "openai": FakeOpenAI,
    "anthropic": FakeAnthropic,
    "google": FakeGoogle,
}
MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5", "google": "gemini-2.5-flash"}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_provider_env(monkeypatch)
    monkeypatch.setenv("MY_SERVICE_API_KEY", ENV_SECRET)


@pytest.fixture(params=sorted(FAKES))
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def fake(provider: str) -> Iterator[FakeServer]:
    with FAKES[provider]() as server:
        yield server


def make_judge(provider: str, fake: FakeServer, cache: Path) -> Judge:
    config = JudgeConfig(
        spec=f"{provider}:{MODELS[provider]}", base_url=fake.base_url, cache_path=cache
    )
    return Judge.open(config, retry=FAST)


def leaked(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def stored_bytes(cache: Path) -> str:
    """The cache file and its write-ahead log, read raw."""
    files = [cache, cache.with_name(cache.name + "-wal")]
    return b"".join(f.read_bytes() for f in files if f.exists()).decode("utf-8", "replace")


@pytest.mark.parametrize("rubric", ["correctness", "groundedness", "answer_relevance"])
async def test_no_secret_reaches_the_provider_or_the_cache(
    provider: str, fake: FakeServer, rubric: str, tmp_path: Path
) -> None:
    fake.default = verdict({"reasoning": "Fine.", "score": 1.0})
    cache = tmp_path / "cache.db"
    judge = make_judge(provider, fake, cache)
    try:
        score = await JudgeRubric(name=rubric, judge=judge)(CASE, TRIAL)
        assert score.value == 1.0, score
        assert fake.request_count == 1
        sent = json.dumps(fake.requests, ensure_ascii=False)
        assert leaked(sent) == []
        assert REDACTED in sent  # the data was sent, masked, not left out
        assert leaked(stored_bytes(cache)) == []
        # The same trial again is a cache hit: the key is the redacted request's.
        again = await JudgeRubric(name=rubric, judge=judge)(CASE, TRIAL)
        assert again.judge is not None and again.judge.cached_samples == 1
        assert fake.request_count == 1
    finally:
        await judge.aclose()


async def test_the_judge_s_errors_and_log_lines_hold_no_secret(
    fake: FakeServer, provider: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A provider that echoes the key it was given (as OpenAI's 401 does), then a model that
    # answers with the secret instead of a verdict.
    fake.push(
        http_error(401, message=f"Incorrect API key provided: {OPENAI_KEY} ({ENV_SECRET})"),
    )
    judge = make_judge(provider, fake, tmp_path / "cache.db")
    try:
        with caplog.at_level(logging.WARNING, logger="agenteval.judge"):
            failed = await JudgeRubric(name="correctness", judge=judge)(CASE, TRIAL)
            fake.push(raw_text(f"not json {ENV_SECRET}"), raw_text(f"still not {OPENAI_KEY}"))
            malformed = await JudgeRubric(name="answer_relevance", judge=judge)(CASE, TRIAL)
    finally:
        await judge.aclose()
    assert failed.error is not None and malformed.error is not None
    shown = json.dumps([failed.model_dump(mode="json"), malformed.model_dump(mode="json")])
    assert "401" in shown or "authentication" in shown.lower()
    assert leaked(shown) == []
    assert caplog.records and leaked(caplog.text) == []


async def test_plain_words_under_a_secret_named_key_are_not_sent(
    provider: str, fake: FakeServer, tmp_path: Path
) -> None:
    # No shape gives these away once written as text: only the key they sit under does.
    trial = Trial(
        output="Done.",
        tool_calls=[
            ToolCall(
                name="login",
                arguments={"user": "ada", "password": "velvet morning lantern"},
                result={"session_cookie": "amber orchard whistle", "ok": True},
            )
        ],
    )
    fake.default = verdict({"reasoning": "Grounded.", "score": 1.0, "unsupported_claims": []})
    judge = make_judge(provider, fake, tmp_path / "cache.db")
    try:
        score = await JudgeRubric(name="groundedness", judge=judge)(CASE, trial)
    finally:
        await judge.aclose()
    assert score.value == 1.0, score
    sent = json.dumps(fake.requests, ensure_ascii=False)
    assert "velvet morning lantern" not in sent and "amber orchard whistle" not in sent
    assert '\\"password\\": \\"[REDACTED]\\"' in sent
