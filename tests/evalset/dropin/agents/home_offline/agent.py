"""A callable home automation agent whose device hub refuses every connection (an
infrastructure failure: the engine retries it, and nothing is scored)."""

from __future__ import annotations

from typing import Any


def root_agent(messages: Any) -> str:
    raise ConnectionRefusedError("the device hub refused the connection")
