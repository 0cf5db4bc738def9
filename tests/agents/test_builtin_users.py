"""The built-in agent played by a simulated (scripted) user: its real tool-calling loop against a
loopback Chat Completions server whose model follows the desk's policy
(`tests/frameworks/users_desk.py`) over the whole conversation each request carries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.agents.fakes_toolcalls import ToolCallingOpenAI, answer, call, tool_calls
from tests.frameworks.users_desk import (
    BROKEN_ORDER,
    OPENING,
    Say,
    chat_step,
    check_desk_run,
    desk_cases,
)
from tests.judge.fakes import http_error

import agenteval
from agenteval.agents import tools as agenteval_tools
from agenteval.agents.builtin import builtin_agent
from agenteval.store import RunStore
from agenteval.trace import Trial

TOOLS = '''
import agenteval
from tests.frameworks import users_desk


@agenteval.tool
def find_order(order_id: str) -> dict:
    """Look an order up by its number."""
    return users_desk.find_order(order_id)


@agenteval.tool
def refund(order_id: str, email: str) -> dict:
    """Refund an order, confirming to the customer's email."""
    return users_desk.refund(order_id, email)
'''


def desk_model(body: dict[str, Any]) -> Any:
    """The desk's model over the request's messages. The built-in agent tells the model a
    tool's error and goes on; the model then fails the request (400), which ends the run."""
    messages = body["messages"]
    if any(m.get("role") == "tool" and "no shard" in str(m.get("content")) for m in messages):
        return http_error(400, message=f"the model cannot go on: no shard for {BROKEN_ORDER}")
    step = chat_step(messages)
    if isinstance(step, Say):
        return answer(step.text)
    return tool_calls(call(step.name, **step.arguments))


@pytest.fixture
def desk_agent(openai_fake: ToolCallingOpenAI, tmp_path: Path) -> Iterator[Any]:
    # The desk's tools keep the names every framework's desk uses (`find_order`, `refund`), and
    # `@agenteval.tool` declares them in the process-wide registry, where other tests declare
    # tools of those names: the registry's entries are put back as they were after the test.
    registry = agenteval_tools._REGISTRY
    names = ("find_order", "refund")
    saved = {name: registry[name] for name in names if name in registry}
    (tmp_path / "desk_tools.py").write_text(TOOLS, encoding="utf-8")
    openai_fake.handler = desk_model
    spec = {
        "model": "openai:fake-llm",
        "base_url": openai_fake.base_url,
        "system_prompt": "Refund broken orders.",
        "tools": "desk_tools.py",
    }
    yield builtin_agent(spec, base_dir=tmp_path)
    for name in names:
        registry.pop(name, None)
    registry.update(saved)


def test_the_desk_is_played_whole_by_a_scripted_user(
    desk_agent: Any, openai_fake: ToolCallingOpenAI, tmp_path: Path
) -> None:
    run = agenteval.evaluate(desk_agent, desk_cases(), store=tmp_path / "runs.db", retries=0)
    with RunStore(tmp_path / "runs.db", create=False) as store:
        trials: dict[str, Trial] = {r.case.id: r.trial for r in store.iter_results(run.run_id)}
    # The crash: the tool's error told to the model (the call keeps it), whose 400 then ends
    # the trial in the middle of the conversation.
    check_desk_run(trials)
    # Each request carries the conversation so far: the last one of "desk" holds every turn.
    desk_requests = [
        r["messages"]
        for r in openai_fake.requests
        if "ana@example.com" in str(r) and "It is order" not in str(r)
    ]
    users = [m["content"] for m in desk_requests[-1] if m["role"] == "user"]
    assert users == [OPENING, "8812", "ana@example.com"]
