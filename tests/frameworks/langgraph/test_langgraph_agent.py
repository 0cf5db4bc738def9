"""LangGraph agents run by agenteval: a real `create_react_agent` and a hand-built `StateGraph`
over a scripted chat model, through `evaluate()`, their trials read back from the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from tests.frameworks.langgraph.scripted_chat import MODEL, hand_built_graph, react_agent

from agenteval import EvalCase, evaluate
from agenteval.agents.frameworks import as_framework_agent
from agenteval.case import Invocation, Message
from agenteval.pricing import ModelPrice, PriceTable
from agenteval.run import Run, TrialResult
from agenteval.trace import FailureCause, Usage


def run(agent: Any, cases: list[EvalCase], tmp_path: Path, **options: Any) -> Run:
    return evaluate(agent, cases, store=tmp_path / "runs.db", **options)


def only(run: Run) -> TrialResult:
    (result,) = run.results
    return result


@pytest.mark.parametrize("build", [react_agent, hand_built_graph])
def test_parallel_tool_calls_pair_with_their_results_and_usage_is_summed(
    tmp_path: Path, build: Any
) -> None:
    done = run(build(), [EvalCase(id="w", input="weather Paris and Rome")], tmp_path)
    result = only(done)
    trial = result.trial
    assert [(c.name, c.arguments, c.id, c.result, c.error) for c in trial.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "call-0", '{"city": "Paris", "celsius": 15}', None),
        ("get_weather", {"city": "Rome"}, "call-1", '{"city": "Rome", "celsius": 14}', None),
    ]
    # The answer's content blocks, joined.
    assert trial.output == (
        'results: get_weather={"city": "Paris", "celsius": 15}; '
        'get_weather={"city": "Rome", "celsius": 14}'
    )
    assert [(c.model, c.provider) for c in trial.model_calls] == [(MODEL, "scripted")] * 2
    first, second = (c.usage for c in trial.model_calls)
    assert first == Usage(input_tokens=4, output_tokens=6, cached_tokens=0, reasoning_tokens=1)
    assert second.cached_tokens == 2
    assert trial.usage == first + second
    expected_nodes = ["agent", "tools", "agent"]
    if build is hand_built_graph:
        expected_nodes = ["triage", "assistant", "tools", "assistant"]
    assert trial.node_visits == expected_nodes
    assert set(trial.tool_specs) == {"get_weather", "add", "charge"}
    assert trial.tool_specs["add"].parameters == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }
    assert trial.tool_specs["add"].description == "Add two integers."
    assert trial.failure is None
    assert result.scores["tool_arguments_valid"].passed is True
    assert result.scores["tool_execution"].passed is True
    assert done.info.target.endswith(f"langgraph:{build().name}")


def test_a_model_that_reports_no_usage_has_an_unknown_cost_not_a_free_one(
    tmp_path: Path,
) -> None:
    """A chat model that reports no `usage_metadata` (a streaming ChatOpenAI without
    `stream_usage=True`): its calls were 0 tokens and $0, so a cost gate passed any agent
    on it. Now each call's usage is "not recorded", and the run's cost is missing."""
    prices = PriceTable({MODEL: ModelPrice(input=1.0, output=4.0)})
    done = run(
        react_agent(report_usage=False),
        [EvalCase(id="w", input="weather Paris and Rome")],
        tmp_path,
        prices=prices,
    )
    trial = only(done).trial
    assert [c.usage_recorded for c in trial.model_calls] == [False, False]
    assert "stream_usage=True" in trial.not_recorded["usage"]
    assert done.summary.cost.agent_usd is None
    assert done.summary.cost.models_without_usage == [MODEL]
    reported = run(react_agent(), [EvalCase(id="w", input="weather Paris")], tmp_path / "r")
    assert reported.results[0].trial.not_recorded == {}
    assert [c.usage_recorded for c in reported.results[0].trial.model_calls] == [True, True]


@pytest.mark.parametrize("checkpointer", [None, InMemorySaver()], ids=["history", "checkpointer"])
def test_every_turn_of_a_conversation_runs_in_one_thread(
    tmp_path: Path, checkpointer: InMemorySaver | None
) -> None:
    graph = react_agent(checkpointer=checkpointer)
    case = EvalCase(
        id="talk",
        conversation=[
            Invocation(input="hello"),
            Invocation(input="add 2 3"),
            Invocation(input="recall"),
        ],
    )
    trial = only(run(graph, [case], tmp_path)).trial
    # `recall` answers from the first turn: the thread kept it (or agenteval sent it again).
    assert trial.metadata["turn_outputs"] == [
        "echo: hello",
        "results: add=5",
        "you first said: hello",
    ]
    assert [[c.name for c in s.tool_calls] for s in trial.steps] == [[], ["add"], []]
    # Only what each turn added is read: the history sent again is not recorded twice.
    assert [(c.name, c.arguments, c.result) for c in trial.tool_calls] == [
        ("add", {"a": 2, "b": 3}, "5")
    ]
    assert len(trial.model_calls) == 4
    if checkpointer is not None:
        state = graph.get_state({"configurable": {"thread_id": trial.metadata["thread_id"]}})
        humans = [m.content for m in state.values["messages"] if m.type == "human"]
        assert humans == ["hello", "add 2 3", "recall"]


@pytest.mark.parametrize("checkpointer", [None, InMemorySaver()], ids=["history", "checkpointer"])
def test_a_case_given_as_messages_starts_the_thread_with_them(
    tmp_path: Path, checkpointer: InMemorySaver | None
) -> None:
    graph = react_agent(checkpointer=checkpointer)
    case = EvalCase(
        id="messages",
        input=[
            Message(role="system", content="be brief"),
            Message(role="user", content="I am Ada"),
            Message(role="assistant", content="Hello Ada"),
            Message(role="user", content="recall"),
        ],
    )
    trial = only(run(graph, [case], tmp_path)).trial
    assert trial.output == "you first said: I am Ada"
    # The assistant message of the input is history, not a model call of this trial.
    assert len(trial.model_calls) == 1
    if checkpointer is not None:
        state = graph.get_state({"configurable": {"thread_id": trial.metadata["thread_id"]}})
        assert [m.type for m in state.values["messages"]] == [
            "system",
            "human",
            "ai",
            "human",
            "ai",
        ]


def test_a_tool_error_the_tool_node_catches_is_the_calls_error(tmp_path: Path) -> None:
    result = only(run(react_agent(), [EvalCase(id="c", input="charge 5")], tmp_path))
    (call,) = result.trial.tool_calls
    assert (call.name, call.arguments, call.result) == ("charge", {"amount": 5}, None)
    assert call.error is not None
    assert "card declined for 5" in call.error
    assert result.trial.output == "results: charge failed"
    assert result.scores["tool_execution"].passed is False


def test_a_tool_error_that_propagates_fails_the_trial_and_keeps_the_calls(tmp_path: Path) -> None:
    # LangGraph's ToolNode re-raises a tool's own exception by default (it catches only bad
    # arguments): the run raises, and the trial keeps what happened before.
    graph = react_agent(handle_tool_errors=False)
    result = only(run(graph, [EvalCase(id="c", input="charge 7")], tmp_path, retries=0))
    trial = result.trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.AGENT_ERROR
    assert "card declined for 7" in trial.failure.message
    assert [(c.name, c.arguments, c.result) for c in trial.tool_calls] == [
        ("charge", {"amount": 7}, None)
    ]
    assert [c.model for c in trial.model_calls] == [MODEL]
    assert trial.node_visits == ["agent"]


def test_arguments_the_schema_refuses_fail_tool_arguments_valid(tmp_path: Path) -> None:
    cases = [EvalCase(id="bad", input="bad args"), EvalCase(id="good", input="add 1 2")]
    results = {r.case.id: r for r in run(react_agent(), cases, tmp_path).results}
    bad = results["bad"]
    assert bad.scores["tool_arguments_valid"].passed is False
    assert "add" in (bad.scores["tool_arguments_valid"].reason or "")
    # LangChain refused the arguments too: the tool never ran, and the model was told why.
    (call,) = bad.trial.tool_calls
    assert call.error is not None
    assert results["good"].scores["tool_arguments_valid"].passed is True


def _expected_from_thread(messages: list[Any]) -> dict[str, Any]:
    """What the graph's own final state says the trial did."""
    calls = []
    results: dict[str, tuple[Any, str | None]] = {}
    usage = Usage()
    answers = []
    for message in messages:
        if isinstance(message, AIMessage):
            calls += [(c["name"], c["args"], c["id"]) for c in message.tool_calls]
            meta = message.usage_metadata or {}
            usage = usage + Usage(
                input_tokens=meta.get("input_tokens", 0),
                output_tokens=meta.get("output_tokens", 0),
                cached_tokens=meta.get("input_token_details", {}).get("cache_read", 0),
                reasoning_tokens=meta.get("output_token_details", {}).get("reasoning", 0),
            )
            answers.append(message.text)
        elif isinstance(message, ToolMessage):
            error = message.status == "error"
            results[message.tool_call_id] = (
                None if error else message.content,
                message.content if error else None,
            )
    return {"calls": calls, "results": results, "usage": usage, "answer": answers[-1]}


def test_concurrent_trials_each_record_their_own_thread_as_the_graph_keeps_it(
    tmp_path: Path,
) -> None:
    saver = InMemorySaver()
    graph = react_agent(checkpointer=saver)
    prompts = ["weather Oslo and Lima", "charge 3", "hello", "bad args"]
    cases = [EvalCase(id=f"add-{i}", input=f"add {i} 100") for i in range(8)]
    cases += [EvalCase(id=f"p{i}", input=prompt) for i, prompt in enumerate(prompts)]
    done = run(graph, cases, tmp_path, trials=3, concurrency=8)
    results = done.results  # read back from the SQLite store
    assert len(results) == 36
    threads = [r.trial.metadata["thread_id"] for r in results]
    assert len(set(threads)) == 36
    for result in results:
        trial = result.trial
        config = {"configurable": {"thread_id": trial.metadata["thread_id"]}}
        messages = graph.get_state(config).values["messages"]
        # The thread holds this case's conversation, once: no other trial's turn in it.
        assert [m.content for m in messages if m.type == "human"] == [result.case.input]
        expected = _expected_from_thread(messages)
        assert [(c.name, c.arguments, c.id) for c in trial.tool_calls] == expected["calls"]
        assert {c.id: (c.result, c.error) for c in trial.tool_calls} == expected["results"]
        assert trial.usage == expected["usage"]
        assert trial.output == expected["answer"]
        if result.case.id.startswith("add-"):
            n = int(result.case.id.removeprefix("add-"))
            assert trial.output == f"results: add={n + 100}"


def test_a_framework_agent_called_as_a_plain_agent_runs_one_turn() -> None:
    import asyncio

    agent = as_framework_agent(react_agent())
    assert agent is not None
    trial = asyncio.run(agent("add 4 5"))
    assert trial.output == "results: add=9"
    assert agent.reference == "langgraph:support"


def test_a_graph_past_its_recursion_limit_fails_the_trial_keeping_its_calls(
    tmp_path: Path,
) -> None:
    # triage, assistant, tools: no step left to answer (create_react_agent would say so
    # itself; a graph of one's own raises).
    graph = hand_built_graph().with_config(recursion_limit=3)
    result = only(run(graph, [EvalCase(id="c", input="add 1 2")], tmp_path, retries=0))
    trial = result.trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.AGENT_ERROR
    assert "GraphRecursionError" in (trial.failure.error_type or "")
    assert [(c.name, c.arguments, c.result) for c in trial.tool_calls] == [
        ("add", {"a": 1, "b": 2}, "3")
    ]
    assert trial.node_visits == ["triage", "assistant", "tools"]
