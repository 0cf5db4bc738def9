"""A scripted user whose every message is a phrase no agent answer repeats, so a test can tell
the user's words in a judge's prompt; and a multi-turn agent that asks for one value a turn."""

from __future__ import annotations

import re
from typing import Any

from agenteval import EndReason, UserReply, UserRequest

FIRST = "Parcel came smashed, help please (alpha-phrase)."
ORDER = "It is order 4417 (bravo-phrase)."
EMAIL = "Write to ana@example.com (charlie-phrase)."
SAID = (FIRST, ORDER, EMAIL)
"""What the user says, in order, when the agent asks for the order, then the email."""
GOAL = "Get a refund for order 4417, which arrived broken."


def replying_user(messages: list[dict[str, str]]) -> str | UserReply | None:
    """Opens, answers the agent's one question a turn, stops once the refund is issued."""
    if not messages:
        return FIRST
    last = messages[-1]["content"].lower()
    if "refund issued" in last:
        return UserReply(stop=EndReason.GOAL_ACHIEVED, detail="the refund was issued")
    if "order number" in last:
        return ORDER
    if "email" in last:
        return EMAIL
    return None


def refund_agent(messages: Any) -> dict[str, Any]:
    """Asks for the order number, then the email; then issues the refund with a tool call."""
    said = " ".join(m["content"] for m in messages if m["role"] == "user")
    if not re.search(r"\b\d{4}\b", said):
        return {"output": "What is your order number?"}
    if "@" not in said:
        return {"output": "Thanks. What is your email?"}
    call = {
        "name": "issue_refund",
        "arguments": {"order": "4417"},
        "result": {"status": "refund issued"},
    }
    return {"output": "Refund issued for order 4417.", "tool_calls": [call]}


class CountingUser:
    """The run's user simulator (the `agents.users.User` shape), counting its replies: plays
    `replying_user`'s part."""

    label = "test:counting"

    def __init__(self) -> None:
        self.calls = 0

    async def reply(self, request: UserRequest) -> UserReply | None:
        self.calls += 1
        found = replying_user(request.messages)
        return UserReply(message=found) if isinstance(found, str) else found


class MarkingUser:
    """The run's user simulator marking each message with its trial (`[t3]`), so a test can
    tell one trial's conversation from another's."""

    label = "test:marking"

    async def reply(self, request: UserRequest) -> UserReply | None:
        found = replying_user(request.messages)
        if isinstance(found, str):
            return UserReply(message=f"{found} [t{request.trial}]")
        return found


def silent_user(messages: list[dict[str, str]]) -> None:
    """Has nothing to add to a case's written turns."""
    return None
