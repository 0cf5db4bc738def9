"""What the user said, read in one place (`judge.played.user_words`): a written case's words as
written, a simulated user's as played; the judge rubrics and `tool_faithfulness` read them."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.judge.fakes import clear_provider_env
from tests.scorers.judged import answering_judge
from tests.scorers.simulated import GOAL, SAID, refund_agent

import agenteval
from agenteval import EvalCase, SimulatedConversation, Trial, UserTurn
from agenteval.judge.played import case_question, turns_of, user_words

SIMULATED = EvalCase(
    id="simulated-refund",
    expected_output="Refund issued for order 4417.",
    user_simulation={"script": "tests.scorers.simulated:replying_user", "goal": GOAL},
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_provider_env(monkeypatch)


def _played(*said: str) -> SimulatedConversation:
    turns = [UserTurn(user=s, source="simulated", agent=f"answer {i}") for i, s in enumerate(said)]
    return SimulatedConversation(user="test", turns=turns)


def test_written_cases_read_as_before() -> None:
    assert case_question(EvalCase(input="What is 2+2?")) == "What is 2+2?"
    listed = EvalCase(
        input=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    )
    assert case_question(listed) == "system: Be brief.\nuser: Hi"
    talk = EvalCase(conversation=[{"input": "one"}, {"input": "two"}])
    assert case_question(talk, Trial()) == "user: one\nuser: two"
    assert user_words(talk).turns == ("one", "two")


def test_a_simulated_trial_is_read_from_what_it_played() -> None:
    case = EvalCase(input="Hi", user_simulation={"goal": GOAL})
    trial = Trial(output="answer 1", simulation=_played("Hi", "order 4417"))
    assert case_question(case) == "Hi"  # the case alone: only its written words
    assert case_question(case, trial) == "user: Hi\nuser: order 4417"
    only = EvalCase(user_simulation={"goal": GOAL})
    assert case_question(only, Trial()) == ""
    assert case_question(only, trial) == "user: Hi\nuser: order 4417"


def test_messages_before_the_first_turn_go_with_it() -> None:
    case = EvalCase(
        input=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        user_simulation={"goal": GOAL},
    )
    trial = Trial(
        steps=[{"output": "answer 0"}, {"output": "answer 1"}],
        simulation=_played("Hi", "order 4417"),
    )
    words = user_words(case, trial)
    assert words.before == (("system", "Be brief."),)
    assert words.turns == ("Hi", "order 4417")
    turns = turns_of(case, trial)
    assert [turn.user for turn in turns] == ["system: Be brief.\nuser: Hi", "order 4417"]
    assert [turn.answer for turn in turns] == ["answer 0", "answer 1"]
    assert [turn.source for turn in turns] == ["simulated", "simulated"]


def test_the_judge_rubrics_are_sent_every_simulated_message(tmp_path: Path) -> None:
    with answering_judge(tmp_path) as judge:
        run = agenteval.evaluate(
            refund_agent,
            [SIMULATED],
            builtins=False,
            rubrics=["correctness", "answer_relevance", "groundedness"],
            judge=judge.config,
            store=tmp_path / "runs.db",
        )
    scores = run.results[0].scores
    for rubric in ("correctness", "answer_relevance", "groundedness"):
        assert scores[rubric].value == 1.0, (rubric, scores[rubric].reason)
        (prompt,) = judge.prompts[rubric]
        assert "\n".join(f"user: {said}" for said in SAID) in prompt, rubric


def test_a_number_the_simulated_user_gave_is_grounded(tmp_path: Path) -> None:
    # 4417 is in no tool result: the user said it, so the answer may repeat it.
    run = agenteval.evaluate(
        refund_agent,
        [SIMULATED],
        scorers=["tool_faithfulness"],
        builtins=False,
        store=tmp_path / "runs.db",
    )
    score = run.results[0].scores["tool_faithfulness"]
    assert (score.value, score.passed) == (1.0, True), score.reason
