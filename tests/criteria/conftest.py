"""Fixtures for the criteria tests: no provider keys from the environment, the judge cache in a
temporary folder, and loopback fake judges (`tests.judge.fakes`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from tests.judge.fakes import FakeGoogle, FakeOpenAI, clear_provider_env

from agenteval.engine.trials import RetryPolicy
from agenteval.judge.judge import Judge, JudgeConfig

FAST = RetryPolicy(max_retries=2, initial_wait_s=0.01, max_wait_s=0.05)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No keys, endpoints or proxies from the developer's environment; the judge cache (which
    a criterion's own judge keeps under `.agenteval/`) lands in a temporary folder."""
    clear_provider_env(monkeypatch)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def google(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGoogle]:
    """A fake Gemini server that the default judge (`google:gemini-2.5-flash`) reaches through
    the environment, as a user's key and endpoint would."""
    with FakeGoogle() as fake:
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        yield fake


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fake OpenAI chat-completions server."""
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
async def judge(fake_openai: FakeOpenAI, tmp_path: Path) -> AsyncIterator[Judge]:
    """A judge (`openai:gpt-4o-mini`) on the fake OpenAI server, with quick retries."""
    config = JudgeConfig(
        spec="openai:gpt-4o-mini", base_url=fake_openai.base_url, cache_path=tmp_path / "c.db"
    )
    opened = Judge.open(config, retry=FAST)
    yield opened
    await opened.aclose()
