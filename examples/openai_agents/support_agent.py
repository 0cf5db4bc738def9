"""Acme Parcels' support agents, built with the OpenAI Agents SDK: a triage agent that tracks
packages and hands refunds to a refunds agent, with an input guardrail that refuses questions
about passwords.

agenteval runs `triage_agent` as it is (`agent: support_agent.py:triage_agent` in
agenteval.yaml): no wrapper, no decorator. To run it on a real model, give each agent
`model="gpt-4.1-mini"` (say) instead of the scripted one, and set OPENAI_API_KEY.
"""

from __future__ import annotations

import re
from typing import Any

from scripted_model import Call, ScriptedModel, Seen  # scripted_model.py, next to this file

from agents import (
    Agent,
    GuardrailFunctionOutput,
    RunContextWrapper,
    function_tool,
    input_guardrail,
)

PACKAGES = {
    "TRK123": {"city": "Lyon", "arrives": "Friday"},
    "TRK456": {"city": "Porto", "arrives": "Monday"},
}
ORDERS = {
    "A100": {"amount": 25.0, "refundable": True},
    "B200": {"amount": 80.0, "refundable": False, "why": "it was bought more than 30 days ago"},
    "C300": {"amount": 19.9, "refundable": True},
}


@function_tool
def track_package(tracking_id: str) -> dict[str, str]:
    """Where a package is, and when it arrives."""
    if tracking_id not in PACKAGES:
        raise LookupError(f"no package {tracking_id}")
    return PACKAGES[tracking_id]


@function_tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """An order's amount and whether it can be refunded."""
    return ORDERS[order_id]


@function_tool
def refund_order(order_id: str, amount: float) -> str:
    """Refund an order (the amount in euros)."""
    return f"refunded {amount:.2f} EUR on {order_id}"


@input_guardrail
async def no_passwords(context: RunContextWrapper[Any], agent: Agent[Any], text: Any) -> Any:
    """Support never talks about passwords."""
    asked = "password" in str(text).lower()
    return GuardrailFunctionOutput(output_info={"password": asked}, tripwire_triggered=asked)


# --- the scripted model's rules, one per agent (what a real model would decide)


def triage_rule(seen: Seen) -> list[Call] | str:
    question = seen.question
    if "refund" in question.lower():
        return [Call("transfer_to_refunds")]
    tracking = re.findall(r"TRK\d+", question)
    if tracking and not seen.called("track_package"):
        # Two packages: two calls at once, which the SDK runs in parallel.
        return [Call("track_package", {"tracking_id": tid}) for tid in tracking]
    if tracking:
        lines = []
        for tid, result in zip(tracking, seen.results["track_package"], strict=False):
            if "error" in result.lower():
                lines.append(f"I could not find package {tid}.")
            else:
                info = PACKAGES[tid]
                lines.append(f"Package {tid} is in {info['city']} and arrives {info['arrives']}.")
        return " ".join(lines)
    return "I can track packages and help with refunds."


def refunds_rule(seen: Seen) -> list[Call] | str:
    found = re.search(r"\b[A-Z]\d{3}\b", seen.question)
    if found is None:
        return "Which order should I refund?"
    order_id = found.group()
    if not seen.called("lookup_order"):
        return [Call("lookup_order", {"order_id": order_id})]
    order = ORDERS[order_id]
    if not order["refundable"]:
        return f"Order {order_id} cannot be refunded: {order['why']}."
    attempts = seen.results.get("refund_order", [])
    if not attempts:
        # A planted mistake: for C300 the model writes the amount with its currency, which
        # the tool's schema (a number) refuses; it reads the error and tries again.
        amount: Any = f"{order['amount']} EUR" if order_id == "C300" else order["amount"]
        return [Call("refund_order", {"order_id": order_id, "amount": amount})]
    if "error" in attempts[-1].lower():
        return [Call("refund_order", {"order_id": order_id, "amount": order["amount"]})]
    return f"Refunded {order['amount']:.2f} EUR on order {order_id}."


refunds_agent = Agent(
    name="refunds",
    instructions="You refund orders: look the order up first, then refund it if you can.",
    model=ScriptedModel(refunds_rule),
    tools=[lookup_order, refund_order],
)

triage_agent = Agent(
    name="triage",
    instructions="You are Acme Parcels' support. Track packages; hand refunds to refunds.",
    model=ScriptedModel(triage_rule),
    tools=[track_package],
    handoffs=[refunds_agent],
    input_guardrails=[no_passwords],
)
