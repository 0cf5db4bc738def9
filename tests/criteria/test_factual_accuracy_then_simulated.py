"""`factual_accuracy_v1` of written turns a simulated user continued: the last written turn's
expected response is the reference of that turn's answer, not of the conversation's last one."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.judge.fakes import clear_provider_env
from tests.scorers.judged import answering_judge
from tests.scorers.simulated import EMAIL, FIRST, ORDER, refund_agent

import agenteval
from agenteval import EvalCase
from agenteval.criteria import FactualAccuracyCriterion


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_provider_env(monkeypatch)


def test_the_reference_is_checked_against_its_own_turns_answer(tmp_path: Path) -> None:
    case = EvalCase(
        id="written-then-simulated",
        conversation=[
            {"input": FIRST, "expected_final_response": "What is your order number?"},
        ],
        user_simulation={"script": "tests.scorers.simulated:replying_user"},
    )
    with answering_judge(tmp_path) as judge:
        run = agenteval.evaluate(
            refund_agent,
            [case],
            scorers=[FactualAccuracyCriterion()],
            builtins=False,
            judge=judge.config,
            store=tmp_path / "runs.db",
        )
    (result,) = run.results
    assert result.trial.simulation is not None
    assert [turn.user for turn in result.trial.simulation.turns] == [FIRST, ORDER, EMAIL]
    (prompt,) = judge.prompts["factual_accuracy"]
    answer = prompt.split("<<<BEGIN answer", 1)[1]
    assert "What is your order number?" in answer
    assert "Refund issued" not in answer
