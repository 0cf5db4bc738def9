"""A LangGraph agent played by a simulated (scripted) user: a real `create_react_agent` over a
chat model following the desk's policy (`tests/frameworks/users_desk.py`), with a checkpointer
(the graph keeps the thread: each turn sends only the user's new message) and without one (each
turn sends the conversation so far), through `agenteval.evaluate`, read back from the store."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolNode, create_react_agent
from tests.frameworks.langgraph.scripted_chat import ScriptedChat
from tests.frameworks.users_desk import (
    ANSWERS,
    OPENING,
    Say,
    check_desk_run,
    desk_cases,
    desk_step,
    find_order,
    refund,
)

import agenteval
from agenteval.store import RunStore
from agenteval.trace import Trial


def desk_respond(messages: Sequence[BaseMessage]) -> AIMessage:
    """The desk's model over the messages the graph gives it."""
    user_texts: list[str] = []
    results: list[tuple[str, Any]] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            user_texts.append(str(message.content))
            results = []
        elif isinstance(message, ToolMessage):
            results.append((message.name or "", message.content))
    step = desk_step(user_texts, results)
    if isinstance(step, Say):
        return AIMessage(content=step.text)
    call = {"name": step.name, "args": step.arguments, "id": f"call-{len(user_texts)}"}
    return AIMessage(content="", tool_calls=[call])


def desk_graph(checkpointer: InMemorySaver | None) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent moved to langchain (not installed)
        return create_react_agent(
            ScriptedChat(respond=desk_respond),
            # The lookup's exception leaves the run, as the graph's author chose.
            ToolNode([tool(find_order), tool(refund)], handle_tool_errors=False),
            checkpointer=checkpointer,
            name="desk",
        )


@pytest.mark.parametrize("checkpointed", [True, False], ids=["checkpointer", "no-checkpointer"])
def test_the_desk_is_played_whole_by_a_scripted_user(tmp_path: Path, checkpointed: bool) -> None:
    saver = InMemorySaver() if checkpointed else None
    graph = desk_graph(saver)
    run = agenteval.evaluate(graph, desk_cases(), store=tmp_path / "runs.db", retries=0)
    with RunStore(tmp_path / "runs.db", create=False) as store:
        trials: dict[str, Trial] = {r.case.id: r.trial for r in store.iter_results(run.run_id)}
    check_desk_run(trials)
    assert trials["desk"].node_visits == ["agent"] + ["tools", "agent"] * 2
    if saver is not None:
        # The checkpointer, not agenteval, kept the conversation: the trial's thread holds
        # every turn, in order, once.
        config = {"configurable": {"thread_id": trials["desk"].metadata["thread_id"]}}
        kept = graph.get_state(config).values["messages"]
        humans = [m.content for m in kept if isinstance(m, HumanMessage)]
        assert humans == [OPENING, "8812", "ana@example.com"]
        answers = [m.content for m in kept if isinstance(m, AIMessage) and m.content]
        assert answers == ANSWERS
