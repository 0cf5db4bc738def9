"""The criterion API's LLM criteria (the rubric criteria, the whole-conversation ones, the
response ones) judge a conversation with a simulated user as they judge a written one: the
user's words are the messages as played (`Trial.simulation`), never the case's `input` (None
for a simulated-only case). A loopback judge checks what each request sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.judge.fakes import clear_provider_env
from tests.scorers.judged import answering_judge
from tests.scorers.simulated import GOAL, SAID, refund_agent

import agenteval
from agenteval import EvalCase
from agenteval.scorers.reported import reported_value

SCRIPT = "tests.scorers.simulated:replying_user"

CASE = EvalCase(
    id="simulated-refund",
    expected_output="Refund issued for order 4417.",
    rubrics=[
        {"rubric_id": "r-final", "content": "The answer confirms the refund."},
        {
            "rubric_id": "r-tools",
            "content": "Refunds go through issue_refund.",
            "type": "TOOL_USE_QUALITY",
        },
        {"rubric_id": "r-path", "content": "One question a turn.", "type": "TRAJECTORY_QUALITY"},
    ],
    user_simulation={"script": "tests.scorers.simulated:replying_user", "goal": GOAL},
)

# Each criterion, by the template its judge is asked with.
WHOLE = {
    "final_response_match_v2": "correctness",
    "rubric_based_final_response_quality_v1": "rubric_based",
    "factual_accuracy_v1": "factual_accuracy",
    "hallucinations_v1": "groundedness",
    "safety_v1": "safety",
    "multi_turn_task_success_v1": "multi_turn_task_success",
    "multi_turn_trajectory_quality_v1": "multi_turn_trajectory_quality",
    "multi_turn_tool_use_quality_v1": "multi_turn_tool_use_quality",
    "rubric_based_multi_turn_trajectory_quality_v1": "conversation_rubrics",
}
PER_TURN = {"rubric_based_tool_use_quality_v1": "tool_use_rubrics"}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_provider_env(monkeypatch)


def test_every_llm_criterion_is_sent_every_simulated_message(tmp_path: Path) -> None:
    with answering_judge(tmp_path) as judge:
        run = agenteval.evaluate(
            refund_agent,
            [CASE],
            scorers=[*WHOLE, *PER_TURN],
            builtins=False,
            rubrics=[],
            judge=judge.config,
            store=tmp_path / "runs.db",
        )
    (result,) = run.results
    assert result.trial.simulation is not None
    for name in [*WHOLE, *PER_TURN]:
        score = result.scores[name]
        assert score.error is None, (name, score.error)
        assert score.value == 1.0, (name, score.reason)
    for name, template in WHOLE.items():
        (prompt,) = judge.prompts[template]
        missing = [said for said in SAID if said not in prompt]
        assert not missing, f"{name} was not sent {missing}"
    # One request a turn, each with that turn's message as the question.
    prompts = judge.prompts["tool_use_rubrics"]
    assert len(prompts) == len(SAID)
    for said, prompt in zip(SAID, prompts, strict=True):
        assert said in prompt


def test_a_conversation_criterion_reads_the_turns_as_played(tmp_path: Path) -> None:
    with answering_judge(tmp_path) as judge:
        agenteval.evaluate(
            refund_agent,
            [CASE],
            scorers=["multi_turn_task_success_v1"],
            builtins=False,
            rubrics=[],
            judge=judge.config,
            store=tmp_path / "runs.db",
        )
    (prompt,) = judge.prompts["multi_turn_task_success"]
    for number, said in enumerate(SAID, start=1):
        assert f"USER TURN {number}: {said}" in prompt
    assert "AGENT TURN 1: What is your order number?" in prompt
    assert "AGENT TURN 2: Thanks. What is your email?" in prompt
    assert "AGENT TURN 3 (tool call): issue_refund" in prompt


def test_written_turns_before_a_simulated_user_are_scored_against_their_own_answers(
    tmp_path: Path,
) -> None:
    # The written turn expects the agent to ask for the email; the simulated user then goes on,
    # and the conversation's last answer (the refund) is not the written turn's answer.
    case = EvalCase(
        id="written-then-simulated",
        conversation=[
            {"input": "It is order 4417.", "expected_final_response": "Thanks. What is your email?"}
        ],
        user_simulation={"script": "tests.scorers.simulated:replying_user", "goal": GOAL},
    )
    run = agenteval.evaluate(
        refund_agent,
        [case],
        scorers=["criteria.exact_match"],
        builtins=False,
        store=tmp_path / "runs.db",
    )
    (result,) = run.results
    assert [turn.source for turn in result.trial.simulation.turns] == ["written", "scripted"]
    score = result.scores["exact_match"]
    assert (score.value, score.passed) == (1.0, True), score.reason


def test_an_efficiency_metric_counts_the_simulated_turns(tmp_path: Path) -> None:
    # Three user messages, one tool call (in the last turn): a third of a call per turn.
    run = agenteval.evaluate(
        refund_agent,
        [EvalCase(id="simulated", user_simulation={"script": SCRIPT, "goal": GOAL})],
        scorers=["tool_call_count_v1"],
        builtins=False,
        store=tmp_path / "runs.db",
    )
    score = run.results[0].scores["tool_call_count_v1"]
    assert reported_value(score) == pytest.approx(1 / 3), score.reason
