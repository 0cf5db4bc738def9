"""A graph whose node runs another agent and keeps only its last message in the parent's state
(a supervisor's worker, LangGraph's multi-agent pattern, `langgraph-supervisor`'s default
`output_mode="last_message"`): the worker's tool calls happened, and the trial keeps them,
read from the worker's own state as the run streams it (`subgraphs=True`); the answer is still
the parent's last message, and nothing is counted twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from tests.frameworks.langgraph.scripted_chat import MODEL, react_agent

from agenteval import EvalCase, evaluate
from agenteval.case import Invocation

WEATHER = [
    ("get_weather", {"city": "Paris"}, "call-0", '{"city": "Paris", "celsius": 15}', None),
    ("get_weather", {"city": "Oslo"}, "call-1", '{"city": "Oslo", "celsius": 14}', None),
]


def supervisor(*, sync_node: bool) -> Any:
    """A parent graph whose `delegate` node runs the react worker on the user's message and
    keeps the worker's last message only."""
    worker = react_agent(name="worker")

    async def delegate(state: MessagesState) -> dict[str, Any]:
        task = HumanMessage(str(state["messages"][-1].content))
        done = await worker.ainvoke({"messages": [task]})
        return {"messages": [done["messages"][-1]]}

    def delegate_sync(state: MessagesState) -> dict[str, Any]:
        done = worker.invoke({"messages": [HumanMessage(str(state["messages"][-1].content))]})
        return {"messages": [done["messages"][-1]]}

    builder = StateGraph(MessagesState)
    builder.add_node("delegate", delegate_sync if sync_node else delegate)
    builder.add_edge(START, "delegate")
    builder.add_edge("delegate", END)
    return builder.compile(name="supervisor")


@pytest.mark.parametrize("sync_node", [False, True], ids=["async", "sync"])
def test_a_workers_tool_calls_are_the_trials_though_the_parent_keeps_its_answer_only(
    tmp_path: Path, sync_node: bool
) -> None:
    case = EvalCase(id="w", input="weather Paris and Oslo", expected_tools=["get_weather"])
    done = evaluate(supervisor(sync_node=sync_node), [case], store=tmp_path / "runs.db")
    (result,) = done.results
    trial = result.trial
    assert [(c.name, c.arguments, c.id, c.result, c.error) for c in trial.tool_calls] == WEATHER
    assert trial.output == (
        'results: get_weather={"city": "Paris", "celsius": 15}; '
        'get_weather={"city": "Oslo", "celsius": 14}'
    )
    assert [c.model for c in trial.model_calls] == [MODEL, MODEL]
    assert trial.node_visits == ["delegate"]
    assert result.scores["tool_selection"].passed is True
    assert result.scores["tool_execution"].passed is True


def test_a_subgraph_sharing_the_parents_state_counts_each_call_once(tmp_path: Path) -> None:
    builder = StateGraph(MessagesState)
    builder.add_node("worker", react_agent(name="worker"))
    builder.add_edge(START, "worker")
    builder.add_edge("worker", END)
    graph = builder.compile(name="parent")
    turns = [Invocation(input="weather Paris and Oslo"), Invocation(input="add 2 3")]
    case = EvalCase(id="w", conversation=turns)
    (result,) = evaluate(graph, [case], store=tmp_path / "runs.db").results
    trial = result.trial
    assert [(c.name, c.id) for c in trial.tool_calls] == [
        ("get_weather", "call-0"),
        ("get_weather", "call-1"),
        ("add", "call-add"),
    ]
    assert trial.tool_calls[2].result == "5"
    assert len(trial.model_calls) == 4
    assert trial.metadata["turn_outputs"][1] == "results: add=5"


def test_a_worker_with_memory_of_its_own_gives_each_call_once_across_turns(
    tmp_path: Path,
) -> None:
    """A worker compiled with `checkpointer=True` keeps its own thread across the parent's turns:
    its state at the second turn still holds the first turn's calls, made once."""
    worker = react_agent(name="worker", checkpointer=True)

    async def delegate(state: MessagesState) -> dict[str, Any]:
        task = HumanMessage(str(state["messages"][-1].content))
        done = await worker.ainvoke({"messages": [task]})
        return {"messages": [done["messages"][-1]]}

    builder = StateGraph(MessagesState)
    builder.add_node("delegate", delegate)
    builder.add_edge(START, "delegate")
    builder.add_edge("delegate", END)
    graph = builder.compile(name="supervisor", checkpointer=InMemorySaver())
    turns = [Invocation(input="weather Paris and Oslo"), Invocation(input="weather Rome")]
    (result,) = evaluate(
        graph, [EvalCase(id="w", conversation=turns)], store=tmp_path / "r.db"
    ).results
    trial = result.trial
    assert [[c.arguments["city"] for c in step.tool_calls] for step in trial.steps] == [
        ["Paris", "Oslo"],
        ["Rome"],
    ]
    assert len(trial.model_calls) == 4
