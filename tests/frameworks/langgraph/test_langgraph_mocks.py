"""Tool mocks on real LangGraph agents (`create_react_agent`, a hand-built `StateGraph`) over a
scripted chat model, through `evaluate()`: the mock answers in place of the tool, which never
runs; LangGraph handles an injected error as it would the tool's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.prebuilt import ToolNode
from tests.frameworks.langgraph import mocked_tools
from tests.frameworks.langgraph.mocked_tools import RAN, TOOLS, hand_built, react_agent

from agenteval import EvalCase, evaluate
from agenteval.case import Invocation
from agenteval.run import Run
from agenteval.trace import FailureCause, Trial

WEATHER = {
    "get_weather": [
        {"when": {"city": "Paris"}, "result": {"celsius": 14, "sky": "cloudy"}},
        {"when": {"city": "Atlantis"}, "error": "UnknownCityError: no such city"},
        {"result": {"celsius": 20}},
    ]
}


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()


def trials(run: Run) -> dict[str, Trial]:
    return {result.trial.case_id: result.trial for result in run.results}


def run(agent: Any, cases: list[EvalCase], tmp_path: Path, **options: Any) -> Run:
    return evaluate(agent, cases, store=tmp_path / "runs.db", **options)


@pytest.mark.parametrize("build", [react_agent, hand_built])
def test_a_mock_answers_by_rule_and_the_tool_never_runs(tmp_path: Path, build: Any) -> None:
    cases = [
        EvalCase(id=city, input=f"weather {city}", tool_mocks=WEATHER)
        for city in ("Paris", "Atlantis", "Rome")
    ]
    by_case = trials(run(build(), cases, tmp_path))
    assert RAN == []
    paris = by_case["Paris"]
    (call,) = paris.tool_calls
    # The content LangChain makes of the returned value, as for a real tool's.
    assert (call.name, call.arguments, call.result, call.mocked) == (
        "get_weather",
        {"city": "Paris"},
        json.dumps({"celsius": 14, "sky": "cloudy"}),
        "mock",
    )
    assert paris.output == 'get_weather={"celsius": 14, "sky": "cloudy"}'
    assert paris.failure is None
    atlantis = by_case["Atlantis"]
    if build is hand_built:  # handle_tool_errors=True: the model is told, and answers
        (call,) = atlantis.tool_calls
        assert call.mocked == "mock"
        assert call.error is not None and "UnknownCityError('no such city')" in call.error
        assert atlantis.output == "get_weather failed"
        assert atlantis.failure is None
    else:  # ToolNode's default: an error that is no argument error escapes, as a real one
        assert atlantis.failure is not None
        assert atlantis.failure.cause is FailureCause.AGENT_ERROR
        assert "no such city" in atlantis.failure.message
    assert by_case["Rome"].tool_calls[0].result == '{"celsius": 20}'


def test_a_sequence_answers_call_after_call_within_a_trial(tmp_path: Path) -> None:
    mocks = {"add": {"sequence": [{"result": 1}, {"result": {"total": 2}}]}}
    turns = [Invocation(input=text) for text in ("add 1 2", "add 3 4", "add 5 6")]
    case = EvalCase(id="seq", conversation=turns, tool_mocks=mocks)
    trial = trials(run(react_agent(), [case], tmp_path))["seq"]
    assert [(c.arguments, c.result, c.mocked) for c in trial.tool_calls] == [
        ({"a": 1, "b": 2}, "1", "mock"),
        ({"a": 3, "b": 4}, '{"total": 2}', "mock"),
        ({"a": 5, "b": 6}, '{"total": 2}', "mock"),  # the last answer repeats
    ]
    assert RAN == []


def test_a_run_mock_answers_every_case_and_a_case_mock_wins(tmp_path: Path) -> None:
    cases = [
        EvalCase(id="run", input="charge 5"),
        EvalCase(id="case", input="charge 5", tool_mocks={"charge": {"result": "case said"}}),
        EvalCase(id="unmocked", input="add 1 2"),
    ]
    by_case = trials(
        run(react_agent(), cases, tmp_path, tool_mocks={"charge": {"result": "run said"}})
    )
    assert by_case["run"].tool_calls[0].result == "run said"
    assert by_case["case"].tool_calls[0].result == "case said"
    assert by_case["unmocked"].tool_calls[0].result == "3"
    assert by_case["unmocked"].tool_calls[0].mocked is None
    assert RAN == ["add(1, 2)"]  # the call no mock answers runs for real


@pytest.mark.parametrize(
    ("handle", "handled"),
    [
        (True, True),
        ((TimeoutError,), True),
        ((ValueError,), False),
        (False, False),
        (None, False),  # ToolNode's default: only argument errors become messages
    ],
    ids=["true", "timeout-type", "other-type", "false", "default"],
)
def test_an_injected_timeout_is_handled_as_the_real_one_would_be(
    tmp_path: Path, handle: Any, handled: bool
) -> None:
    node = ToolNode(TOOLS) if handle is None else ToolNode(TOOLS, handle_tool_errors=handle)
    cases = [
        EvalCase(id="mocked", input="charge 5", tool_mocks={"charge": {"error": "timeout"}}),
        EvalCase(id="real", input="flaky 5"),  # raises a real TimeoutError
        # The same real error in a trial with mocks (the graph's answering copy).
        EvalCase(id="real-mocked-run", input="flaky 5", tool_mocks={"add": {"result": 1}}),
    ]
    by_case = trials(run(react_agent(node), cases, tmp_path, retries=0))
    assert RAN == ["flaky(5)", "flaky(5)"]
    for trial in by_case.values():
        if handled:
            assert trial.failure is None
            assert trial.output is not None and trial.output.endswith("failed")
            assert trial.tool_calls[0].error is not None
        else:
            assert trial.failure is not None  # escaped the graph: the trial failed
    mocked = by_case["mocked"]
    if not handled:
        # A real TimeoutError is taken for the infrastructure's (retried when asked); the
        # injected one is what the case tests, so it is the agent's failure.
        assert mocked.failure is not None and mocked.failure.cause is FailureCause.AGENT_ERROR
    assert mocked.attempts == 1  # an injected error is the agent's to handle: no retry
    if handled:
        assert "InjectedTimeout" in str(mocked.tool_calls[0].error)
        assert mocked.tool_calls[0].mocked == "mock"
    else:
        assert mocked.failure is not None and "timed out" in mocked.failure.message


@pytest.mark.parametrize("build", [react_agent, hand_built])
def test_mocks_only_fails_the_trial_even_when_the_graph_makes_the_error_a_message(
    tmp_path: Path, build: Any
) -> None:
    graph = build(ToolNode(TOOLS, handle_tool_errors=True))
    case = EvalCase(id="only", input="add 1 2", tool_mocks=WEATHER, tool_mocks_only=True)
    trial = trials(run(graph, [case], tmp_path))["only"]
    assert RAN == []
    # The graph turned the error into a message and the model answered ...
    assert trial.output == "add failed"
    assert "UnmockedToolError" in str(trial.tool_calls[0].error)
    # ... and the harness, which saw the call, fails the trial.
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.UNMOCKED_TOOL
    assert "add(a=1, b=2) has no mock" in trial.failure.message


def test_mocked_arguments_are_checked_against_the_tool_schema(tmp_path: Path) -> None:
    mocks = {"add": {"result": 5}}
    cases = [
        EvalCase(id="bad", input="bad", tool_mocks=mocks),
        EvalCase(id="lax", input="lax", tool_mocks=mocks),
    ]
    by_case = trials(run(hand_built(), cases, tmp_path))
    assert RAN == []
    # "two" for an integer: LangChain's own validation refuses it first, as for a real call
    # (a ToolInvocationError, made a message for the model by any ToolNode).
    bad = by_case["bad"].tool_calls[0]
    assert bad.mocked is None and bad.result is None
    assert "ToolInvocationError" in str(bad.error) and "valid integer" in str(bad.error)
    # "2" for an integer: pydantic would coerce it, the tool's JSON schema does not allow it.
    lax = by_case["lax"].tool_calls[0]
    assert lax.mocked is None and lax.result is None
    assert "ToolArgumentsError" in str(lax.error)
    assert "'2' is not of type 'integer'" in str(lax.error)


def test_concurrent_trials_never_see_each_others_state_or_sequence(tmp_path: Path) -> None:
    turns = ["weather Paris", "tick", "weather Paris", "tick", "weather Paris"]
    cases = []
    for k in range(4):
        sequence = [
            {"result": {"case": k, "call": i}, "latency_s": 0.01, "set_state": {"seen": [k, i]}}
            for i in range(3)
        ]
        cases.append(
            EvalCase(
                id=f"c{k}",
                conversation=[Invocation(input=text) for text in turns],
                tool_mocks={"get_weather": {"sequence": sequence}},
                initial_state={"n": 10 * k},
                expected_state={"n": 10 * k + 2},
            )
        )
    done = run(react_agent(), cases, tmp_path, trials=3, concurrency=8)
    assert len(done.results) == 12
    assert RAN == ["tick()"] * 24  # get_weather never ran
    for result in done.results:
        trial = result.trial
        k = int(trial.case_id[1:])
        n = 10 * k
        assert [(c.name, c.result, c.mocked) for c in trial.tool_calls] == [
            ("get_weather", json.dumps({"case": k, "call": 0}), "mock"),
            ("tick", f"n={n + 1}", None),
            ("get_weather", json.dumps({"case": k, "call": 1}), "mock"),
            ("tick", f"n={n + 2}", None),
            ("get_weather", json.dumps({"case": k, "call": 2}), "mock"),
        ]
        assert trial.state == {"n": n + 2, "seen": [k, 2]}
        assert trial.failure is None


def test_the_users_graph_is_left_as_it_was(tmp_path: Path) -> None:
    graph = react_agent()
    node = graph.nodes["tools"].bound
    before = (dict(graph.nodes), node.tools_by_name.copy(), vars(node).copy())
    case = EvalCase(id="w", input="weather Paris", tool_mocks=WEATHER)
    trial = trials(run(graph, [case], tmp_path))["w"]
    assert trial.tool_calls[0].mocked == "mock"
    assert RAN == []
    assert dict(graph.nodes) == before[0]
    assert graph.nodes["tools"].bound is node
    assert node.tools_by_name == before[1]
    assert vars(node) == before[2]
    # Run by itself, outside any trial, the graph calls its tool for real.
    graph.invoke({"messages": [("user", "weather Paris")]})
    assert RAN == ["get_weather(Paris)"]


def test_a_case_without_mocks_runs_the_users_graph_itself(tmp_path: Path) -> None:
    from agenteval.agents.frameworks.langgraph import GraphAgent

    graph = react_agent()
    agent = GraphAgent.of(graph)
    trial = trials(run(agent, [EvalCase(id="plain", input="add 1 2")], tmp_path))["plain"]
    assert trial.tool_calls[0].result == "3"
    assert agent._answering is None  # no copy made: nothing paid without mocks
    mocked = EvalCase(id="m", input="add 1 2", tool_mocks={"add": {"result": 9}})
    trials(run(agent, [mocked], tmp_path))
    answering = agent.answering()
    assert answering is not graph and agent.answering() is answering  # made once


def test_mocked_module_tools_are_those_the_script_calls() -> None:
    # The script's tool names are the tools': a rename would make every test above vacuous.
    assert {t.name for t in mocked_tools.TOOLS} == {"get_weather", "add", "charge", "flaky", "tick"}
