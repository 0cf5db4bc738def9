"""An ADK agent through each of agenteval's doors, with no wrapper: `agenteval run` with
`agent: pkg.agent:root_agent` in agenteval.yaml, `EvalSuite.run`, `AgentEvaluator` and the pytest
plugin; and a tool that raises under the CLI ends the trial, not the run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, assert_clean, cli_env
from tests.frameworks.adk.scripted import weather_agent

from agenteval import ExactMatch
from agenteval.case import EvalCase
from agenteval.evalset import AgentEvaluator, EvalConfig, EvalSet
from agenteval.evaluators import EvalSuite
from agenteval.store import RunStore

pytest_plugins = ("pytester",)

SCRIPTED = Path(__file__).with_name("scripted.py")

AGENT = """
from pkg.scripted import weather_agent

root_agent = weather_agent(
    {
        "Weather in Paris?": [[("get_weather", {"city": "Paris"})], "Paris: 21C"],
        "Weather in Atlantis?": [[("get_weather", {"city": "Atlantis"})], "never"],
        "Remember rain": [[("remember", {"topic": "rain"})], "remembered rain"],
    }
)
"""

CASES = """
- id: paris
  input: Weather in Paris?
  expected_output: "Paris: 21C"
  expected_tools: [get_weather]
- id: atlantis
  input: Weather in Atlantis?
  expected_output: never
- id: rain
  input: Remember rain
  expected_output: remembered rain
  metadata:
    session_input: {app_name: weather, user_id: ada, state: {count: 1}}
    final_session_state: {topic: rain, count: 2}
"""


def _project(folder: Path) -> Path:
    package = folder / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    shutil.copy(SCRIPTED, package / "scripted.py")
    (package / "agent.py").write_text(AGENT)
    (folder / "cases.yaml").write_text(CASES)
    return folder


def test_agenteval_run_takes_the_agent_by_reference(tmp_path: Path) -> None:
    project = _project(tmp_path / "project")
    (project / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: pkg.agent:root_agent\ntrials: 2\nconcurrency: 8\n"
        "retries: 0\nstore: runs.db\n"
        "scorers: [exact_match, tool_arguments_valid, "
        "'agenteval.evalset.session:final_session_state_match']\n"
    )
    done = agenteval_cli(project, "run", ".", env=cli_env(GOOGLE_API_KEY="dummy"))
    assert_clean(done.stderr)
    with RunStore(project / "runs.db", create=False) as store:
        (row,) = store.list_runs()
        info = store.get_info(row.run_id)
        results = {(r.case.id, r.trial.trial): r for r in store.iter_results(row.run_id)}
    assert info.agent == "pkg.agent:root_agent", info.agent
    assert len(results) == 6
    for trial in (0, 1):
        paris = results[("paris", trial)]
        assert paris.trial.output == "Paris: 21C"
        assert paris.scores["exact_match"].passed is True
        assert paris.scores["tool_arguments_valid"].passed is True
        assert set(paris.trial.tool_specs) == {"get_weather", "remember"}
        atlantis = results[("atlantis", trial)].trial
        assert atlantis.failure is not None and atlantis.failure.cause.value == "agent_error"
        assert atlantis.tool_calls[0].error == "LookupError: no weather station in Atlantis"
        rain = results[("rain", trial)]
        assert rain.trial.metadata["session_state"] == {"topic": "rain", "count": 2}
        assert rain.scores["final_session_state_match"].passed is True
    # The failing trial is recorded as such; the run itself finishes as usual.
    assert done.returncode == 0, done.stdout + done.stderr


def test_eval_suite_runs_an_adk_agent(tmp_path: Path) -> None:
    agent = weather_agent({"Weather in Paris?": [[("get_weather", {"city": "Paris"})], "21C"]})
    suite = EvalSuite("adk", store=tmp_path / "runs.db")
    suite.add_cases(EvalCase(id="p", input="Weather in Paris?", expected_output="21C"))
    suite.add_evaluators(ExactMatch())
    run = suite.run(agent, trials=2)
    results = run.results
    assert [r.trial.output for r in results] == ["21C", "21C"]
    assert all(r.trial.tool_calls[0].name == "get_weather" for r in results)
    assert all(r.scores["exact_match"].passed for r in results)


def test_the_adk_compatible_agent_evaluator_takes_the_agent_object(tmp_path: Path) -> None:
    agent = weather_agent(
        {
            "Weather in Paris?": [[("get_weather", {"city": "Paris"})], "Paris: 21C"],
            "Remember rain": [[("remember", {"topic": "rain"})], "Noted."],
        }
    )
    cases = [
        EvalCase(id="p", input="Weather in Paris?", expected_trajectory=["get_weather"]),
        EvalCase(
            id="r",
            input="Remember rain",
            metadata={
                "session_input": {"app_name": "weather", "user_id": "ada", "state": {}},
                "final_session_state": {"topic": "rain"},
            },
        ),
    ]
    evaluator = AgentEvaluator(
        agent,
        EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}),
        store=tmp_path / "runs.db",
    )
    report = evaluator.evaluate_sync(EvalSet(id="weather", name="weather", cases=cases))
    by_id = {result.eval_id: result for result in report.results}
    assert by_id["p"].passed
    assert by_id["r"].criterion_results["final_session_state_match"].passed is True
    assert by_id["p"].tool_calls[0].name == "get_weather"


def test_the_pytest_plugin_runs_an_adk_agent(pytester: pytest.Pytester) -> None:
    _project(pytester.path)
    pytester.makeini(
        "[pytest]\nagenteval_store = evals/runs.db\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(
        test_weather="""
        from agenteval.pytest_plugin import agenteval_cases
        from pkg.agent import root_agent

        @agenteval_cases("cases.yaml", agent=root_agent, trials=2)
        def test_weather(agenteval_result):
            '''Each case of cases.yaml.'''
        """
    )
    pytester.syspathinsert(pytester.path)
    result = pytester.runpytest("-v", "-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_weather?atlantis? FAILED*"])
    result.stdout.fnmatch_lines(["*failed (agent_error): no weather station in Atlantis*"])
    with RunStore(pytester.path / "evals" / "runs.db", create=False) as store:
        (row,) = store.list_runs()
        results = list(store.iter_results(row.run_id))
    assert len(results) == 6
    assert {r.trial.output for r in results if r.case.id == "paris"} == {"Paris: 21C"}
