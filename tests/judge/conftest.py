"""Fixtures for the judge tests: loopback fake model servers (see `fakes`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# `tests.judge.fakes` imports because pyproject's `pythonpath = ["."]` puts the root on sys.path.
from tests.judge.fakes import FakeAnthropic, FakeGoogle, FakeOpenAI


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


# Environment variables the provider SDKs read. `clean_env` removes them so that a developer's
# own keys, endpoints or proxies never reach a test: every request goes to a loopback fake.
_SDK_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ADMIN_KEY",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_CUSTOM_HEADERS",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CUSTOM_HEADERS",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_ENTERPRISE",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No provider keys, base URLs or proxies from the environment; loopback never proxied."""
    for name in _SDK_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
