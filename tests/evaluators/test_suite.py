"""`EvalSuite`: cases and evaluators run with `agenteval.evaluate`, reported as its `Run`."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.evaluators.conftest import Script, block, judge_config
from tests.judge.fakes import FakeOpenAI

import agenteval
from agenteval import (
    AgentStep,
    EvalCase,
    EvalSuite,
    PlanQuality,
    TaskCompletion,
    ToolCall,
    ToolCallAccuracy,
)
from agenteval.errors import ConfigError

CASES = [
    EvalCase(
        id="papers",
        input="Search for recent AI papers and write a summary",
        agent_trace=[
            AgentStep(
                thought="I need to search for recent papers first",
                tool_calls=[
                    ToolCall(
                        name="search",
                        arguments={"query": "AI papers 2025"},
                        result=["Paper A", "Paper B", "Paper C"],
                    )
                ],
            ),
            AgentStep(
                thought="Now I'll summarize what I found",
                tool_calls=[ToolCall(name="summarize")],
                output="Here are the key AI papers from 2025...",
            ),
        ],
        expected_tool_calls=["search", "summarize"],
    ),
    EvalCase(
        id="reversed",
        input="Summarize, then search",
        agent_trace=[AgentStep(tool_calls=[ToolCall(name="summarize"), ToolCall(name="search")])],
        expected_tool_calls=["search", "summarize"],
    ),
]


def run_agent(task: str) -> str:
    return f"Done: {task}"


def test_a_suite_run_is_an_evaluate_run_with_per_case_per_evaluator_scores(
    script: Script, fake: FakeOpenAI, tmp_path: Path
) -> None:
    script.set(task_completion=lambda body: 1.0 if "papers" in (block(body, "task") or "") else 0.5)
    suite = EvalSuite("Agent Eval", store=tmp_path / "runs.db")
    assert suite.add_cases(CASES) is suite
    suite.add_evaluators(
        ToolCallAccuracy(require_order=False),
        ToolCallAccuracy(require_order=True),
        ToolCallAccuracy(require_order=True, threshold=1.0, name="strict_order"),
        TaskCompletion(threshold=0.85),
    )
    report = suite.run(run_agent, judge=judge_config(fake, tmp_path))
    assert isinstance(report, agenteval.Run)
    assert report.info.target == "Agent Eval"
    by_case = {result.case.id: result.scores for result in report.results}
    assert set(by_case["papers"]) == {
        "tool_call_accuracy",
        "tool_call_accuracy[require_order]",
        "strict_order",
        "task_completion[threshold=0.85]",
    }
    assert by_case["papers"]["tool_call_accuracy[require_order]"].value == 1.0
    assert by_case["reversed"]["tool_call_accuracy"].value == 1.0
    assert by_case["reversed"]["tool_call_accuracy[require_order]"].value == 0.5
    assert by_case["reversed"]["strict_order"].passed is False
    assert by_case["papers"]["task_completion[threshold=0.85]"].passed is True
    assert by_case["reversed"]["task_completion[threshold=0.85]"].passed is False
    assert all(score.reason for scores in by_case.values() for score in scores.values())
    document = report.to_json()
    assert document["schema"] == "agenteval.run/1"
    assert set(document["summary"]["scorers"]) == set(by_case["papers"])
    assert report.summary.scorers["tool_call_accuracy[require_order]"].mean == 0.75


def test_a_suite_scores_recorded_traces_without_an_agent(tmp_path: Path) -> None:
    report = (
        EvalSuite("traces", store=tmp_path / "runs.db")
        .add_cases(*CASES)
        .add_evaluators(ToolCallAccuracy(require_order=True), PlanQuality())
        .run()
    )
    scores = {r.case.id: r.scores for r in report.results}
    assert scores["reversed"]["tool_call_accuracy[require_order]"].value == 0.5
    # No judge anywhere: no score, with the fix named; never a made-up number.
    plan = scores["papers"]["plan_quality"]
    assert plan.value is None and "--judge" in (plan.reason or "")


def test_cases_can_come_from_a_case_file(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    agenteval.dump_cases(CASES, path)
    suite = EvalSuite("from a file").add_cases(path)
    assert [case.id for case in suite.cases] == ["papers", "reversed"]


def test_an_empty_suite_says_what_it_lacks(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no cases"):
        EvalSuite("empty", store=tmp_path / "r.db").add_evaluators(ToolCallAccuracy()).run()
    with pytest.raises(ConfigError, match="no evaluators"):
        EvalSuite("no evaluators", store=tmp_path / "r.db").add_cases(CASES).run()
    with pytest.raises(ConfigError, match="not an EvalCase"):
        EvalSuite("bad").add_cases(["not a case"])  # type: ignore[list-item]


async def test_inside_an_event_loop_run_async_is_the_way(tmp_path: Path) -> None:
    suite = EvalSuite("async", store=tmp_path / "r.db").add_cases(CASES)
    suite.add_evaluators(ToolCallAccuracy())
    with pytest.raises(RuntimeError, match="run_async"):
        suite.run()
    report = await suite.run_async()
    assert report.summary.scorers["tool_call_accuracy"].mean == 1.0
