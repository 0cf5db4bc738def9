"""LangChain runnables that are no graph, sync code off the event loop, interrupts, and the
objects agenteval refuses as agents (each with one clear message)."""

from __future__ import annotations

import asyncio
import operator
import threading
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt
from tests.frameworks.langgraph.scripted_chat import TOOLS, ScriptedChat, add, respond
from typing_extensions import TypedDict

from agenteval import EvalCase, evaluate
from agenteval.agents.frameworks import as_framework_agent
from agenteval.agents.frameworks.langgraph import GraphAgent
from agenteval.case import Invocation
from agenteval.errors import AgentLoadError
from agenteval.run import TrialResult
from agenteval.trace import FailureCause


def _on_an_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def results(agent: Any, cases: list[EvalCase], tmp_path: Path, **options: Any) -> list[TrialResult]:
    return evaluate(agent, cases, store=tmp_path / "runs.db", **options).results


def test_a_sync_runnable_over_messages_runs_off_the_loop_with_the_history(
    tmp_path: Path,
) -> None:
    seen: list[tuple[int, bool]] = []

    def reply(state: dict[str, Any]) -> AIMessage:
        messages: Sequence[BaseMessage] = state["messages"]
        seen.append((len(messages), _on_an_event_loop()))
        answer = respond(messages)
        answer.usage_metadata = {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}
        answer.response_metadata = {"model": "lambda-1"}
        return answer

    case = EvalCase(id="talk", conversation=[Invocation(input="hello"), Invocation(input="recall")])
    (result,) = results(RunnableLambda(reply), [case], tmp_path)
    trial = result.trial
    assert trial.metadata["turn_outputs"] == ["echo: hello", "you first said: hello"]
    # The second turn got the first turn's user message and answer, then its own.
    assert [length for length, _ in seen] == [1, 3]
    assert not any(on_loop for _, on_loop in seen)
    assert [(c.model, c.usage.total_tokens) for c in trial.model_calls] == [("lambda-1", 5)] * 2
    assert trial.tool_specs == {}
    assert trial.node_visits == []


def test_a_prompt_piped_into_a_chat_model_is_an_agent(tmp_path: Path) -> None:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "be brief"), MessagesPlaceholder("messages")]
    )
    chain = prompt | ScriptedChat(respond=respond)
    (result,) = results(chain, [EvalCase(id="c", input="hi there")], tmp_path)
    assert result.trial.output == "echo: hi there"
    assert result.trial.model_calls[0].usage.input_tokens == 4  # "be brief" and "hi there"


def test_a_runnable_returning_only_its_new_messages_keeps_the_conversation(
    tmp_path: Path,
) -> None:
    def reply(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [respond(state["messages"])]}

    case = EvalCase(id="t", conversation=[Invocation(input="hello"), Invocation(input="recall")])
    (result,) = results(RunnableLambda(reply), [case], tmp_path)
    assert result.trial.metadata["turn_outputs"] == ["echo: hello", "you first said: hello"]


def test_a_runnable_returning_no_messages_fails_its_trial_saying_what_to_return(
    tmp_path: Path,
) -> None:
    (result,) = results(RunnableLambda(lambda state: 42), [EvalCase(id="c", input="hi")], tmp_path)
    failure = result.trial.failure
    assert failure is not None
    assert failure.cause is FailureCause.AGENT_ERROR
    assert "returned int" in failure.message
    assert "{'messages': [...]}" in failure.message


def test_sync_graph_nodes_of_concurrent_trials_run_in_threads_of_their_own(
    tmp_path: Path,
) -> None:
    # Two trials meet at a barrier inside a sync node: were the node run on the event loop,
    # the second could never arrive (the barrier breaks after its timeout, failing both).
    meeting = threading.Barrier(2, timeout=60)

    def wait_for_the_other(state: MessagesState) -> dict[str, Any]:
        meeting.wait()
        return {"messages": [AIMessage(content="met")]}

    builder = StateGraph(MessagesState)
    builder.add_node("meet", wait_for_the_other)
    builder.add_edge(START, "meet")
    builder.add_edge("meet", END)
    graph = builder.compile(name="meeting")
    cases = [EvalCase(id="a", input="one"), EvalCase(id="b", input="two")]
    done = results(graph, cases, tmp_path, concurrency=2)
    assert [(r.trial.failure, r.trial.output) for r in done] == [(None, "met"), (None, "met")]
    assert all(r.trial.node_visits == ["meet"] for r in done)
    # An AI message a node writes itself is no model call.
    assert all(r.trial.model_calls == [] for r in done)


def test_a_model_call_whose_message_the_graph_does_not_keep_still_counts(
    tmp_path: Path,
) -> None:
    model = ScriptedChat(respond=respond)

    async def route(state: MessagesState) -> dict[str, Any]:
        # A classifier's call: its answer steers the graph and never enters the state.
        await model.ainvoke([HumanMessage("classify: " + str(state["messages"][-1].content))])
        return {}

    async def answer(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("route", route)
    builder.add_node("answer", answer)
    builder.add_edge(START, "route")
    builder.add_edge("route", "answer")
    graph = builder.compile(name="routed")
    (result,) = results(graph, [EvalCase(id="c", input="hi")], tmp_path)
    trial = result.trial
    assert trial.output == "echo: hi"
    assert [c.usage.input_tokens for c in trial.model_calls] == [2, 1]
    assert trial.usage.input_tokens == 3


def test_an_interrupt_ends_the_turn_and_is_recorded(tmp_path: Path) -> None:
    def ask(state: MessagesState) -> dict[str, Any]:
        approved = interrupt({"question": "approve the refund?"})
        return {"messages": [AIMessage(content=f"approved: {approved}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    (result,) = results(graph, [EvalCase(id="c", input="refund me")], tmp_path, retries=0)
    assert result.trial.metadata["interrupts"] == [{"question": "approve the refund?"}]
    assert result.trial.failure is not None
    assert result.trial.failure.cause is FailureCause.NO_RESPONSE


class Question(TypedDict):
    question: str


class PlainQuestion(typing.TypedDict):  # no schema from it on Python < 3.12: the state says
    question: str


def _plain_question_graph() -> Any:
    builder = StateGraph(PlainQuestion)
    builder.add_node("answer", lambda state: state)
    builder.add_edge(START, "answer")
    return builder.compile(name="plain")


def _question_graph() -> Any:
    builder = StateGraph(Question)
    builder.add_node("answer", lambda state: state)
    builder.add_edge(START, "answer")
    return builder.compile(name="qa")


@pytest.mark.parametrize(
    ("make", "says", "hint"),
    [
        (lambda: add, "'add' is a LangChain tool, not an agent", "create_react_agent"),
        (lambda: ScriptedChat(respond=respond), "chat model, not an agent", "create_react_agent"),
        (
            lambda: ScriptedChat(respond=respond).bind_tools(TOOLS),
            "ScriptedChat is a LangChain chat model",
            "create_react_agent",
        ),
        (
            _question_graph,
            "the graph 'qa' takes ['question'], not 'messages'",
            "MessagesState",
        ),
        (_plain_question_graph, "the graph 'plain' takes ['question']", "MessagesState"),
        (
            lambda: ChatPromptTemplate.from_messages([("user", "{question}")]),
            "takes ['question'], not 'messages'",
            "MessagesPlaceholder",
        ),
    ],
    ids=["tool", "chat-model", "bound-model", "graph-over-other-state", "typed-dict", "prompt"],
)
def test_a_runnable_that_cannot_be_an_agent_is_refused_naming_the_fix(
    tmp_path: Path, make: Any, says: str, hint: str
) -> None:
    with pytest.raises(AgentLoadError) as caught:
        as_framework_agent(make())
    assert says in caught.value.message
    assert hint in (caught.value.hint or "")
    with pytest.raises(AgentLoadError):
        results(make(), [EvalCase(id="c", input="hi")], tmp_path)


def test_an_agent_is_named_by_its_graph_or_runnable() -> None:
    graph = StateGraph(MessagesState)
    graph.add_node("n", lambda state: {})
    graph.add_edge(START, "n")
    assert GraphAgent.of(graph.compile()).reference == "langgraph:LangGraph"
    assert GraphAgent.of(graph.compile(name="triage")).reference == "langgraph:triage"
    assert GraphAgent.of(RunnableLambda(lambda s: s, name="mine")).name == "mine"


def test_tools_run_by_a_node_of_its_own_are_known_from_the_models_bound_tools(
    tmp_path: Path,
) -> None:
    # No ToolNode: the graph's own node runs the tools. Their schemas come from what the
    # chat model was bound with.
    model = ScriptedChat(respond=respond).bind_tools(TOOLS)
    by_name = {t.name: t for t in TOOLS}

    async def assistant(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    def run_tools(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        replies = []
        for call in getattr(last, "tool_calls", []):
            try:
                content, status = str(by_name[call["name"]].invoke(call["args"])), "success"
            except Exception as exc:
                content, status = f"failed: {exc}", "error"
            replies.append(
                ToolMessage(content, name=call["name"], tool_call_id=call["id"], status=status)
            )
        return {"messages": replies}

    builder = StateGraph(MessagesState)
    builder.add_node("assistant", assistant)
    builder.add_node("run_tools", run_tools)
    builder.add_edge(START, "assistant")
    builder.add_conditional_edges(
        "assistant", lambda s: "run_tools" if s["messages"][-1].tool_calls else END
    )
    builder.add_edge("run_tools", "assistant")
    graph = builder.compile(name="own_tools")
    assert GraphAgent.of(graph).tool_specs() == {}
    cases = [EvalCase(id="bad", input="bad args"), EvalCase(id="good", input="add 2 2")]
    done = {r.case.id: r for r in results(graph, cases, tmp_path)}
    good, bad = done["good"], done["bad"]
    assert set(good.trial.tool_specs) == {"get_weather", "add", "charge"}
    assert good.trial.tool_specs["add"].parameters["properties"] == {
        "a": {"type": "integer"},
        "b": {"type": "integer"},
    }
    assert good.trial.output == "results: add=4"
    assert good.scores["tool_arguments_valid"].passed is True
    assert bad.scores["tool_arguments_valid"].passed is False
    assert bad.trial.tool_calls[0].error is not None
    assert good.trial.node_visits == ["assistant", "run_tools", "assistant"]


def test_a_chain_over_a_model_bound_to_tools_records_the_calls_it_asked_for(
    tmp_path: Path,
) -> None:
    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("messages")])
    chain = prompt | ScriptedChat(respond=respond).bind_tools(TOOLS)
    (result,) = results(chain, [EvalCase(id="w", input="weather Oslo")], tmp_path)
    trial = result.trial
    assert [(c.name, c.arguments, c.result) for c in trial.tool_calls] == [
        ("get_weather", {"city": "Oslo"}, None)
    ]
    assert set(trial.tool_specs) == {"get_weather", "add", "charge"}
    # The model asked for a tool and said nothing: no answer.
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.NO_RESPONSE


class AppendOnly(TypedDict):
    messages: Annotated[list[BaseMessage], operator.add]


@pytest.mark.parametrize("checkpointer", [None, InMemorySaver()], ids=["history", "checkpointer"])
def test_a_checkpointed_thread_gets_only_the_new_user_message_each_turn(
    tmp_path: Path, checkpointer: InMemorySaver | None
) -> None:
    # A plain list channel appends whatever it is sent: sending the history again to a graph
    # that keeps it would double it.
    model = ScriptedChat(respond=respond)

    async def reply(state: AppendOnly) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(AppendOnly)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    graph = builder.compile(checkpointer=checkpointer)
    case = EvalCase(
        id="t",
        conversation=[
            Invocation(input="hello"),
            Invocation(input="hi"),
            Invocation(input="recall"),
        ],
    )
    (result,) = results(graph, [case], tmp_path)
    trial = result.trial
    assert trial.metadata["turn_outputs"] == ["echo: hello", "echo: hi", "you first said: hello"]
    assert len(trial.model_calls) == 3
    if checkpointer is not None:
        state = graph.get_state({"configurable": {"thread_id": trial.metadata["thread_id"]}})
        assert [m.content for m in state.values["messages"]] == [
            "hello",
            "echo: hello",
            "hi",
            "echo: hi",
            "recall",
            "you first said: hello",
        ]


def test_a_functional_api_entrypoint_over_messages_is_an_agent(tmp_path: Path) -> None:
    @entrypoint(checkpointer=InMemorySaver())
    def desk(inputs: dict[str, Any], *, previous: list[BaseMessage] | None = None) -> Any:
        conversation = [*(previous or []), *inputs["messages"]]
        reply = respond(conversation)
        conversation.append(reply)
        return entrypoint.final(value={"messages": conversation}, save=conversation)

    case = EvalCase(id="t", conversation=[Invocation(input="hello"), Invocation(input="recall")])
    (result,) = results(desk, [case], tmp_path)
    assert result.trial.metadata["turn_outputs"] == ["echo: hello", "you first said: hello"]
    assert result.trial.node_visits == ["desk"]


def test_a_graph_bound_to_its_configuration_keeps_it_beside_the_trials_thread(
    tmp_path: Path,
) -> None:
    def greet(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        settings = config["configurable"]
        return {"messages": [AIMessage(f"hello {settings['user']} in {settings['thread_id']}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("greet", greet)
    builder.add_edge(START, "greet")
    graph = builder.compile().with_config(configurable={"user": "ada"})
    (result,) = results(graph, [EvalCase(id="c", input="hi")], tmp_path)
    assert result.trial.output == f"hello ada in {result.trial.metadata['thread_id']}"


def test_a_runnable_with_only_a_sync_invoke_runs_off_the_loop(tmp_path: Path) -> None:
    class SyncOnly(Runnable[dict[str, Any], dict[str, Any]]):
        """A runnable of one's own that implements `invoke` only."""

        def invoke(self, input: dict[str, Any], config: Any = None, **kwargs: Any) -> Any:
            on_loop = _on_an_event_loop()
            return {"messages": [*input["messages"], AIMessage(f"on the loop: {on_loop}")]}

    agent = as_framework_agent(SyncOnly())
    assert isinstance(agent, GraphAgent)
    assert not agent.is_graph
    (result,) = results(SyncOnly(), [EvalCase(id="c", input="hi")], tmp_path)
    assert result.trial.output == "on the loop: False"
