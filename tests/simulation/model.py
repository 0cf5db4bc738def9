"""A scripted simulator model for the loopback OpenAI-compatible server (`tests.judge.fakes`):
it reads the fenced goal and conversation of each request, as a model would, and answers with
the simulator's structured reply. Also the agents the simulated users talk to."""

from __future__ import annotations

import re
import threading
from typing import Any

from tests.judge.fakes import Item, verdict

from agenteval import EvalCase


def sim_reply(message: str = "", action: str = "message", reasoning: str = "ok") -> Item:
    """One structured reply of the simulator's model."""
    return verdict(
        {"reasoning": reasoning, "action": action, "message": message},
        input_tokens=100,
        output_tokens=20,
    )


def block(body: dict[str, Any], name: str) -> str | None:
    """The text of the fenced block `name` in a request's user message (None: not there)."""
    user = body["messages"][-1]["content"]
    found = re.search(
        rf"<<<BEGIN {name} (\w+)>>>\n(.*?)\n<<<END {name} \1>>>", user, flags=re.DOTALL
    )
    return found.group(2) if found else None


def last_agent_message(body: dict[str, Any]) -> str:
    """What the agent said last, as the simulator is shown it."""
    conversation = block(body, "conversation") or ""
    said = [part for part in conversation.split("\n\n") if part.startswith("AGENT: ")]
    return said[-1].removeprefix("AGENT: ") if said else ""


def is_simulator_request(body: dict[str, Any]) -> bool:
    """Whether a request is the simulator's (its schema's name), not a judge's."""
    return bool(body.get("response_format", {}).get("json_schema", {}).get("name") == "user_reply")


class RefundUser:
    """Plays a user who wants a refund for the order its goal names, answering one question at
    a time with what the goal holds; stops when the refund is issued. A `handler`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.asked = 0

    def __call__(self, body: dict[str, Any]) -> Item | None:
        with self.lock:
            self.asked += 1
        goal = block(body, "goal") or ""
        order = re.search(r"order (\d+)", goal)
        email = re.search(r"\S+@\S+\w", goal)
        last = last_agent_message(body).lower()
        if block(body, "conversation") is None:
            return sim_reply("My order arrived broken.")
        if "refund issued" in last:
            return sim_reply(action="goal_achieved", reasoning="the refund was issued")
        if "order number" in last and order:
            return sim_reply(order.group(1))
        if "email" in last and email:
            return sim_reply(email.group(0))
        return sim_reply(action="user_gave_up", reasoning="the agent goes in circles")


def refund_case(case_id: str = "refund", order: str = "8812", **simulation: Any) -> EvalCase:
    """A case whose user is simulated toward a refund for `order`."""
    return EvalCase(
        id=case_id,
        expected_output=f"Refund issued for order {order}.",
        user_simulation={
            "goal": f"Get a refund for order {order}, which arrived broken. Email: ana@example.com",
            "persona": "Impatient; gives one value at a time, only when asked.",
            "max_turns": 6,
            **simulation,
        },
    )


def numbered_agent(messages: Any) -> str:
    """Asks for the order number, then the email, one at a time, then issues the refund for
    the number it was given (so a trial shows whose conversation it held)."""
    said = " ".join(m["content"] for m in messages if m["role"] == "user")
    number = re.search(r"\b(\d{4,})\b", said)
    if number is None:
        return "What is your order number?"
    if "@" not in said:
        return "What is your email?"
    return f"Refund issued for order {number.group(1)}."


SECRET = "sk-proj-Zq81mXvT4kLpW29sQeRt7uYiOp0aSdFg"


def leaky_agent(messages: Any) -> str:
    """The `numbered_agent`, with an API key pasted in its first answer."""
    answer = numbered_agent(messages)
    if len([m for m in messages if m["role"] == "user"]) == 1:
        return f"{answer} (debug: key {SECRET})"
    return answer
