"""`StateMirror`: the environment state and an ADK session's state kept one, each side's changes
carried to the other, whatever the values hold."""

from __future__ import annotations

import threading
from typing import Any

from agenteval.agents.environment import ToolEnvironment
from agenteval.agents.frameworks.adk_environment import StateMirror


class Uncomparable:
    """A value whose `!=` raises (as a numpy array's truth value does)."""

    def __ne__(self, other: object) -> bool:
        raise ValueError("the truth value is ambiguous")


def test_each_sides_changes_reach_the_other_and_only_those() -> None:
    env = ToolEnvironment()
    held = env.state  # a tool may hold the mapping agenteval.state() gave it
    mirror = StateMirror(env)
    mirror.seed({"user": "ann", "cart": ["tea"]})
    assert held == {"user": "ann", "cart": ["tea"]}

    session: dict[str, Any] = {"user": "ann", "cart": ["tea"], "visits": 1}
    mirror.pull(session)  # the session gained a key: the environment sees it
    assert held["visits"] == 1

    held["cart"].append("milk")  # a nested change, and a new key
    held["paid"] = True
    written: dict[str, Any] = {}
    mirror.push(written)
    assert written == {"cart": ["tea", "milk"], "paid": True}
    mirror.push(written := {})
    assert written == {}  # pushed once

    mirror.seed({"final": 1})
    assert held == {"final": 1}


def test_values_that_cannot_be_compared_or_copied_are_carried_as_changed() -> None:
    env = ToolEnvironment()
    mirror = StateMirror(env)
    lock = threading.Lock()
    odd = Uncomparable()
    mirror.seed({"lock": lock})
    assert env.state["lock"] is lock  # no copy of a lock: the object itself
    mirror.pull({"lock": lock, "odd": odd})
    assert isinstance(env.state["odd"], Uncomparable)
    written: dict[str, Any] = {}
    mirror.push(written)
    assert "odd" in written  # it cannot say it is unchanged
