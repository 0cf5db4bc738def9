"""The ADK-compatible API's per-turn rubric grading (`evalset.rubrics.PerTurnRubricCriterion`)
of a written conversation a simulated user then joined: each turn is graded with the
conversation up to that turn, as for a written case."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.judge.fakes import clear_provider_env
from tests.scorers.judged import answering_judge
from tests.scorers.simulated import FIRST, ORDER, refund_agent

import agenteval
from agenteval import EvalCase
from agenteval.evalset.rubrics import PerTurnRubricCriterion


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_provider_env(monkeypatch)


def test_each_turn_is_graded_with_the_conversation_up_to_it(tmp_path: Path) -> None:
    case = EvalCase(
        id="written-then-silent",
        conversation=[
            {"input": FIRST, "rubrics": [{"rubric_id": "asks", "content": "Asks for the order."}]},
            {"input": ORDER, "rubrics": [{"rubric_id": "email", "content": "Asks for an email."}]},
        ],
        user_simulation={"script": "tests.scorers.simulated:silent_user"},
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
    assert len(result.trial.simulation.turns) == 2
    first, second = judge.prompts["rubric_based"]
    assert FIRST in first and ORDER not in first
    assert FIRST in second and ORDER in second
