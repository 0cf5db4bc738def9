"""Fixtures for the eval set tests: nothing from the developer's environment reaches a judge,
and a loopback fake OpenAI server stands in for one (`tests.judge.fakes`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.judge.fakes import FakeOpenAI, clear_provider_env

from agenteval.judge.judge import JudgeConfig


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No keys, endpoints or proxies from the environment; runs and caches in a temporary
    folder."""
    clear_provider_env(monkeypatch)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def fake_judge() -> Iterator[FakeOpenAI]:
    """A fake OpenAI chat-completions server to judge with (see `judge_config`)."""
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def judge_config(fake_judge: FakeOpenAI, tmp_path: Path) -> JudgeConfig:
    """The run's judge: `openai:gpt-4o-mini` on the fake server, cache in a temporary folder."""
    return JudgeConfig(
        spec="openai:gpt-4o-mini", base_url=fake_judge.base_url, cache_path=tmp_path / "c.db"
    )
