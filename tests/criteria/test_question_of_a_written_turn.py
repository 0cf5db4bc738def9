"""The question a judge reads for a written turn a simulated user continued is the conversation
up to that turn: the user's later messages (answers to questions the agent had not asked yet)
are not part of what that turn's answer replies to."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.judge.fakes import clear_provider_env
from tests.scorers.judged import answering_judge
from tests.scorers.simulated import EMAIL, FIRST, ORDER, refund_agent

import agenteval
from agenteval import EvalCase
from agenteval.criteria import FactualAccuracyCriterion, LLMJudgeCriterion


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_provider_env(monkeypatch)


@pytest.mark.parametrize(
    ("criterion", "template"),
    [(LLMJudgeCriterion, "correctness"), (FactualAccuracyCriterion, "factual_accuracy")],
)
def test_the_question_ends_at_the_judged_turn(
    tmp_path: Path, criterion: type, template: str
) -> None:
    case = EvalCase(
        id="written-then-simulated",
        conversation=[{"input": FIRST, "expected_final_response": "What is your order number?"}],
        user_simulation={"script": "tests.scorers.simulated:replying_user"},
    )
    with answering_judge(tmp_path) as judge:
        run = agenteval.evaluate(
            refund_agent,
            [case],
            scorers=[criterion()],
            builtins=False,
            judge=judge.config,
            store=tmp_path / "runs.db",
        )
    (result,) = run.results
    assert [turn.user for turn in result.trial.simulation.turns] == [FIRST, ORDER, EMAIL]
    (prompt,) = judge.prompts[template]
    question = prompt.split("<<<BEGIN question", 1)[1].split("<<<END question", 1)[0]
    assert FIRST in question
    assert ORDER not in question and EMAIL not in question
