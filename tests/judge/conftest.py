"""Fixtures for the judge tests: loopback fake model servers (see `fakes`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# `tests.judge.fakes` imports because pyproject's `pythonpath = ["."]` puts the root on sys.path.
from tests.judge.fakes import FakeAnthropic, FakeGoogle, FakeOpenAI, clear_provider_env


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fake OpenAI chat-completions server on 127.0.0.1; `base_url` ends in ``/v1``."""
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A fake Anthropic Messages server on 127.0.0.1."""
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture
def fake_google() -> Iterator[FakeGoogle]:
    """A fake Gemini generateContent server on 127.0.0.1."""
    with FakeGoogle() as fake:
        yield fake


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No provider keys, base URLs or proxies from the environment; loopback never proxied."""
    clear_provider_env(monkeypatch)
