"""An OpenAI Agents SDK `Agent` as agenteval runs it: `evaluate()` with concurrent trials (each
trial's record its own), what the SQLite store holds against what the SDK's own `RunResult`
says, the declared tool schemas checked, a model server that cannot be reached (retried as
infrastructure), `EvalSuite`, the pytest plugin and `agenteval run`."""

from __future__ import annotations

import itertools
import json
import os
import socket
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.cli_process import agenteval_cli, cli_env

import agenteval
from agenteval import EvalCase, EvalSuite
from agenteval.agents.frameworks.openai_agents import OpenAIAgentsAgent
from agenteval.case import ExpectedCall, Invocation
from agenteval.evalset import AgentEvaluator, EvalConfig
from agenteval.evaluators import ToolCallAccuracy
from agenteval.store import RunStore
from agenteval.trace import FailureCause, Trial
from agents import RunConfig, Runner, ToolCallItem, ToolCallOutputItem

from . import scripted
from .loopback import ScriptedServer, scripted_server

pytest_plugins = ("pytester",)

ROOT = Path(__file__).resolve().parents[3]


def stored(path: Path, run_id: str) -> dict[tuple[str, int], Trial]:
    """The trials of a run as the store holds them, read back from the SQLite file."""
    with RunStore.open(path, create=False) as store:
        return {(r.case.id, r.trial.trial): r.trial for r in store.iter_results(run_id)}


def weather_cases() -> list[EvalCase]:
    return [
        *[EvalCase(id=f"paris-{n}", input=f"Paris? #{n}") for n in range(1, 6)],
        EvalCase(id="atlantis-6", input="Atlantis #6"),
        EvalCase(
            id="talk-7", conversation=[Invocation(input="hello #7"), Invocation(input="Paris? #7")]
        ),
        EvalCase(id="explode-8", input="explode #8"),
    ]


def test_concurrent_trials_each_keep_their_own_record(
    server: ScriptedServer, tmp_path: Path
) -> None:
    agent = scripted.weather_agent(server.base_url)
    run = agenteval.evaluate(
        agent, weather_cases(), trials=3, concurrency=8, store=tmp_path / "runs.db"
    )
    assert run.info.target == "python:openai-agents:weather"
    trials = stored(tmp_path / "runs.db", run.run_id)
    assert len(trials) == 8 * 3
    for (case_id, _), trial in trials.items():
        tag = case_id.rsplit("-", 1)[1]
        ids = [call.id or "" for call in trial.tool_calls]
        assert all(f"call_{tag}_" in call_id for call_id in ids), (case_id, ids)
        assert trial.tool_specs.keys() == {"get_weather", "get_time", "explode"}
        assert trial.node_visits == ["weather"]
        if case_id.startswith("paris"):
            assert trial.output == f"It is sunny, 18 C, and 12:00 in Paris (#{tag})."
            assert [c.name for c in trial.tool_calls] == ["get_weather", "get_time"]
            assert [c.result for c in trial.tool_calls] == ["sunny, 18 C", "12:00"]
            assert len(trial.model_calls) == 2
            assert trial.failure is None
        elif case_id == "atlantis-6":
            assert trial.tool_calls[0].error == "ValueError: unknown city: Atlantis"
        elif case_id == "talk-7":
            assert trial.metadata["turn_outputs"] == [
                "Hello! Ask me about the weather (#7).",
                "It is sunny, 18 C, and 12:00 in Paris (#7).",
            ]
            assert len(trial.model_calls) == 3
        else:
            assert trial.failure is not None
            assert trial.failure.cause is FailureCause.AGENT_ERROR
            assert "the tool blew up" in trial.failure.message
            assert [(c.name, c.error) for c in trial.tool_calls] == [
                ("explode", "RuntimeError: the tool blew up")
            ]
            assert trial.attempts == 1  # the agent's own error: not retried


async def sdk_run(agent: Any, turns: list[str]) -> list[Any]:
    """The same case run by the SDK directly, as a user would: one `RunResult` per turn."""
    results: list[Any] = []
    items: Any = turns[0]
    current = agent
    for number, turn in enumerate(turns):
        if number:
            items = [*results[-1].to_input_list(), {"role": "user", "content": turn}]
            current = results[-1].last_agent
        results.append(
            await Runner.run(current, items, run_config=RunConfig(tracing_disabled=True))
        )
    return results


def sdk_record(agent: Any, results: list[Any]) -> dict[str, Any]:
    """What the SDK's own run objects say: calls and outputs from the items, usage from the
    run context (in total, and per request), the final output of each turn, and the agents
    that answered (the starting one, then each turn's last, in order, each once in a row)."""
    names = [agent.name, *(result.last_agent.name for result in results)]
    calls: list[tuple[str, Any, str]] = []
    outputs: dict[str, Any] = {}
    per_request: list[tuple[int, int, int, int]] = []
    total = [0, 0, 0, 0]
    for result in results:
        for item in result.new_items:
            if isinstance(item, ToolCallItem):
                raw = item.raw_item
                calls.append((raw.name, json.loads(raw.arguments), raw.call_id))
            elif isinstance(item, ToolCallOutputItem):
                outputs[item.call_id] = item.output
        used = result.context_wrapper.usage
        for entry in used.request_usage_entries:
            per_request.append(
                (
                    entry.input_tokens,
                    entry.output_tokens,
                    entry.input_tokens_details.cached_tokens,
                    entry.output_tokens_details.reasoning_tokens,
                )
            )
        for index, value in enumerate(
            (
                used.input_tokens,
                used.output_tokens,
                used.input_tokens_details.cached_tokens,
                used.output_tokens_details.reasoning_tokens,
            )
        ):
            total[index] += value
    return {
        "calls": calls,
        "outputs": outputs,
        "per_request": per_request,
        "total": tuple(total),
        "answers": [result.final_output for result in results],
        "agents": [name for name, _ in itertools.groupby(names)],
    }


def agenteval_record(trial: Trial) -> dict[str, Any]:
    return {
        "calls": [(c.name, c.arguments, c.id) for c in trial.tool_calls],
        "outputs": {c.id: c.result for c in trial.tool_calls},
        "per_request": [
            (
                c.usage.input_tokens,
                c.usage.output_tokens,
                c.usage.cached_tokens,
                c.usage.reasoning_tokens,
            )
            for c in trial.model_calls
        ],
        "total": (
            trial.usage.input_tokens,
            trial.usage.output_tokens,
            trial.usage.cached_tokens,
            trial.usage.reasoning_tokens,
        ),
        "answers": [step.output for step in trial.steps],
        "agents": trial.node_visits,
    }


@pytest.mark.parametrize(
    ("make", "turns"),
    [
        (scripted.weather_agent, ["Paris? #31"]),
        (scripted.triage_agent, ["A refund please #32"]),
        (scripted.triage_agent, ["hello #33", "A refund please #33", "thanks #33"]),
    ],
)
async def test_the_store_agrees_with_the_sdks_own_run_result(
    server: ScriptedServer, tmp_path: Path, make: Any, turns: list[str]
) -> None:
    agent = make(server.base_url)
    case = (
        EvalCase(id="case", input=turns[0])
        if len(turns) == 1
        else EvalCase(id="case", conversation=[Invocation(input=turn) for turn in turns])
    )
    run = await agenteval.evaluate_async(agent, [case], store=tmp_path / "runs.db")
    trial = stored(tmp_path / "runs.db", run.run_id)[("case", 0)]
    expected = sdk_record(agent, await sdk_run(agent, turns))
    assert expected["calls"]  # the comparison is over a run that did call tools
    assert agenteval_record(trial) == expected


def test_tool_arguments_are_checked_against_the_sdks_declared_schemas(
    server: ScriptedServer, tmp_path: Path
) -> None:
    cases = [EvalCase(id="good", input="Paris? #40"), EvalCase(id="bad", input="badargs #41")]
    run = agenteval.evaluate(
        scripted.weather_agent(server.base_url),
        cases,
        ["tool_arguments_valid"],
        store=tmp_path / "runs.db",
    )
    scores = {r.case.id: r.scores["tool_arguments_valid"] for r in run.results}
    assert scores["good"].value == 1.0
    assert scores["bad"].value == 0.0
    (invalid,) = scores["bad"].details["invalid"]
    assert invalid["name"] == "get_weather"
    assert "town" in invalid["problem"] or "city" in invalid["problem"]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_model_server_that_cannot_be_reached_is_infrastructure_and_retried(
    tmp_path: Path,
) -> None:
    agent = scripted.weather_agent(f"http://127.0.0.1:{closed_port()}/v1")
    run = agenteval.evaluate(
        agent, [EvalCase(id="down", input="hello")], retries=1, store=tmp_path / "runs.db"
    )
    trial = stored(tmp_path / "runs.db", run.run_id)[("down", 0)]
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.CONNECTION_ERROR
    assert trial.failure.error_type == "APIConnectionError"
    assert trial.attempts == 2


def test_a_dropped_connection_is_retried_and_the_retry_answers(tmp_path: Path) -> None:
    with scripted_server() as flaky:
        flaky.drop = 1
        run = agenteval.evaluate(
            scripted.weather_agent(flaky.base_url),
            [EvalCase(id="flaky", input="Paris? #42")],
            retries=2,
            store=tmp_path / "runs.db",
        )
    trial = stored(tmp_path / "runs.db", run.run_id)[("flaky", 0)]
    assert trial.failure is None
    assert trial.output == "It is sunny, 18 C, and 12:00 in Paris (#42)."
    assert trial.retries == {"connection_error": 1}
    assert trial.attempts == 2
    assert len(trial.tool_calls) == 2  # the failed attempt's record is not mixed in


def test_an_eval_suite_runs_an_sdk_agent(server: ScriptedServer, tmp_path: Path) -> None:
    suite = EvalSuite("triage", store=tmp_path / "runs.db").add_cases(
        [
            EvalCase(id="refund", input="A refund please #43", expected_tools=["refund_order"]),
            EvalCase(id="password", input="my password #43"),
        ]
    )
    suite.add_evaluators(ToolCallAccuracy())
    run = suite.run(scripted.triage_agent(server.base_url))
    by_case = {r.case.id: r for r in run.results}
    assert by_case["refund"].trial.output == "Refunded 12.50 on order A43."
    assert by_case["refund"].trial.node_visits == ["triage", "refunds"]
    tripped = by_case["password"].trial
    assert tripped.output is None
    assert tripped.metadata["guardrail"]["name"] == "no_passwords"
    assert by_case["refund"].scores["tool_call_accuracy"].value == 1.0


def test_the_pytest_plugin_runs_an_sdk_agent_by_reference(
    server: ScriptedServer, pytester: pytest.Pytester
) -> None:
    pytester.makefile(
        ".yaml",
        cases="""
        - id: paris
          input: "Paris? #44"
          expected_tools: [get_weather, get_time]
        - id: atlantis
          input: "Atlantis #44"
          expected_output: "I found Atlantis"
        """,
    )
    (pytester.path / "support.py").write_text(
        "from tests.frameworks.openai_agents.scripted import weather_agent\n\n"
        f"agent = weather_agent({server.base_url!r})\n",
        encoding="utf-8",
    )
    pytester.makeini(
        "[pytest]\nagenteval_store = runs.db\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(
        test_weather="""
        from agenteval.pytest_plugin import agenteval_cases

        @agenteval_cases("cases.yaml", agent="support.py:agent")
        def test_weather(agenteval_result):
            '''Each case of cases.yaml.'''
        """
    )
    result = pytester.runpytest("-v", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_weather?paris? PASSED*", "*test_weather?atlantis? FAILED*"])
    with RunStore.open(pytester.path / "runs.db", create=False) as store:
        (row,) = store.list_runs()
        trials = {r.case.id: r.trial for r in store.iter_results(row.run_id)}
    assert [c.id for c in trials["paris"].tool_calls] == ["call_44_weather", "call_44_time"]


def write_project(folder: Path, base_url: str, agent: str) -> None:
    folder.mkdir()
    (folder / "support.py").write_text(
        textwrap.dedent(
            f"""
            from agents.realtime import RealtimeAgent

            from tests.frameworks.openai_agents.scripted import triage_agent

            agent = triage_agent({base_url!r})
            voice = RealtimeAgent(name="voice")
            """
        ),
        encoding="utf-8",
    )
    (folder / "cases.yaml").write_text(
        textwrap.dedent(
            """
            - id: refund
              input: "A refund please #45"
              expected_tools: [refund_order]
            - id: password
              input: "my password #45"
            """
        ),
        encoding="utf-8",
    )
    (folder / "agenteval.yaml").write_text(
        f"dataset: cases.yaml\nagent: support:{agent}\ntrials: 2\nconcurrency: 4\n",
        encoding="utf-8",
    )


def child_env() -> dict[str, str]:
    paths = [str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]
    return cli_env(PYTHONPATH=os.pathsep.join(p for p in paths if p), NO_PROXY="*")


def test_agenteval_run_runs_an_sdk_agent_named_in_agenteval_yaml(
    server: ScriptedServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    write_project(project, server.base_url, "agent")
    done = agenteval_cli(project, "run", ".", "--store", "runs.db", env=child_env())
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    with RunStore.open(project / "runs.db", create=False) as store:
        (row,) = store.list_runs()
        assert store.get_info(row.run_id).agent == "support:agent"
        trials = {(r.case.id, r.trial.trial): r.trial for r in store.iter_results(row.run_id)}
    assert len(trials) == 4
    for trial_index in (0, 1):
        refund = trials[("refund", trial_index)]
        assert refund.output == "Refunded 12.50 on order A45."
        assert refund.node_visits == ["triage", "refunds"]
        assert refund.tool_specs.keys() == {"refund_order"}
        password = trials[("password", trial_index)]
        assert password.failure is not None
        assert password.metadata["guardrail"]["kind"] == "input"


def test_agenteval_run_refuses_an_sdk_object_it_cannot_run_in_one_message(
    server: ScriptedServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    write_project(project, server.base_url, "voice")
    done = agenteval_cli(project, "run", ".", "--store", "runs.db", env=child_env())
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "RealtimeAgent 'voice'" in done.stderr
    assert "agents.Agent" in done.stderr


async def test_adks_agent_evaluator_runs_an_sdk_agent(
    server: ScriptedServer, tmp_path: Path
) -> None:
    def expecting(*names: tuple[str, dict[str, str]]) -> list[ExpectedCall]:
        return [ExpectedCall(name=name, arguments=arguments) for name, arguments in names]

    weather, time = ("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})
    cases = [
        EvalCase(id="in-order", input="Paris? #51", expected_trajectory=expecting(weather, time)),
        EvalCase(id="reversed", input="Paris? #52", expected_trajectory=expecting(time, weather)),
    ]
    evaluator = AgentEvaluator(
        scripted.weather_agent(server.base_url),
        EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}),
        store=tmp_path / "runs.db",
    )
    report = await evaluator.evaluate(cases)
    stats = report.summary.criterion_stats["tool_trajectory_avg_score"]
    assert (stats.passed, stats.failed) == (1, 1)
    assert report.summary.passed_cases == 1


def test_an_adapter_made_by_the_user_runs_with_its_own_settings(
    server: ScriptedServer, tmp_path: Path
) -> None:
    adapter = OpenAIAgentsAgent(scripted.weather_agent(server.base_url), max_turns=2)
    run = agenteval.evaluate(
        adapter, [EvalCase(id="loop", input="loop #53")], store=tmp_path / "runs.db"
    )
    trial = stored(tmp_path / "runs.db", run.run_id)[("loop", 0)]
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.AGENT_ERROR
    assert trial.failure.error_type == "TurnLimitError"
    assert "all 2 turns" in trial.failure.message
    assert [c.name for c in trial.tool_calls] == ["get_time", "get_time"]
    assert trial.attempts == 1


def refused_by_a_guardrail(case: EvalCase, trial: Trial) -> tuple[bool, str] | None:
    """A user's scorer for cases that expect a refusal: the guardrail that tripped, if any."""
    if case.metadata.get("expect") != "refusal":
        return None
    guardrail = trial.metadata.get("guardrail")
    return guardrail is not None, f"guardrail: {guardrail['name'] if guardrail else 'none'}"


def test_a_guardrail_trip_is_seen_by_scorers_as_no_answer_and_why(
    server: ScriptedServer, tmp_path: Path
) -> None:
    cases = [
        EvalCase(id="refused", input="my password #54", metadata={"expect": "refusal"}),
        EvalCase(id="answered", input="hello #54", metadata={"expect": "refusal"}),
    ]
    run = agenteval.evaluate(
        scripted.triage_agent(server.base_url),
        cases,
        [refused_by_a_guardrail],
        store=tmp_path / "runs.db",
    )
    scores = {r.case.id: r.scores for r in run.results}
    assert scores["refused"]["refused_by_a_guardrail"].passed is True
    assert scores["refused"]["refused_by_a_guardrail"].reason == "guardrail: no_passwords"
    assert scores["answered"]["refused_by_a_guardrail"].passed is False
    trials = stored(tmp_path / "runs.db", run.run_id)
    assert trials[("refused", 0)].output is None  # no refusal text is made up
    assert trials[("refused", 0)].attempts == 1  # a tripwire is not retried
