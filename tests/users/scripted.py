"""Scripted users and a multi-turn agent for the seam's tests (importable by reference)."""

from __future__ import annotations

import re
from typing import Any

from agenteval import EndReason, UserReply

ANSWERS = {"order": "8812", "email": "ana@example.com"}


def refund_user(messages: list[dict[str, str]]) -> str | UserReply | None:
    """Answers what the agent asks, one value at a time; stops when the refund is confirmed."""
    last = messages[-1]["content"].lower() if messages else ""
    if not messages:
        return "My order arrived broken."
    if "refund issued" in last:
        return UserReply(stop=EndReason.GOAL_ACHIEVED, detail="the refund was issued")
    for key, value in ANSWERS.items():
        if key in last:
            return value
    return None


def raising_user(messages: list[dict[str, str]]) -> str:
    raise RuntimeError("the script is broken")


def chatty_user(messages: list[dict[str, str]]) -> str:
    return f"message {len(messages)}"


def asking_agent(messages: Any) -> str:
    """Asks for the order number, then the email, one at a time, then issues the refund."""
    said = " ".join(m["content"] for m in messages if m["role"] == "user")
    if not re.search(r"\b\d{4}\b", said):
        return "What is your order number?"
    if "@" not in said:
        return "What is your email?"
    return "Refund issued for order 8812."
