"""Runs with simulated conversations for the report tests: an agent that asks for one value at
a time and looks the order up with a `@tool`, a `User` object that reports its model's tokens
and cost (as the run's simulator model would), and scripted users."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agenteval import (
    EndReason,
    EvalCase,
    ModelCall,
    Usage,
    UserReply,
    UserRequest,
    evaluate,
    tool,
)
from agenteval.run import Run

CALL_USD = 0.0015
"""What each of `PricedUser`'s replies costs."""
CALL_USAGE = Usage(input_tokens=120, output_tokens=15)


@tool
def look_up_broken_order(number: str) -> dict[str, str]:
    """The order's status."""
    return {"order": number, "status": "broken on arrival"}


def refund_agent(messages: Any) -> str:
    """Asks for the order number, looks it up, asks for the email, then issues the refund.
    Told `hopeless`, says it cannot help; told `crash`, raises."""
    if isinstance(messages, str):  # a case with a text input and no simulated user
        messages = [{"role": "user", "content": messages}]
    said = " ".join(m["content"] for m in messages if m["role"] == "user")
    if "crash" in said:
        raise RuntimeError("the agent broke mid-conversation")
    if "hopeless" in said:
        return "I cannot help with that."
    number = re.search(r"\b\d{4}\b", said)
    if number is None:
        return "What is your order number?"
    if "@" not in said:
        look_up_broken_order(number.group())
        return "Found it. What is your email?"
    return "Refund issued for order 8812."


class PricedUser:
    """A simulated user as the run's simulator model is: each reply reports its model call's
    tokens and cost. Answers the agent's questions; stops when the refund is issued, or says
    the agent cannot help."""

    label = "openai:gpt-4o-mini"

    async def reply(self, request: UserRequest) -> UserReply | None:
        last = request.messages[-1]["content"] if request.messages else ""
        spent: dict[str, Any] = {
            "model_calls": [ModelCall(model="gpt-4o-mini", usage=CALL_USAGE)],
            "cost_usd": CALL_USD,
        }
        if not request.messages:
            return UserReply(message=request.simulation.goal or "Hello", **spent)
        if "Refund issued" in last:
            return UserReply(stop=EndReason.GOAL_ACHIEVED, detail="refund confirmed", **spent)
        if "cannot help" in last:
            return UserReply(stop=EndReason.AGENT_CANNOT_HELP, detail="it said it cannot", **spent)
        if "order number" in last:
            return UserReply(message="It is 8812.", **spent)
        return UserReply(message="ana@example.com", **spent)


def gave_up_user(messages: list[dict[str, str]]) -> str | UserReply:
    """Gives up as soon as the agent asks for anything."""
    if len(messages) > 1:
        return UserReply(stop=EndReason.USER_GAVE_UP, detail="too many questions")
    return "I want a refund."


def quiet_user(messages: list[dict[str, str]]) -> str | None:
    """Says one thing, then nothing more (`user_stopped`)."""
    return None if messages else "Refund please."


def looping_user(messages: list[dict[str, str]]) -> str:
    """Never gives what is asked (the conversation runs to `max_turns`)."""
    return "I do not remember."


def crashing_user(messages: list[dict[str, str]]) -> str:
    """Makes the agent fail on its second turn (`trial_failed`)."""
    return "crash" if messages else "Refund please."


SCRIPTS = "tests.report.simulated_runs"

CASES = [
    EvalCase(id="priced", user_simulation={"goal": "Refund for order 8812", "max_turns": 6}),
    EvalCase(
        id="written-first",
        input="My order 8812 arrived broken",
        user_simulation={"goal": "Get the refund", "persona": "Terse."},
    ),
    EvalCase(id="hopeless", user_simulation={"goal": "A hopeless request", "max_turns": 4}),
    EvalCase(id="scripted-gives-up", user_simulation={"script": f"{SCRIPTS}:gave_up_user"}),
    EvalCase(id="scripted-quiet", user_simulation={"script": f"{SCRIPTS}:quiet_user"}),
    EvalCase(
        id="scripted-loops",
        user_simulation={"script": f"{SCRIPTS}:looping_user", "max_turns": 3},
    ),
    EvalCase(id="scripted-crash", user_simulation={"script": f"{SCRIPTS}:crashing_user"}),
    EvalCase(id="plain", input="Refund order 8812, email ana@example.com"),
]
"""One case per end reason (`priced` and `written-first` both reach the goal), and one case
without a simulated user."""


def simulated_run(store: Path, cases: list[EvalCase] | None = None, **options: Any) -> Run:
    """`refund_agent` on `cases` (default `CASES`), `PricedUser` as the run's simulator."""
    return evaluate(
        refund_agent,
        CASES if cases is None else cases,
        store=store,
        user_simulator=PricedUser(),
        retries=0,
        **options,
    )
