"""A scripted user and agents whose every message names its conversation, for the tests of
concurrent simulated conversations: a message that reaches another conversation shows it."""

from __future__ import annotations

import asyncio
import random
import threading

from agenteval import EndReason, UserReply, UserRequest

TURNS = 4
"""User messages per conversation (then the user stops, goal achieved)."""


def tag(case_id: str, trial: int) -> str:
    return f"{case_id}/t{trial}"


def said(case_id: str, trial: int, n: int) -> str:
    """The `n`-th message (from 0) of the user of `case_id`'s trial `trial`."""
    return f"{tag(case_id, trial)} says {n}"


def echo(user_texts: list[str]) -> str:
    """What the agents answer: every user message they were given, joined."""
    return " | ".join(user_texts)


def tagged_user(messages: list[dict[str, str]], request: UserRequest) -> str | UserReply:
    """Says its case and trial in each message; checks that every message it is shown is its
    own conversation's (else it gives up, naming what it saw)."""
    own = tag(request.case_id, request.trial)
    strangers = [m["content"] for m in messages if own not in m["content"]]
    if strangers:
        return UserReply(stop=EndReason.USER_GAVE_UP, detail=f"saw {strangers!r}")
    turns = sum(1 for m in messages if m["role"] == "user")
    if turns >= TURNS:
        return UserReply(stop=EndReason.GOAL_ACHIEVED)
    return said(request.case_id, request.trial, turns)


class TaggedSimulator:
    """A `User` object of the run: answers as `tagged_user`, keeping every request it got."""

    label = "test:tagged"

    def __init__(self) -> None:
        self.requests: list[UserRequest] = []
        self._lock = threading.Lock()

    async def reply(self, request: UserRequest) -> UserReply | None:
        await asyncio.sleep(random.uniform(0, 0.002))  # let the conversations interleave
        with self._lock:
            self.requests.append(request)
        value = tagged_user(request.messages, request)
        return UserReply(message=value) if isinstance(value, str) else value


async def echo_agent(messages: list[dict[str, str]]) -> str:
    """A callable agent: answers with every user message of the conversation it is given."""
    await asyncio.sleep(random.uniform(0, 0.002))
    return echo([m["content"] for m in messages if m["role"] == "user"])


def breaks_second(messages: list[dict[str, str]]) -> str:
    """Opens the conversation, then raises: a scripted user that breaks mid-conversation."""
    if not messages:
        return "hello"
    raise RuntimeError("the script is broken")


def counting(messages: list[dict[str, str]]) -> str:
    """Never stops: says how many messages it was shown."""
    return f"message {len(messages)}"
