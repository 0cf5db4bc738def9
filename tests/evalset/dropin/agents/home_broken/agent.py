"""A callable home automation agent that crashes on every turn."""

from __future__ import annotations

from typing import Any


def root_agent(messages: Any) -> str:
    raise RuntimeError("the device hub crashed")
