"""The refund desk every framework's simulated-user test plays (issue 18): a scripted user
answering one value at a time, and the policy each framework's scripted model follows.

The desk needs an order number and an email, asks for them one at a time, looks the order up
(`find_order`) once it has the number and issues the refund (`refund`) once it has both. The
policy reads every user message of the conversation the model is given: at the third turn the
user says only the email, so the refund names order 8812 only if the framework's session kept
the earlier turns (without them the desk asks for the order number again, and the user, who
answers what is asked, goes round until `max_turns`).

Order 9999 makes `find_order` raise (a tool's exception the framework lets out of the run): the
agent fails in the middle of the conversation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agenteval import EndReason, EvalCase, Trial, UserReply
from agenteval.case import Invocation, Message

ORDER = "8812"
BROKEN_ORDER = "9999"
EMAIL = "ana@example.com"
OPENING = "My order arrived broken."
SCRIPT = "tests.frameworks.users_desk:desk_user"
CRASHING_SCRIPT = "tests.frameworks.users_desk:crashing_user"


def _user(order: str, messages: list[dict[str, str]]) -> str | UserReply | None:
    if not messages:
        return OPENING
    last = messages[-1]["content"].lower() if messages[-1]["role"] == "assistant" else ""
    if "refund issued" in last:
        return UserReply(stop=EndReason.GOAL_ACHIEVED, detail="the refund was issued")
    if "order number" in last:
        return order
    if "email" in last:
        return EMAIL
    return None


def desk_user(messages: list[dict[str, str]]) -> str | UserReply | None:
    """Opens with the broken order, then answers what the desk asks, one value at a time;
    stops (goal achieved) once the refund is issued, or (None) when asked nothing it knows."""
    return _user(ORDER, messages)


def crashing_user(messages: list[dict[str, str]]) -> str | UserReply | None:
    """The same user with an order the desk's lookup fails on."""
    return _user(BROKEN_ORDER, messages)


def find_order(order_id: str) -> dict[str, Any]:
    """Look an order up by its number."""
    if order_id == BROKEN_ORDER:
        raise LookupError(f"the order database has no shard for {order_id}")
    return {"order_id": order_id, "status": "broken"}


def refund(order_id: str, email: str) -> dict[str, Any]:
    """Refund an order, confirming to the customer's email."""
    return {"reference": f"R-{order_id}", "email": email}


@dataclass(frozen=True)
class Call:
    """The model asks for a tool."""

    name: str
    arguments: dict[str, str]


@dataclass(frozen=True)
class Say:
    """The model answers."""

    text: str


def desk_step(user_texts: Sequence[str], results: Sequence[tuple[str, Any]]) -> Call | Say:
    """What the desk's model does next, given every user message of the conversation it sees
    and the tool results (name, result) since the last user message."""
    said = " ".join(user_texts)
    order = re.search(r"\b\d{4}\b", said)
    email = re.search(r"\S+@\S+\.\w+", said)
    done = dict(results)
    if order is None:
        return Say("What is your order number?")
    if email is None:
        if "find_order" not in done:
            return Call("find_order", {"order_id": order.group(0)})
        return Say(f"Order {order.group(0)} found. What is your email?")
    if "refund" not in done:
        return Call("refund", {"order_id": order.group(0), "email": email.group(0)})
    reference = re.search(r"R-[A-Z0-9]+", str(done["refund"]))
    found = reference.group(0) if reference else "none"
    return Say(f"Refund issued for order {order.group(0)} (reference {found}).")


ANSWERS = [
    "What is your order number?",
    f"Order {ORDER} found. What is your email?",
    f"Refund issued for order {ORDER} (reference R-{ORDER}).",
]
"""The desk's answers, turn by turn, to the scripted user."""


def check_played_whole(trial: Trial, sources: list[str], *, reference: str = f"R-{ORDER}") -> None:
    """The desk's conversation recorded whole: every turn with the agent's answer, one step per
    turn with its tool calls, the answers as `turn_outputs`, the goal achieved."""
    assert trial.failure is None, trial.failure
    simulation = trial.simulation
    assert simulation is not None
    answers = [*ANSWERS[:2], ANSWERS[2].replace(f"R-{ORDER}", reference)]
    assert [turn.user for turn in simulation.turns][-1] == EMAIL
    assert [turn.source for turn in simulation.turns] == sources
    assert [turn.agent for turn in simulation.turns] == answers[-len(sources) :]
    assert simulation.end_reason is EndReason.GOAL_ACHIEVED
    assert simulation.end_detail == "the refund was issued"
    assert simulation.turns_to_goal == len(sources)
    assert trial.metadata["turn_outputs"] == answers[-len(sources) :]
    assert trial.output == answers[-1]
    assert len(trial.steps) == len(sources)
    calls = [[call.name for call in step.tool_calls] for step in trial.steps]
    assert calls == [[], ["find_order"], ["refund"]][-len(sources) :]
    assert [call.arguments for call in trial.tool_calls] == [
        {"order_id": ORDER},
        {"order_id": ORDER, "email": EMAIL},
    ]


def check_failed_mid_conversation(trial: Trial) -> None:
    """The desk's lookup raised at the second turn: the trial failed there, its two turns
    recorded (the second without an answer) and the failing call kept with its error."""
    assert trial.failure is not None
    assert "no shard for 9999" in trial.failure.message
    simulation = trial.simulation
    assert simulation is not None
    assert [(turn.user, turn.agent) for turn in simulation.turns] == [
        (OPENING, ANSWERS[0]),
        (BROKEN_ORDER, None),
    ]
    assert simulation.end_reason is EndReason.TRIAL_FAILED
    assert [call.name for call in trial.tool_calls] == ["find_order"]
    (call,) = trial.tool_calls
    assert call.arguments == {"order_id": BROKEN_ORDER}
    assert call.error is not None and "no shard for 9999" in call.error


def desk_cases() -> list[EvalCase]:
    """The desk played by the scripted user: whole; after two written turns; after earlier
    messages (a case whose input is a list of messages: its last user message is the first
    turn); failing in the middle; and with `refund` mocked."""
    return [
        EvalCase(id="desk", user_simulation={"script": SCRIPT, "max_turns": 6}),
        EvalCase(
            id="desk-written",
            conversation=[Invocation(input=OPENING), Invocation(input=f"It is order {ORDER}.")],
            user_simulation={"script": SCRIPT, "max_turns": 6},
        ),
        EvalCase(
            id="desk-history",
            input=[
                Message(role="user", content=OPENING),
                Message(role="assistant", content=ANSWERS[0]),
                Message(role="user", content=ORDER),
            ],
            user_simulation={"script": SCRIPT, "max_turns": 6},
        ),
        EvalCase(id="desk-crash", user_simulation={"script": CRASHING_SCRIPT, "max_turns": 6}),
        EvalCase(
            id="desk-mocked",
            user_simulation={"script": SCRIPT, "max_turns": 6},
            tool_mocks={"refund": {"result": {"reference": "R-MOCK", "email": EMAIL}}},
        ),
    ]


def check_desk_run(trials: dict[str, Trial]) -> None:
    """The four desk cases as each framework must play them (by case id)."""
    check_played_whole(trials["desk"], ["scripted"] * 3)
    check_played_whole(trials["desk-written"], ["written", "written", "scripted"])
    assert [turn.user for turn in trials["desk-written"].simulation.turns][:2] == [
        OPENING,
        f"It is order {ORDER}.",
    ]
    history = trials["desk-history"]
    check_played_whole(history, ["written", "scripted"])
    assert [turn.user for turn in history.simulation.turns] == [ORDER, EMAIL]
    check_failed_mid_conversation(trials["desk-crash"])
    mocked = trials["desk-mocked"]
    check_played_whole(mocked, ["scripted"] * 3, reference="R-MOCK")
    assert [call.mocked for call in mocked.tool_calls] == [None, "mock"]


def chat_step(messages: Sequence[dict[str, Any]]) -> Call | Say:
    """`desk_step` over a conversation in Chat Completions' shape (user, assistant with
    `tool_calls`, tool messages answering them by `tool_call_id`)."""
    user_texts: list[str] = []
    results: list[tuple[str, Any]] = []
    names: dict[str, str] = {}
    for message in messages:
        if message.get("role") == "user":
            user_texts.append(str(message.get("content")))
            results = []
        for call in message.get("tool_calls") or ():
            names[call["id"]] = call["function"]["name"]
        if message.get("role") == "tool":
            results.append((names.get(message["tool_call_id"], ""), message.get("content")))
    return desk_step(user_texts, results)


def play_turn(messages: Sequence[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """A whole turn of the desk as a service plays it, its tools run in place: the answer,
    and the calls made (agenteval's trial format). `messages`: the conversation so far as
    `{"role", "content"}` (the service's own tool calls are not in it: each turn starts
    from the user's messages). Raises what a tool raises."""
    user_texts = [str(m["content"]) for m in messages if m.get("role") == "user"]
    results: list[tuple[str, Any]] = []
    calls: list[dict[str, Any]] = []
    tools = {"find_order": find_order, "refund": refund}
    while True:
        step = desk_step(user_texts, results)
        if isinstance(step, Say):
            return step.text, calls
        result = tools[step.name](**step.arguments)
        calls.append({"name": step.name, "arguments": step.arguments, "result": result})
        results.append((step.name, result))
