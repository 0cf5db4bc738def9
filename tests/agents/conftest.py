"""Fixtures for the agent tests: tool-calling fake model servers, and no provider environment."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.agents.fakes_http import FakeAgentService
from tests.agents.fakes_toolcalls import ToolCallingAnthropic, ToolCallingGoogle, ToolCallingOpenAI
from tests.judge.conftest import clean_env as clean_env  # re-exported fixture

__all__ = ["clean_env"]


@pytest.fixture
def openai_fake(clean_env: None) -> Iterator[ToolCallingOpenAI]:
    """A chat-completions server on 127.0.0.1 that scripts tool calls."""
    with ToolCallingOpenAI() as fake:
        yield fake


@pytest.fixture
def anthropic_fake(clean_env: None) -> Iterator[ToolCallingAnthropic]:
    """A Messages server on 127.0.0.1 that scripts tool_use blocks."""
    with ToolCallingAnthropic() as fake:
        yield fake


@pytest.fixture
def google_fake(clean_env: None) -> Iterator[ToolCallingGoogle]:
    """A generateContent server on 127.0.0.1 that scripts function calls."""
    with ToolCallingGoogle() as fake:
        yield fake


@pytest.fixture
def agent_service(clean_env: None) -> Iterator[FakeAgentService]:
    """An agent service on 127.0.0.1 (`agent_url`), scripted like the fake model servers."""
    with FakeAgentService() as service:
        yield service
