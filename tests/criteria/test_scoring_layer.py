"""Criteria as scorers of agenteval's one scoring layer: in `agenteval.evaluate`, by object and
by name, with the run's judge, in rescoring, and from the command line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_process import CHECKOUT_SRC
from tests.judge.fakes import FakeOpenAI

import agenteval
from agenteval import (
    CompositeCriterion,
    ContainsKeywordsCriterion,
    CriterionConfig,
    EvalCase,
    ExactMatchCriterion,
    Invocation,
    MatchType,
    ResponseMatchCriterion,
    ToolCall,
    TrajectoryMatchCriterion,
)
from agenteval.errors import ScorerError
from agenteval.judge.judge import JudgeConfig


@agenteval.tool
def find_order(order_id: str) -> dict[str, str]:
    """Look an order up."""
    return {"id": order_id, "status": "shipped"}


@agenteval.tool
def refund(order_id: str) -> str:
    """Refund an order."""
    return "refunded"


def support_agent(question: str) -> str:
    order = find_order("A1")
    if "refund" in question:
        refund("A1")
        return "Your refund is on its way."
    return f"Order {order['id']} is {order['status']}."


CASES = [
    EvalCase(
        id="refund",
        input="Please refund order A1",
        conversation=None,
        expected_output="your refund is on its way",
        expected_trajectory=["find_order", {"name": "refund", "arguments": {"order_id": "A1"}}],
    ),
    EvalCase(
        id="status",
        conversation=[
            Invocation(
                input="Where is order A1?",
                expected_final_response="Order A1 is shipped.",
                expected_tool_trajectory=[ToolCall(name="find_order", args={"order_id": "A1"})],
            )
        ],
    ),
]


def in_order() -> TrajectoryMatchCriterion:
    return TrajectoryMatchCriterion(
        config=CriterionConfig.trajectory(
            threshold=1.0, match_type=MatchType.IN_ORDER, check_args=True
        )
    )


def test_a_criterion_object_scores_every_trial(tmp_path: Path) -> None:
    run = agenteval.evaluate(
        support_agent, CASES, scorers=[in_order()], store=tmp_path / "r.db", trials=2
    )
    for result in run.results:
        score = result.scores["tool_trajectory_avg_score"]
        assert (score.value, score.passed) == (1.0, True), result.case.id
        assert score.details["match_type"] == "in_order"
    stats = run.summary.scorers["tool_trajectory_avg_score"]
    assert (stats.scored, stats.pass_rate) == (4, 1.0)


def test_a_criterion_named_like_a_builtin_is_scored_beside_it(tmp_path: Path) -> None:
    # The built-in forgives case and a final period; seed 003's exact match does not. The
    # built-in keeps its name; the criterion is scored as `exact_match_2`.
    run = agenteval.evaluate(
        support_agent, CASES, scorers=[ExactMatchCriterion()], store=tmp_path / "r.db"
    )
    by_case = {r.case.id: r.scores["exact_match_2"] for r in run.results}
    assert by_case["refund"].value == 0.0 and by_case["refund"].details["match"] is False
    assert by_case["status"].value == 1.0
    assert {r.case.id: r.scores["exact_match"].value for r in run.results}["refund"] == 1.0


def test_criteria_are_named_with_their_settings(tmp_path: Path) -> None:
    run = agenteval.evaluate(
        support_agent,
        CASES,
        scorers=[
            {"name": "tool_trajectory_avg_score", "match_type": "IN_ORDER", "check_args": True}
        ],
        builtins=False,
        store=tmp_path / "r.db",
    )
    assert run.info.scorers == [
        {"name": "tool_trajectory_avg_score", "match_type": "IN_ORDER", "check_args": True}
    ]
    assert all(r.scores["tool_trajectory_avg_score"].value == 1.0 for r in run.results)
    with pytest.raises(ScorerError, match="match_type"):
        agenteval.evaluate(
            support_agent,
            CASES,
            scorers=[{"name": "tool_trajectory_avg_score", "match_type": "sideways"}],
            store=tmp_path / "r.db",
        )


def test_a_criterion_object_is_stored_by_name_and_rescored(tmp_path: Path) -> None:
    store = tmp_path / "r.db"
    keywords = ContainsKeywordsCriterion(keywords=["refund"])
    run = agenteval.evaluate(
        support_agent, CASES, scorers=[in_order(), keywords], builtins=False, store=store
    )
    assert run.info.scorers == [
        {
            "name": "tool_trajectory_avg_score",
            "threshold": 1.0,
            "match_type": "in_order",
            "check_args": True,
        },
        {"name": "contains_keywords", "keywords": ["refund"]},
    ]
    again = agenteval.rescore(run.run_id, store=store)
    assert {r.case.id: r.scores["contains_keywords"].value for r in again.results} == {
        "refund": 1.0,
        "status": 0.0,
    }


def test_a_bad_config_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    criterion = ResponseMatchCriterion(config=CriterionConfig(api_style="soap"))
    with pytest.raises(ScorerError, match="api_style"):
        agenteval.evaluate(support_agent, CASES, scorers=[criterion], store=tmp_path / "r.db")


def test_a_disabled_criterion_gives_no_score(tmp_path: Path) -> None:
    off = TrajectoryMatchCriterion(config=CriterionConfig(enabled=False))
    run = agenteval.evaluate(support_agent, CASES, scorers=[off], store=tmp_path / "r.db")
    score = run.results[0].scores["tool_trajectory_avg_score"]
    assert score.value is None and "disabled" in (score.reason or "")


def test_a_trial_that_timed_out_is_not_judged(tmp_path: Path) -> None:
    async def slow(question: str) -> str:
        await asyncio.sleep(5)
        return "late"

    run = agenteval.evaluate(
        slow, CASES[:1], scorers=[in_order()], timeout=0.05, retries=0, store=tmp_path / "r.db"
    )
    score = run.results[0].scores["tool_trajectory_avg_score"]
    assert score.value is None and (score.reason or "").startswith("not judged")


def test_llm_criteria_use_the_runs_judge(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    judge = JudgeConfig(
        spec="openai:gpt-4o-mini", base_url=fake_openai.base_url, cache_path=tmp_path / "c.db"
    )
    composite = CompositeCriterion([ResponseMatchCriterion(), in_order()])
    run = agenteval.evaluate(
        support_agent,
        CASES,
        scorers=[ResponseMatchCriterion(), composite],
        judge=judge,
        rubrics=[],
        store=tmp_path / "r.db",
    )
    score = run.results[0].scores["response_match_score"]
    assert score.value == 1.0
    assert score.judge is not None and score.judge.judge == "openai:gpt-4o-mini"
    assert score.usage is not None and score.usage.input_tokens == 36  # 3 samples × 12
    assert run.results[0].scores["composite_criterion"].value == 1.0
    assert run.summary.judge_usage.input_tokens > 0


def test_llm_criteria_without_a_judge_give_no_score(tmp_path: Path) -> None:
    run = agenteval.evaluate(
        support_agent, CASES, scorers=[ResponseMatchCriterion()], store=tmp_path / "r.db"
    )
    score = run.results[0].scores["response_match_score"]
    assert score.value is None and score.error is None
    assert (score.reason or "").startswith("No LLM provider available")
    assert run.summary.scorers["response_match_score"].skipped == 2


CLI_CRITERIA = """
from agenteval import CriterionConfig, MatchType, TrajectoryMatchCriterion

in_order = TrajectoryMatchCriterion(
    config=CriterionConfig.trajectory(match_type=MatchType.IN_ORDER, check_args=True)
)
"""

CLI_AGENT = """
import agenteval

@agenteval.tool
def lookup(city: str) -> dict:
    return {"city": city}

def answer(question: str) -> str:
    lookup("Paris")
    return "Paris"
"""

CLI_CASES = """
- id: capital
  input: What is the capital of France?
  expected_output: Paris
  expected_trajectory: [{name: lookup, arguments: {city: Paris}}]
"""


@pytest.mark.parametrize(
    "scorer", ["my_criteria:in_order", "tool_trajectory_avg_score", "tool_name_match_score"]
)
def test_the_command_line_takes_criteria(tmp_path: Path, scorer: str) -> None:
    (tmp_path / "my_criteria.py").write_text(CLI_CRITERIA)
    (tmp_path / "my_agent.py").write_text(CLI_AGENT)
    (tmp_path / "cases.yaml").write_text(CLI_CASES)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agenteval",
            "run",
            "cases.yaml",
            "--agent",
            "my_agent:answer",
            "--scorer",
            scorer,
            "--json",
            "out.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "160", "PYTHONPATH": CHECKOUT_SRC},
    )
    assert done.returncode == 0, done.stderr
    scores = json.loads((tmp_path / "out.json").read_text())["results"][0]["scores"]
    name = (
        "tool_name_match_score"
        if scorer == "tool_name_match_score"
        else "tool_trajectory_avg_score"
    )
    assert scores[name]["value"] == 1.0
