"""Scripted users: Python functions that play the customer, for offline runs and CI.

Each is called with the conversation so far (a list of `{"role", "content"}` messages, oldest
first; the agent's are `assistant`) and returns the customer's next message, a `UserReply`
stop with its reason, or None to stop. Each answers what the agent asks when it asks it, so
it keeps working whatever order the agent asks in; a fixed list of turns cannot.
"""

from __future__ import annotations

from agenteval import EndReason, UserReply

ORDER, EMAIL = "8812", "ana@example.com"


def customer(messages: list[dict[str, str]]) -> str | UserReply:
    """Answers exactly what is asked, one value at a time."""
    return _reply(messages, order=ORDER, email=EMAIL)


def chatty_customer(messages: list[dict[str, str]]) -> str | UserReply:
    """Answers in whole sentences, with more than was asked."""
    return _reply(
        messages,
        order=f"Sure, it's order #{ORDER}, the teapot I bought last week.",
        email=f"It should be {EMAIL}, the one I always use.",
    )


def typo_customer(messages: list[dict[str, str]]) -> str | UserReply:
    """Mistypes the email the first time, and corrects it when the agent says so."""
    corrected = any("does not match" in m["content"] for m in messages if m["role"] == "assistant")
    return _reply(messages, order=ORDER, email=EMAIL if corrected else "ana@exmaple.com")


def _reply(messages: list[dict[str, str]], *, order: str, email: str) -> str | UserReply:
    last = messages[-1]["content"].lower() if messages else ""
    if not messages:
        return "My order arrived broken."
    if "refund issued" in last:
        return UserReply(stop=EndReason.GOAL_ACHIEVED, detail="the refund was confirmed")
    if "order number" in last:
        return order
    if "email" in last:
        return email
    return UserReply(stop=EndReason.USER_GAVE_UP, detail=f"unexpected: {last[:80]}")
