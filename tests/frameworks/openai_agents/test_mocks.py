"""Tool mocks, injected failures and replayed answers on OpenAI Agents SDK agents: real
`Agent`s and `function_tool`s over the loopback server, run by `evaluate` (the engine sets each
trial's environment, marks the answered calls, stores the final state) or by the adapter under
a recorder holding an environment. The tools' own functions tell when they really run
(`mocked.REAL`); what the model was sent is read back from the server's requests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase, FailureCause
from agenteval.agents.environment import ReplayBook, ToolEnvironment
from agenteval.agents.frameworks.openai_agents import OpenAIAgentsAgent
from agenteval.agents.recorder import TrialRecorder, recording
from agenteval.case import Invocation
from agenteval.trace import ToolCall, Trial
from agents import FunctionTool

from . import mocked
from .loopback import ScriptedServer

WEATHER_MOCKS: dict[str, Any] = {
    "get_weather": [
        {"when": {"city": "Paris"}, "result": {"sky": "cloudy", "celsius": 14}},
        {"result": "elsewhere"},
    ],
    "get_time": {"result": "09:30"},
}


@pytest.fixture(autouse=True)
def _real_calls() -> Iterator[list[str]]:
    mocked.REAL.clear()
    yield mocked.REAL
    mocked.REAL.clear()


def run_trials(agent: Any, cases: list[EvalCase], tmp_path: Path, **options: Any) -> list[Trial]:
    run = agenteval.evaluate(agent, cases, store=tmp_path / "runs.db", **options)
    return [result.trial for result in run.results]


def by_case(trials: list[Trial]) -> dict[str, Trial]:
    return {trial.case_id: trial for trial in trials}


def sent(server: ScriptedServer, tag: int) -> dict[str, str]:
    """What the model was sent as each tool's output in trial `#tag`, by call id."""
    return {
        message["tool_call_id"]: message["content"]
        for body in server.requests
        for message in body["messages"]
        if message.get("role") == "tool" and f"call_{tag}_" in message["tool_call_id"]
    }


def calls(trial: Trial) -> list[tuple[str, Any, str | None, str | None]]:
    return [(c.name, c.result, c.error, c.mocked) for c in trial.tool_calls]


def test_mocks_answer_by_rule_and_by_sequence_and_the_tools_never_run(
    server: ScriptedServer, tmp_path: Path
) -> None:
    sequence = {"sequence": [{"result": "09:00"}, {"result": "10:00"}]}
    cases = [
        EvalCase(id="rule", input="Paris? #101", tool_mocks=WEATHER_MOCKS),
        EvalCase(
            id="sequence",
            conversation=[Invocation(input="Paris? #102"), Invocation(input="Paris? #103")],
            tool_mocks={"get_weather": {"result": "rain"}, "get_time": sequence},
        ),
    ]
    trials = by_case(run_trials(mocked.weather_agent(server.base_url), cases, tmp_path))
    assert mocked.REAL == []
    rule = trials["rule"]
    assert rule.failure is None
    assert rule.output == "It is sunny, 18 C, and 12:00 in Paris (#101)."
    assert calls(rule) == [
        ("get_weather", {"sky": "cloudy", "celsius": 14}, None, "mock"),
        ("get_time", "09:30", None, "mock"),
    ]
    # The model got the mocked results as the tools' outputs.
    assert sent(server, 101) == {
        "call_101_weather": "{'sky': 'cloudy', 'celsius': 14}",
        "call_101_time": "09:30",
    }
    assert calls(trials["sequence"]) == [
        ("get_weather", "rain", None, "mock"),
        ("get_time", "09:00", None, "mock"),
        ("get_weather", "rain", None, "mock"),
        ("get_time", "10:00", None, "mock"),
    ]
    assert trials["sequence"].state is None  # no state asked, none kept


def test_an_injected_timeout_reaches_the_agents_error_handling_as_the_tools_error(
    server: ScriptedServer, tmp_path: Path
) -> None:
    cases = [
        EvalCase(
            id="timeout",
            input="Atlantis #110",
            tool_mocks={"get_weather": {"error": "timeout", "latency_s": 0.01}},
        ),
        EvalCase(
            id="named",
            input="Paris? #111",
            tool_mocks={"get_weather": {"result": "sun"}, "get_time": {"error": "ClockError: no"}},
        ),
    ]
    trials = by_case(run_trials(mocked.weather_agent(server.base_url), cases, tmp_path))
    assert mocked.REAL == []
    timeout = trials["timeout"]
    assert timeout.failure is None  # the agent handled it
    assert timeout.output == "I could not find Atlantis (#110)."
    told = "get_weather: the call timed out (injected by a tool mock)"
    assert calls(timeout) == [("get_weather", None, f"InjectedTimeout: {told}", "mock")]
    # The tool's failure_error_function saw a TimeoutError, and told the model.
    assert sent(server, 110) == {"call_110_weather": f"the tool failed (timeout): {told}"}
    # A tool with the SDK's default failure message: the model gets that message, the trial
    # records the injected error.
    assert calls(trials["named"])[1] == ("get_time", None, "ClockError: no", "mock")
    assert sent(server, 111)["call_111_time"] == (
        "An error occurred while running the tool. Please try again."
    )


def test_an_unmocked_call_fails_a_mocks_only_trial_though_the_model_got_a_message(
    server: ScriptedServer, tmp_path: Path
) -> None:
    case = EvalCase(
        id="only",
        input="Paris? #120",
        tool_mocks={"get_weather": {"result": "sun"}},
        tool_mocks_only=True,
    )
    (trial,) = run_trials(mocked.weather_agent(server.base_url), [case], tmp_path)
    assert mocked.REAL == []  # get_time never ran
    # The SDK turned the error into a message and the agent answered; the harness saw it.
    assert trial.output == "It is sunny, 18 C, and 12:00 in Paris (#120)."
    assert sent(server, 120)["call_120_time"].startswith("An error occurred")
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.UNMOCKED_TOOL
    assert "get_time(tz='CET') has no mock" in trial.failure.message
    assert calls(trial)[0] == ("get_weather", "sun", None, "mock")
    name, result, error, marked = calls(trial)[1]
    assert (name, result, marked) == ("get_time", None, None)
    assert error is not None and error.startswith("UnmockedToolError: get_time(tz='CET')")


def test_mocked_arguments_that_do_not_fit_the_schema_are_the_tools_error(
    server: ScriptedServer, tmp_path: Path
) -> None:
    case = EvalCase(id="bad", input="badargs #130", tool_mocks={"get_weather": {"result": "x"}})
    (trial,) = run_trials(mocked.weather_agent(server.base_url), [case], tmp_path)
    assert mocked.REAL == []
    problem = "get_weather: the arguments do not fit its schema: 'city' is a required property"
    assert calls(trial) == [("get_weather", None, f"ToolArgumentsError: {problem}", None)]
    assert trial.tool_calls[0].arguments == {"town": "Paris"}
    assert sent(server, 130) == {"call_130_weather": f"the tool failed (error): {problem}"}
    assert trial.failure is None
    assert trial.output == "I could not ask for the weather."


@pytest.mark.parametrize("handoff_object", [False, True], ids=["agent", "handoff"])
def test_a_handoff_reaches_its_targets_mocked_tool_which_sets_the_state(
    server: ScriptedServer, tmp_path: Path, handoff_object: bool
) -> None:
    tag = 141 if handoff_object else 140
    mocks = {
        "refund_order": {
            "when": {"order_id": f"A{tag}"},
            "result": {"refund": "R-1"},
            "set_state": {"refunded": [f"A{tag}"]},
        }
    }
    case = EvalCase(
        id="refund",
        input=f"A refund please #{tag}",
        tool_mocks=mocks,
        initial_state={"customer": "c-1"},
        expected_state={"refunded": [f"A{tag}"]},
    )
    agent = mocked.triage_agent(server.base_url, handoff_object=handoff_object)
    (trial,) = run_trials(agent, [case], tmp_path)
    assert mocked.REAL == []
    assert trial.failure is None
    assert trial.node_visits == ["triage", "refunds"]
    assert trial.output == f"Refunded 12.50 on order A{tag}."
    assert calls(trial) == [("refund_order", {"refund": "R-1"}, None, "mock")]
    assert trial.state == {"customer": "c-1", "refunded": [f"A{tag}"]}


def test_run_mocks_apply_to_every_case_and_an_injected_error_let_out_is_the_agents(
    server: ScriptedServer, tmp_path: Path
) -> None:
    cases = [
        EvalCase(id="paris", input="Paris? #150"),
        EvalCase(id="own", input="Paris? #152", tool_mocks={"get_time": {"result": "own"}}),
        EvalCase(id="explode", input="explode #151"),
    ]
    run_mocks = {**WEATHER_MOCKS, "explode": {"error": "BoomError: mocked boom"}}
    trials = by_case(
        run_trials(
            mocked.weather_agent(server.base_url), cases, tmp_path, tool_mocks=run_mocks, retries=2
        )
    )
    assert mocked.REAL == []
    assert [c.result for c in trials["paris"].tool_calls] == [
        {"sky": "cloudy", "celsius": 14},
        "09:30",
    ]
    assert [c.result for c in trials["own"].tool_calls][1] == "own"  # the case's mock wins
    explode = trials["explode"]
    assert explode.failure is not None
    assert explode.failure.cause is FailureCause.AGENT_ERROR
    assert "mocked boom" in explode.failure.message
    assert explode.attempts == 1  # the case's scenario, never retried
    assert calls(explode) == [("explode", None, "BoomError: mocked boom", "mock")]


def test_concurrent_trials_keep_their_own_state_and_sequence_and_the_agent_is_unchanged(
    server: ScriptedServer, tmp_path: Path
) -> None:
    agent = mocked.weather_agent(server.base_url)
    before = [(tool, tool.on_invoke_tool) for tool in agent.tools]
    handoffs = list(agent.handoffs)
    clock = {
        "sequence": [
            {"result": "t1", "set_state": {"clock": 1}, "latency_s": 0.01},
            {"result": "t2", "set_state": {"clock": 2}},
        ]
    }
    cases = [
        EvalCase(
            id=f"c{n}",
            conversation=[
                Invocation(input=f"Paris? #{160 + n}"),
                Invocation(input=f"Paris? #{180 + n}"),
            ],
            tool_mocks={"get_time": clock},
            initial_state={"case": n},
        )
        for n in range(8)
    ]
    trials = run_trials(agent, cases, tmp_path, trials=3, concurrency=8)
    assert len(trials) == 24
    for trial in trials:
        n = int(trial.case_id[1:])
        assert trial.failure is None, trial.failure
        ids = [call.id for call in trial.tool_calls]
        assert ids == [
            f"call_{160 + n}_weather",
            f"call_{160 + n}_time",
            f"call_{180 + n}_weather",
            f"call_{180 + n}_time",
        ]
        assert [(c.name, c.result, c.mocked) for c in trial.tool_calls] == [
            ("get_weather", "real weather in Paris", None),
            ("get_time", "t1", "mock"),
            ("get_weather", "real weather in Paris", None),
            ("get_time", "t2", "mock"),
        ]
        # The real get_weather counted its calls in this trial's state, the mock set the clock.
        assert trial.state == {"case": n, "weather_asked": 2, "clock": 2}
    assert sorted(mocked.REAL) == ["get_weather Paris"] * 48  # get_time never ran
    # The user's agent object: the same tools, invokers and handoffs as before the run.
    assert [(tool, tool.on_invoke_tool) for tool in agent.tools] == before
    assert all(a is b for (a, _), b in zip(before, agent.tools, strict=True))
    assert all(
        tool.on_invoke_tool is invoker for tool, invoker in before if isinstance(tool, FunctionTool)
    )
    assert agent.handoffs == handoffs
    # And without mocks it runs its real tools.
    mocked.REAL.clear()
    run_trials(agent, [EvalCase(id="plain", input="Paris? #199")], tmp_path)
    assert sorted(mocked.REAL) == ["get_time CET", "get_weather Paris"]


async def adapter_run(agent: Any, case: EvalCase, environment: ToolEnvironment) -> Trial:
    recorder = TrialRecorder()
    recorder.environment = environment
    with recording(recorder):
        return await OpenAIAgentsAgent(agent).run_case(case)


async def test_a_replayed_run_answers_its_calls_and_a_miss_is_refused(
    server: ScriptedServer,
) -> None:
    recorded = [
        ToolCall(name="get_weather", arguments={"city": "Paris"}, result="replayed sun"),
        ToolCall(name="get_time", arguments={"tz": "CET"}, result="replayed noon"),
    ]
    book = ReplayBook(recorded, run_id="r" * 32)
    environment = ToolEnvironment(replay=book)
    trial = await adapter_run(
        mocked.weather_agent(server.base_url), EvalCase(input="Paris? #170"), environment
    )
    assert mocked.REAL == []
    assert [(c.name, c.result) for c in trial.tool_calls] == [
        ("get_weather", "replayed sun"),
        ("get_time", "replayed noon"),
    ]
    assert [kind for _, _, kind in environment.answered] == ["replay", "replay"]
    assert environment.violation is None

    missing = ToolEnvironment(replay=ReplayBook(recorded[:1], run_id="r" * 32))
    trial = await adapter_run(
        mocked.weather_agent(server.base_url), EvalCase(input="Paris? #171"), missing
    )
    assert mocked.REAL == []  # a miss is never run live
    error = trial.tool_calls[1].error
    assert error is not None and error.startswith("ReplayMissError: get_time(tz='CET')")
    assert missing.violation is not None
    assert missing.violation.cause is FailureCause.REPLAY_MISS


def test_a_tool_the_agent_adds_during_the_run_is_never_run_live_under_a_mock(
    server: ScriptedServer, tmp_path: Path
) -> None:
    cases = [
        EvalCase(
            id="only",
            input="Paris? #190",
            tool_mocks={"get_weather": {"result": "sun"}},
            tool_mocks_only=True,
        ),
        EvalCase(id="mocked", input="Paris? #191", tool_mocks={"get_time": {"result": "9"}}),
        EvalCase(id="free", input="Paris? #192", tool_mocks={"get_weather": {"result": "sun"}}),
    ]
    trials = by_case(run_trials(mocked.clock_agent(server.base_url), cases, tmp_path))
    only = trials["only"]
    assert only.failure is not None and only.failure.cause is FailureCause.UNMOCKED_TOOL
    unanswerable = trials["mocked"]
    assert unanswerable.failure is not None
    assert unanswerable.failure.cause is FailureCause.AGENT_ERROR
    assert "get_time is a tool the agent made during the run" in unanswerable.failure.message
    error = calls(unanswerable)[1][2]  # kept on its call, whether get_weather had finished
    assert error is not None and error.startswith("UnanswerableToolError: get_time is a tool")
    # With neither a mock of it nor mocks only, it runs for real, as without agenteval.
    assert trials["free"].failure is None
    assert mocked.REAL.count("get_time CET") == 1
    # get_weather runs for real only in the case that did not mock it, and there only if its
    # thread started before the refusal of get_time stopped the run (the SDK cancels a model
    # turn's other calls when one fails, as it would without agenteval): at most once.
    assert [what for what in mocked.REAL if what != "get_time CET"] in ([], ["get_weather Paris"])


def test_a_tool_behind_an_approval_policy_is_approved_as_without_mocks(
    server: ScriptedServer, tmp_path: Path
) -> None:
    # The SDK asks for approval (the run stops, waiting) when validation changed the
    # arguments, whatever the policy says; the copy of the tool keeps that.
    cases = [
        EvalCase(id="mocked", input="Paris? #200", tool_mocks={"get_weather": {"result": "sun"}}),
        EvalCase(id="plain", input="Paris? #201"),
    ]
    trials = by_case(run_trials(mocked.approval_agent(server.base_url), cases, tmp_path))
    assert mocked.REAL == ["get_weather Paris"]  # the plain case's; get_time waits for approval
    for trial in trials.values():
        assert trial.output is None
        assert [(c.name, c.result) for c in trial.tool_calls][1] == ("get_time", None)


def test_a_mocks_latency_is_held_to_the_tools_own_timeout(
    server: ScriptedServer, tmp_path: Path
) -> None:
    mocks = {"get_weather": {"result": "sun"}, "get_time": {"result": "late", "latency_s": 30}}
    case = EvalCase(id="slow", input="Paris? #210", tool_mocks=mocks)
    (trial,) = run_trials(mocked.impatient_agent(server.base_url), [case], tmp_path)
    assert mocked.REAL == []
    told = "Tool 'get_time' timed out after 0.05 seconds."
    assert sent(server, 210)["call_210_time"] == told  # as the SDK times out the real tool
    # The call timed out: its error, though the model was told the SDK's message as a result.
    assert calls(trial)[1] == ("get_time", None, f"ToolTimeoutError: {told}", "mock")
    assert trial.failure is None


def test_a_hand_made_function_tool_is_answered_and_called_as_without_mocks(
    server: ScriptedServer, tmp_path: Path
) -> None:
    mocked.CONTEXTS.clear()
    cases = [
        EvalCase(id="plain", input="Paris? #220"),
        EvalCase(id="real", input="Paris? #221", tool_mocks={"get_weather": {"result": "sun"}}),
        EvalCase(id="mocked", input="Paris? #222", tool_mocks={"get_time": {"result": "9"}}),
        EvalCase(id="error", input="Paris? #223", tool_mocks={"get_time": {"error": "timeout"}}),
    ]
    trials = by_case(run_trials(mocked.hand_made_agent(server.base_url), cases, tmp_path))
    # Run for real under agenteval's copy, it gets the context the SDK gives it without.
    assert mocked.CONTEXTS == ["RunContextWrapper", "RunContextWrapper"]
    assert mocked.REAL.count("hand_made_time") == 2
    assert calls(trials["mocked"])[1] == ("get_time", "9", None, "mock")
    # Its error is not handled by the SDK for it: the injected one stops the run, as its own.
    error = trials["error"]
    assert error.failure is not None and error.failure.cause is FailureCause.AGENT_ERROR
    told = "InjectedTimeout: get_time: the call timed out (injected by a tool mock)"
    assert calls(error)[1] == ("get_time", None, told, "mock")


def test_an_injected_error_that_stops_the_run_is_kept_on_its_call_while_a_sibling_runs(
    server: ScriptedServer, tmp_path: Path
) -> None:
    # The hand-made tool is given a RunContextWrapper (no call id) and its error stops the run
    # while the model's other call (a mock still waiting its latency) has not finished: the
    # trial keeps both calls, and the error on the call that raised it.
    mocks = {
        "get_weather": {"result": "sun", "latency_s": 3600},
        "get_time": {"error": "timeout"},
    }
    case = EvalCase(id="stopped", input="Paris? #224", tool_mocks=mocks)
    (trial,) = run_trials(mocked.hand_made_agent(server.base_url), [case], tmp_path)
    assert mocked.REAL == []
    assert trial.failure is not None and trial.failure.cause is FailureCause.AGENT_ERROR
    told = "InjectedTimeout: get_time: the call timed out (injected by a tool mock)"
    assert calls(trial) == [("get_weather", None, None, "mock"), ("get_time", None, told, "mock")]


def test_a_tools_own_error_that_stops_the_run_is_kept_on_its_call_while_a_sibling_runs(
    server: ScriptedServer, tmp_path: Path
) -> None:
    # No mocks: the user's agent runs as it is, and the SDK names the tool that stopped it.
    (trial,) = run_trials(
        mocked.stopping_agent(server.base_url), [EvalCase(id="stop", input="Paris? #225")], tmp_path
    )
    assert mocked.REAL == ["broken_time CET"]
    assert trial.failure is not None and trial.failure.cause is FailureCause.AGENT_ERROR
    told = "RuntimeError: the clock broke"
    assert calls(trial) == [("get_weather", None, None, None), ("get_time", None, told, None)]
