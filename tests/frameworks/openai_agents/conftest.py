"""The loopback server every test of the OpenAI Agents SDK adapter talks to (one per test
session: concurrent trials and tests tell their requests apart by the `#N` tag)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("agents")

from .loopback import ScriptedServer, scripted_server


@pytest.fixture(scope="session")
def server() -> Iterator[ScriptedServer]:
    with scripted_server() as running:
        yield running


@pytest.fixture(autouse=True)
def _no_real_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing may reach a hosted model: a client built without a base URL would fail on this.
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
