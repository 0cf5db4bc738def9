"""The tool trajectory the written turns of a conversation expect, after a simulated user went
on: compared with the calls of those turns (as their expected responses are with their answers,
`criteria.text.turns_to_score`), not with calls the simulated turns led to."""

from __future__ import annotations

from pathlib import Path

from tests.scorers.simulated import EMAIL, FIRST, ORDER, refund_agent

import agenteval
from agenteval import EvalCase, TrialResult
from agenteval.criteria import TrajectoryMatchCriterion
from agenteval.criteria.trajectory import ToolNameMatchCriterion


def _run(tmp_path: Path, case: EvalCase) -> TrialResult:
    run = agenteval.evaluate(
        refund_agent,
        [case],
        scorers=[TrajectoryMatchCriterion(), ToolNameMatchCriterion()],
        builtins=False,
        store=tmp_path / "runs.db",
    )
    (result,) = run.results
    return result


def test_written_turns_expecting_no_call_are_matched_on_their_own_calls(tmp_path: Path) -> None:
    case = EvalCase(
        id="asks-first",
        conversation=[
            {"input": FIRST, "expected_tool_trajectory": []},
            {"input": ORDER, "expected_tool_trajectory": []},
        ],
        user_simulation={"script": "tests.scorers.simulated:replying_user"},
    )
    result = _run(tmp_path, case)
    assert result.trial.simulation is not None
    assert [turn.user for turn in result.trial.simulation.turns] == [FIRST, ORDER, EMAIL]
    assert [call.name for call in result.trial.tool_calls] == ["issue_refund"]  # turn 3
    assert result.scores["tool_trajectory_avg_score"].value == 1.0
    assert result.scores["tool_name_match_score"].value == 1.0


def test_a_case_wide_trajectory_is_the_whole_conversations(tmp_path: Path) -> None:
    case = EvalCase(
        id="whole",
        input=FIRST,
        expected_trajectory=[{"name": "issue_refund"}],
        user_simulation={"script": "tests.scorers.simulated:replying_user"},
    )
    result = _run(tmp_path, case)
    assert result.scores["tool_trajectory_avg_score"].value == 1.0
