"""The agent evaluators (`TaskCompletion` first) judge a conversation with a simulated user as
they judge a written one: the task is what the user said as played (`Trial.simulation`), not
the case's `input` (None for a simulated-only case). A loopback judge checks what it was sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.judge.fakes import clear_provider_env
from tests.scorers.judged import answering_judge
from tests.scorers.simulated import GOAL, SAID, refund_agent

import agenteval
from agenteval import EvalCase

CASE = EvalCase(
    id="simulated-refund",
    context="The customer ordered a kettle (order 4417) last week.",
    user_simulation={"script": "tests.scorers.simulated:replying_user", "goal": GOAL},
)

# Each evaluator that shows the judge the task, by the template(s) it asks with.
EVALUATORS = {
    "task_completion": ["task_completion"],
    "plan_quality": ["plan_quality"],
    "step_faithfulness": ["step_faithfulness"],
    "tool_argument_accuracy": ["tool_argument_accuracy"],
    "tool_call_necessity": ["tool_call_necessity"],
    "agent_memory_eval": [
        "agent_memory_uses_context",
        "agent_memory_no_hallucination",
        "agent_memory_ignores_stale",
    ],
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_provider_env(monkeypatch)


def test_task_completion_judges_the_conversation_as_played(tmp_path: Path) -> None:
    with answering_judge(tmp_path) as judge:
        run = agenteval.evaluate(
            refund_agent,
            [CASE],
            scorers=["task_completion"],
            builtins=False,
            rubrics=[],
            judge=judge.config,
            store=tmp_path / "runs.db",
        )
    score = run.results[0].scores["task_completion"]
    assert (score.value, score.passed) == (1.0, True), score.reason
    (prompt,) = judge.prompts["task_completion"]
    # The task is every user message, in the order played, as a written conversation's is.
    assert "\n".join(f"user: {said}" for said in SAID) in prompt
    assert "Step 3" in prompt and "issue_refund" in prompt


def test_every_evaluator_that_reads_the_task_is_sent_every_simulated_message(
    tmp_path: Path,
) -> None:
    with answering_judge(tmp_path) as judge:
        run = agenteval.evaluate(
            refund_agent,
            [CASE],
            scorers=list(EVALUATORS),
            builtins=False,
            rubrics=[],
            judge=judge.config,
            store=tmp_path / "runs.db",
        )
    scores = run.results[0].scores
    for name, templates in EVALUATORS.items():
        assert scores[name].value is not None, (name, scores[name].reason)
        for template in templates:
            for prompt in judge.prompts[template]:
                missing = [said for said in SAID if said not in prompt]
                assert not missing, f"{name} ({template}) was not sent {missing}"
