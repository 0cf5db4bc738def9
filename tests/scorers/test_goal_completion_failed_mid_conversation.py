"""`goal_completion` of a simulated conversation the agent failed in mid-way: the judge reads
each turn as played (the agent's earlier answers included), the failure on the turn it broke."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.judge.fakes import clear_provider_env
from tests.scorers.judged import answering_judge
from tests.scorers.simulated import EMAIL, FIRST, GOAL, ORDER

import agenteval
from agenteval import EvalCase, FailureCause

ASK_ORDER = "What is your order number?"
ASK_EMAIL = "Thanks. What is your email?"


def breaking_agent(messages: Any) -> str:
    """Asks for the order, then the email; breaks on the third user message."""
    said = [m["content"] for m in messages if m["role"] == "user"]
    if len(said) >= 3:
        raise RuntimeError("agent broke on the email")
    return [ASK_ORDER, ASK_EMAIL][len(said) - 1]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_provider_env(monkeypatch)


def test_the_judge_reads_every_turn_of_a_conversation_the_agent_broke(tmp_path: Path) -> None:
    case = EvalCase(
        id="breaks",
        user_simulation={"script": "tests.scorers.simulated:replying_user", "goal": GOAL},
    )
    with answering_judge(tmp_path) as judge:
        run = agenteval.evaluate(
            breaking_agent,
            [case],
            scorers=["goal_completion"],
            builtins=False,
            judge=judge.config,
            store=tmp_path / "runs.db",
        )
    (result,) = run.results
    assert result.trial.failure is not None
    assert result.trial.failure.cause is FailureCause.AGENT_ERROR
    (prompt,) = judge.prompts["goal_completion"]
    assert f"USER TURN 1: {FIRST}\nAGENT TURN 1: {ASK_ORDER}" in prompt
    assert f"USER TURN 2: {ORDER}\nAGENT TURN 2: {ASK_EMAIL}" in prompt
    assert f"USER TURN 3: {EMAIL}\nAGENT TURN 3 (failed): agent_error" in prompt
