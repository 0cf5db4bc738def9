"""An agent module with ADK's `get_agent_async` instead of a `root_agent`: the agent and an exit
stack, closed once the evaluation is over (CLOSED records it)."""

from __future__ import annotations

import contextlib
from typing import Any

from tests.evalset.dropin.agents.home_plain import agent as home

CLOSED: list[bool] = []


async def get_agent_async() -> tuple[Any, contextlib.AsyncExitStack]:
    stack = contextlib.AsyncExitStack()
    stack.callback(CLOSED.append, True)
    return home.root_agent, stack
