"""`agenteval judge --rubric goal_completion` and `agenteval rescore`, as a user runs them, on a
stored run of simulated conversations: judged from the stored conversation, with no simulator
(the child process has none to call), against a loopback OpenAI-compatible judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, cli_env
from tests.judge.fakes import FakeOpenAI, clear_provider_env
from tests.scorers.judged import AnsweringJudge
from tests.scorers.simulated import GOAL, SAID, CountingUser, refund_agent

import agenteval
from agenteval import EvalCase


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_provider_env(monkeypatch)


def test_the_cli_judges_and_rescores_a_stored_simulated_run(tmp_path: Path) -> None:
    simulator = CountingUser()
    run = agenteval.evaluate(
        refund_agent,
        [EvalCase(id="simulated", user_simulation={"goal": GOAL})],
        scorers=["turns_to_goal"],
        builtins=False,
        user_simulator=simulator,
        store=tmp_path / "runs.db",
    )
    played = simulator.calls
    with FakeOpenAI() as fake:
        judge = AnsweringJudge(fake, tmp_path)
        env = cli_env(COLUMNS="160", OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="test")
        judged = agenteval_cli(
            tmp_path,
            "judge",
            run.run_id,
            "--judge",
            "openai:gpt-4o-mini",
            "--rubric",
            "goal_completion",
            "--store",
            "runs.db",
            "--json",
            "judged.json",
            env=env,
            timeout=300,
        )
        assert judged.returncode == 0, judged.stderr
        assert judge.templates == ["goal_completion"]
        rescored = agenteval_cli(
            tmp_path,
            "rescore",
            run.run_id,
            "--store",
            "runs.db",
            "--json",
            "rescored.json",
            env=env,
            timeout=300,
        )
        assert rescored.returncode == 0, rescored.stderr
    assert simulator.calls == played
    (prompt,) = judge.prompts["goal_completion"]
    assert all(said in prompt for said in SAID)
    for document in ("judged.json", "rescored.json"):
        (result,) = json.loads((tmp_path / document).read_text())["results"]
        assert result["scores"]["goal_completion"]["value"] == 1.0, document
        turns = result["scores"]["turns_to_goal"]
        assert turns["value"] is None
        assert turns["details"]["agenteval.reported"] == {"value": 3, "unit": "user messages"}
