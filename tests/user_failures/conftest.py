"""Fixtures for the user simulator's tests: a loopback OpenAI-compatible server playing the
simulator's model (`tests.judge.fakes`), and an environment with no provider key."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.judge.fakes import FakeOpenAI, clear_provider_env
from tests.simulation.model import RefundUser


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """The simulator's model: a `RefundUser` behind a fake OpenAI server on 127.0.0.1."""
    clear_provider_env(monkeypatch)
    with FakeOpenAI(handler=RefundUser()) as server:
        yield server
