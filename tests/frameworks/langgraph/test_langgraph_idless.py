"""Graphs whose messages carry no id: a state kept in a plain list (`operator.add`, not
`add_messages`, which gives each message one), its model node rebuilding the model's message
(`AIMessage(content=..., tool_calls=...)`, or a copy without its id). Each message is still
read once, however often the run streams it (every `values` chunk, a worker's memory streaming
its earlier turns again, a graph run without a checkpointer being sent the whole conversation
each turn), and a call made again (the same question in two turns, the model giving the same
call ids) counts each time it was made."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from tests.frameworks.langgraph.scripted_chat import TOOLS, ScriptedChat, respond

from agenteval import EvalCase, evaluate
from agenteval.case import Invocation
from agenteval.trace import Trial

# The same question twice: the scripted model asks the same call, with the same call id.
TURNS = ["weather Paris and Oslo", "weather Rome", "weather Rome", "add 2 3"]
CALLS = [["Paris", "Oslo"], ["Rome"], ["Rome"], ["add"]]


class ListState(TypedDict):
    messages: Annotated[list[AnyMessage], operator.add]


def idless_graph(*, checkpointer: Any = None, keep_usage: bool = False) -> Any:
    """A model node and a `ToolNode` over a plain list of messages, the model's message rebuilt
    without its id (`keep_usage`: a copy keeping its usage and metadata, so it looks like a
    model call no callback reported)."""
    model = ScriptedChat(respond=respond).bind_tools(TOOLS)

    async def assistant(state: ListState) -> dict[str, Any]:
        out = await model.ainvoke(state["messages"])
        if keep_usage:
            rebuilt = out.model_copy(update={"id": None})
        else:
            rebuilt = AIMessage(content=out.content, tool_calls=out.tool_calls)
        return {"messages": [rebuilt]}

    builder = StateGraph(ListState)
    builder.add_node("assistant", assistant)
    builder.add_node("tools", ToolNode(TOOLS, handle_tool_errors=True))
    builder.add_edge(START, "assistant")
    builder.add_conditional_edges("assistant", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "assistant")
    return builder.compile(checkpointer=checkpointer, name="idless")


def supervisor_of(worker: Any) -> Any:
    """A parent graph whose node runs `worker` on the user's message, keeping its last one."""

    async def delegate(state: MessagesState) -> dict[str, Any]:
        done = await worker.ainvoke(
            {"messages": [HumanMessage(str(state["messages"][-1].content))]}
        )
        return {"messages": [done["messages"][-1]]}

    builder = StateGraph(MessagesState)
    builder.add_node("delegate", delegate)
    builder.add_edge(START, "delegate")
    builder.add_edge("delegate", END)
    return builder.compile(name="supervisor", checkpointer=InMemorySaver())


def _trial(graph: Any, store: Path) -> Trial:
    case = EvalCase(id="w", conversation=[Invocation(input=turn) for turn in TURNS])
    (result,) = evaluate(graph, [case], store=store).results
    return result.trial


def _check(trial: Trial) -> None:
    assert trial.failure is None
    assert [
        [c.arguments.get("city", c.name) for c in step.tool_calls] for step in trial.steps
    ] == CALLS
    assert trial.steps[2].tool_calls[0].result == '{"city": "Rome", "celsius": 14}'
    assert len(trial.model_calls) == 8  # two a turn
    assert trial.metadata["turn_outputs"][3] == "results: add=5"


def test_with_a_checkpointer(tmp_path: Path) -> None:
    _check(_trial(idless_graph(checkpointer=InMemorySaver()), tmp_path / "r.db"))


def test_without_a_checkpointer_the_later_turns_keep_their_calls(tmp_path: Path) -> None:
    # Before, the conversation sent again each turn made the new messages' places look read:
    # every turn after the first lost its calls.
    _check(_trial(idless_graph(), tmp_path / "r.db"))


def test_a_worker_with_memory_of_its_own_gives_each_call_once_across_turns(
    tmp_path: Path,
) -> None:
    # Before, the worker's state streamed its earlier turns again, read afresh each turn: the
    # second turn had the first's calls again, the fourth all of them.
    _check(_trial(supervisor_of(idless_graph(checkpointer=True)), tmp_path / "r.db"))


def test_a_copy_keeping_its_usage_is_not_a_second_model_call(tmp_path: Path) -> None:
    # The callback reported the model call; the copy in the state (no id) is the same call.
    _check(_trial(idless_graph(checkpointer=InMemorySaver(), keep_usage=True), tmp_path / "r.db"))


def test_a_runnable_saying_the_same_again_answers_each_turn(tmp_path: Path) -> None:
    """A runnable returning only its new message, without an id: the same answer in two turns
    is each turn's answer (its next turn is sent the conversation with ids of agenteval's)."""
    from langchain_core.runnables import RunnableLambda

    def reply(state: dict[str, Any]) -> dict[str, Any]:
        made = respond(state["messages"])
        return {"messages": [AIMessage(content=made.content, tool_calls=made.tool_calls)]}

    turns = [Invocation(input="hello"), Invocation(input="hello")]
    case = EvalCase(id="t", conversation=turns)
    (result,) = evaluate(RunnableLambda(reply), [case], store=tmp_path / "r.db").results
    assert result.trial.failure is None
    assert result.trial.metadata["turn_outputs"] == ["echo: hello", "echo: hello"]


class Watched:
    """A value whose text is counted each time something writes it (`repr`)."""

    written = 0

    def __repr__(self) -> str:
        Watched.written += 1
        return "Watched()"


@tool
def note(value: Any) -> str:
    """Note a value."""
    return "noted"


def long_idless_graph(steps: int) -> Any:
    """A plain list of messages (no ids) growing by one a step for `steps` steps: a first call
    carrying a `Watched` value, then a call a step, then the answer."""

    def assistant(state: ListState) -> dict[str, Any]:
        done = len(state["messages"])
        if done >= steps:
            return {"messages": [AIMessage(content=f"done after {done} messages")]}
        value = Watched() if done == 1 else done
        call = {"name": "note", "args": {"value": value}, "id": f"call-{done}"}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    builder = StateGraph(ListState)
    builder.add_node("assistant", assistant)
    builder.add_node("tools", ToolNode([note]))
    builder.add_edge(START, "assistant")
    builder.add_conditional_edges("assistant", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "assistant")
    return builder.compile(name="long").with_config(recursion_limit=steps + 10)


def test_a_long_idless_state_writes_each_message_a_few_times_not_once_a_step(
    tmp_path: Path,
) -> None:
    # Before, every `values` chunk wrote every message of the state again to tell it from the
    # others (its `_said` text): the first call's value was written 123 times in 120 steps, and
    # a graph of 800 id-less messages spent 10 of its 13.6 seconds doing so.
    Watched.written = 0
    case = EvalCase(id="long", input="go")
    (result,) = evaluate(long_idless_graph(120), [case], store=tmp_path / "r.db").results
    trial = result.trial
    assert trial.failure is None
    assert trial.output == "done after 121 messages"
    assert len(trial.tool_calls) == 60
    assert trial.tool_calls[0].arguments == {"value": "Watched()"}
    assert Watched.written <= 10
