"""A LangGraph agent through every door: `agenteval run` with `agent: mod:graph` in
agenteval.yaml (a child process), `EvalSuite`, and the pytest plugin; and a graph that cannot be
an agent refused by the CLI in one message."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, assert_clean, cli_env
from tests.frameworks.langgraph.scripted_chat import react_agent

from agenteval import EvalCase
from agenteval.case import Invocation
from agenteval.evalset import AgentEvaluator, EvalConfig
from agenteval.evalset.report import CaseStatus
from agenteval.evaluators import EvalSuite, ToolCallAccuracy
from agenteval.store import RunStore
from agenteval.trace import ToolCall

pytest_plugins = ("pytester",)

ROOT = Path(__file__).resolve().parents[3]

AGENT = """
from langgraph.checkpoint.memory import InMemorySaver

from tests.frameworks.langgraph.scripted_chat import add, react_agent

graph = react_agent(checkpointer=InMemorySaver())
"""

CASES = """
- id: sum
  input: add 2 40
  expected_output: "results: add=42"
  expected_tools: [add]
- id: weather
  input: weather Oslo and Lima
  expected_tools: [get_weather, get_weather]
- id: declined
  input: charge 9
- id: talk
  conversation:
    - input: hello
      expected_final_response: "echo: hello"
    - input: recall
      expected_final_response: "you first said: hello"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "lg_agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "cases.yaml").write_text(CASES, encoding="utf-8")
    return tmp_path


def _env() -> dict[str, str]:
    # The agent module imports the scripted model from this repository's tests.
    return cli_env(PYTHONPATH=f"{ROOT / 'src'}:{ROOT}", NO_PROXY="*")


def test_agenteval_run_takes_a_graph_named_in_agenteval_yaml(project: Path) -> None:
    (project / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: lg_agent:graph\ntrials: 2\nconcurrency: 8\n",
        encoding="utf-8",
    )
    done = agenteval_cli(project, "run", ".", env=_env())
    assert_clean(done.stderr)
    assert done.returncode == 0, done.stdout + done.stderr
    with RunStore(project / ".agenteval" / "runs.db", create=False) as store:
        (row,) = store.list_runs()
        info = store.get_info(row.run_id)
        results = {(r.case.id, r.trial.trial): r for r in store.iter_results(row.run_id)}
    assert info.agent == "lg_agent:graph"
    assert len(results) == 8
    # The tools' schemas travel with each trial (the run's own `tools` lists only the tools
    # agenteval declares itself, `@agenteval.tool`).
    assert all(
        set(r.trial.tool_specs) == {"add", "get_weather", "charge"} for r in results.values()
    )
    total = results["sum", 0]
    assert total.trial.output == "results: add=42"
    assert total.scores["exact_match"].passed is True
    assert total.scores["tool_arguments_valid"].passed is True
    assert [c.name for c in results["weather", 1].trial.tool_calls] == ["get_weather"] * 2
    assert results["declined", 0].scores["tool_execution"].passed is False
    assert results["talk", 0].trial.metadata["turn_outputs"] == [
        "echo: hello",
        "you first said: hello",
    ]
    threads = {r.trial.metadata["thread_id"] for r in results.values()}
    assert len(threads) == 8


def test_agenteval_run_refuses_a_tool_named_as_the_agent_in_one_message(project: Path) -> None:
    (project / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: lg_agent:add\n", encoding="utf-8"
    )
    done = agenteval_cli(project, "run", ".", env=_env())
    assert done.returncode == 2
    assert "'add' is a LangChain tool, not an agent" in done.stderr
    assert "create_react_agent" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_eval_suite_runs_a_graph_object(tmp_path: Path) -> None:
    suite = EvalSuite("langgraph-suite", store=tmp_path / "runs.db")
    suite.add_cases(
        EvalCase(id="sum", input="add 1 1", expected_tool_calls=[{"name": "add"}]),
        EvalCase(id="hello", input="hello", expected_tool_calls=[]),
    )
    suite.add_evaluators(ToolCallAccuracy(), "tool_arguments_valid")
    report = suite.run(react_agent(), trials=2, concurrency=4)
    scores = {(r.case.id, r.trial.trial): r.scores for r in report.results}
    assert len(scores) == 4
    assert all(s["tool_call_accuracy"].value == 1.0 for s in scores.values())
    assert scores["sum", 0]["tool_arguments_valid"].passed is True
    assert report.info.target == "langgraph-suite"


def test_the_pytest_plugin_runs_a_graph_object(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", cases=CASES)
    (pytester.path / "lg_agent.py").write_text(AGENT, encoding="utf-8")
    pytester.syspathinsert()
    pytester.makeini(
        "[pytest]\nagenteval_store = evals/runs.db\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(
        test_graph="""
        from agenteval.pytest_plugin import agenteval_cases
        from lg_agent import graph

        @agenteval_cases("cases.yaml", agent=graph, trials=2)
        def test_graph(agenteval_result):
            assert all(output for output in agenteval_result.outputs)
        """
    )
    result = pytester.runpytest("-v", "-p", "no:randomly")
    # talk's expected_final_response is the criteria's to check, not the built-ins': nothing
    # judged it, so it is skipped, not passed.
    result.assert_outcomes(passed=2, failed=1, skipped=1)
    result.stdout.fnmatch_lines(["*test_graph?declined? FAILED*", "*test_graph?talk? SKIPPED*"])
    result.stdout.fnmatch_lines(["*tool_execution failed*"])
    with RunStore(pytester.path / "evals" / "runs.db", create=False) as store:
        (row,) = store.list_runs()
        info = store.get_info(row.run_id)
        done = list(store.iter_results(row.run_id))
    assert info.agent == "langgraph:support"
    assert len(done) == 8


async def test_agent_evaluator_runs_a_graph_object_turn_by_turn(tmp_path: Path) -> None:
    case = EvalCase(
        id="talk",
        conversation=[
            Invocation(
                input="add 2 3",
                expected_tool_trajectory=[ToolCall(name="add", args={"a": 2, "b": 3})],
                expected_final_response="results: add=5",
            ),
            Invocation(input="recall", expected_final_response="you first said: add 2 3"),
        ],
    )
    config = EvalConfig(criteria={"tool_trajectory_avg_score": 1.0})
    evaluator = AgentEvaluator(react_agent(), config, trials=2, store=tmp_path / "runs.db")
    report = await evaluator.evaluate([case])
    assert [(r.eval_id, r.status) for r in report.results] == [
        ("talk", CaseStatus.PASSED),
        ("talk", CaseStatus.PASSED),
    ]
    first = report.results[0]
    assert first.actual_response == "you first said: add 2 3"
    assert [c.name for c in first.tool_calls] == ["add"]
    assert first.criterion_results["tool_trajectory_avg_score"].value == 1.0
