"""The refund agent: plain Python, deterministic and offline (a rule-based stand-in for an LLM
agent, as in examples/quickstart).

It needs two values to refund an order, the order number and the email address on the order,
and asks for them one at a time: the order number first, then the email. Each user message is
read as the answer to the question the agent asked just before it (as a form-filling agent
does), so a user who answers a question before it is asked confuses it, and a conversation
written in advance breaks the moment the agent asks in another order.

Called once per user turn with the conversation so far (a list of `{"role", "content"}`
messages, oldest first), it returns its next message.
"""

from __future__ import annotations

import re
from typing import Any

import agenteval

__all__ = ["handle"]

ASK_ORDER = "What is your order number?"
ASK_EMAIL = "What is the email address on the order?"

ORDERS = {"8812": {"email": "ana@example.com", "item": "teapot", "total_eur": 34}}
"""The shop's orders (a stand-in for its order system)."""

_ORDER = re.compile(r"\b(\d{4})\b")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


@agenteval.tool
def find_order(order_id: str) -> dict[str, Any]:
    """The order `order_id`, or an error when there is none."""
    order = ORDERS.get(order_id)
    if order is None:
        return {"error": f"no order {order_id}"}
    return {"order_id": order_id, **order}


@agenteval.tool
def issue_refund(order_id: str, email: str) -> dict[str, Any]:
    """Refund the order in full, once the email matches the order's (offline: nothing is
    paid out)."""
    order = ORDERS.get(order_id)
    if order is None or order["email"] != email.lower():
        return {"order_id": order_id, "status": "refused", "reason": "the email does not match"}
    return {"order_id": order_id, "status": "refunded", "refunded_eur": order["total_eur"]}


def handle(messages: list[dict[str, str]]) -> str:
    """The agent's next message in the conversation so far."""
    order_id, email, answered = _answers(messages)
    if order_id is None:
        return _again(messages, ASK_ORDER)
    if answered == "order":  # looked up once, when given
        order = find_order(order_id)
        if "error" in order:
            return f"I cannot find order {order_id}. {ASK_ORDER}"
    if email is None:
        return _again(messages, ASK_EMAIL)
    refund = issue_refund(order_id, email)
    if refund["status"] != "refunded":
        return f"That email does not match order {order_id}. {ASK_EMAIL}"
    return f"Refund issued for order {order_id}; confirmation sent to {email}."


def _answers(messages: list[dict[str, str]]) -> tuple[str | None, str | None, str | None]:
    """The order number and email, each read from the user's answer to the agent's question
    for it (the latest answer wins), and which of them the last message gave."""
    order_id = email = answered = None
    asked = ""
    for message in messages:
        answered = None
        if message["role"] == "assistant":
            asked = message["content"]
        elif asked.endswith(ASK_ORDER) and (found := _ORDER.search(message["content"])):
            order_id, email, answered = found.group(1), None, "order"  # its email asked again
        elif asked.endswith(ASK_EMAIL) and (found := _EMAIL.search(message["content"])):
            email, answered = found.group(0), "email"
    return order_id, email, answered


def _again(messages: list[dict[str, str]], question: str) -> str:
    """The question, said again with why when the user's last answer did not answer it."""
    last_asked = next((m["content"] for m in reversed(messages) if m["role"] == "assistant"), "")
    if last_asked.endswith(question):
        what = "an order number (4 digits)" if question == ASK_ORDER else "an email address"
        return f"Sorry, I need {what}. {question}"
    if len(messages) == 1:
        return f"Sorry to hear that, I can help with a refund. {question}"
    return question
