"""Per-turn rubrics of written turns a simulated user then continued."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.judge.fakes import clear_provider_env
from tests.scorers.judged import answering_judge
from tests.scorers.simulated import EMAIL, FIRST, ORDER, refund_agent

import agenteval
from agenteval import EvalCase
from agenteval.evalset.rubrics import PerTurnRubricCriterion


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_provider_env(monkeypatch)


def test_written_turn_rubrics_graded_on_their_turn(tmp_path: Path) -> None:
    case = EvalCase(
        id="written-then-simulated",
        conversation=[
            {"input": FIRST, "rubrics": [{"rubric_id": "asks", "content": "Asks for the order."}]},
            {"input": ORDER, "rubrics": [{"rubric_id": "email", "content": "Asks for an email."}]},
        ],
        user_simulation={"script": "tests.scorers.simulated:replying_user"},
    )
    with answering_judge(tmp_path) as judge:
        run = agenteval.evaluate(
            refund_agent,
            [case],
            scorers=[PerTurnRubricCriterion()],
            builtins=False,
            rubrics=[],
            judge=judge.config,
            store=tmp_path / "runs.db",
        )
    (result,) = run.results
    assert result.trial.simulation is not None
    assert [turn.user for turn in result.trial.simulation.turns] == [FIRST, ORDER, EMAIL]
    first, second = judge.prompts["rubric_based"]
    # Each written turn's rubric is graded on that turn's answer, not the conversation's last.
    assert "Asks for the order." in first and "Asks for an email." not in first
    assert "What is your order number?" in first and "Refund issued" not in first
    assert "Asks for an email." in second and "What is your email?" in second
    assert "Refund issued" not in second
    score = result.scores["rubric_based_final_response_quality_v1"]
    assert [entry["turn"] for entry in score.details["per_turn"]] == [1, 2]
