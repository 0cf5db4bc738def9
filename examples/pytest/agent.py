"""A small support agent for the pytest example: a knowledge-base search and an order lookup,
with a deterministic stand-in for the model, so the example runs offline."""

from __future__ import annotations

import agenteval

_ARTICLES = [
    {"id": "refunds", "text": "Refunds are accepted within 30 days of delivery."},
    {"id": "shipping", "text": "Standard shipping takes 3 to 5 business days."},
    {"id": "warranty", "text": "Every product has a 2-year warranty."},
]
_ORDERS = {"A-1001": {"order": "A-1001", "status": "shipped", "carrier": "DHL"}}


@agenteval.tool
def search_help(query: str) -> list[dict[str, str]]:
    """Search the help centre; returns the matching articles."""
    words = {word.strip("?.,").lower() for word in query.split()}
    return [a for a in _ARTICLES if words & set(a["text"].lower().replace(".", "").split())]


@agenteval.tool
def order_status(order_id: str) -> dict[str, str]:
    """The status of an order, by its id (A-1234)."""
    if order_id not in _ORDERS:
        raise LookupError(f"no order {order_id}")
    return _ORDERS[order_id]


def answer(question: str) -> str:
    """Answer a customer's question, using the tools as a model would."""
    order = next((w.strip("?.,") for w in question.split() if w.startswith("A-")), None)
    if order is not None:
        status = order_status(order)
        return f"Order {order} has {status['status']} with {status['carrier']}."
    hits = search_help(question)
    if not hits:
        return "I don't know; let me put you through to a person."
    return hits[0]["text"]
