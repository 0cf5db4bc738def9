"""A case file's scripted users in a run: the script beside the case file plays from any
working directory; a script that does not load stops the run before its first trial, naming
the case file, the line and the case; a resume loads the same scripts again, from anywhere."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agenteval import (
    EndReason,
    RunStore,
    UserReply,
    UserRequest,
    evaluate,
    evaluate_async,
    load_cases,
)
from agenteval.errors import DatasetError
from agenteval.evaluators import EvalSuite

USERS_PY = '''
import re

def refund_user(messages):
    """Answers what the agent asks, one value at a time; stops once refunded."""
    if not messages:
        return "My order arrived broken."
    last = messages[-1]["content"].lower()
    if "refund issued" in last:
        return None
    if "order number" in last:
        return "8812"
    if "email" in last:
        return "ana@example.com"
    return "?"
'''

CASES = """\
- id: first
  user_simulation:
    script: users.py:refund_user
    max_turns: 5
- id: second
  user_simulation:
    script: users:refund_user
"""


class Agent:
    """Asks for the order number, then the email, then refunds; holds `held`'s first turn
    until the gate opens (a run stopped midway), and counts its calls."""

    def __init__(self, held: str | None = None) -> None:
        self.held = held
        self.reached = asyncio.Event()
        self.calls = 0

    async def __call__(self, messages: Any) -> str:
        self.calls += 1
        said = " ".join(m["content"] for m in messages if m["role"] == "user")
        if self.held is not None and "8812" not in said:
            self.reached.set()
            await asyncio.sleep(3600)
        if "8812" not in said:
            return "What is your order number?"
        if "@" not in said:
            return "What is your email?"
        return "Refund issued for order 8812."


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project" / "evals"
    folder.mkdir(parents=True)
    (folder / "users.py").write_text(USERS_PY)
    (folder / "cases.yaml").write_text(CASES)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # not the case file's folder
    return folder


def test_a_script_beside_the_case_file_plays_from_another_directory(
    project: Path, tmp_path: Path
) -> None:
    run = evaluate(Agent(), project / "cases.yaml", store=tmp_path / "runs.db")

    assert run.complete
    for result in run.results:
        simulation = result.trial.simulation
        assert simulation is not None and result.trial.failure is None
        assert [turn.user for turn in simulation.turns] == [
            "My order arrived broken.",
            "8812",
            "ana@example.com",
        ]
        assert simulation.end_reason is EndReason.USER_STOPPED
        assert simulation.user.endswith("users.py:refund_user")


def test_a_script_that_does_not_load_stops_the_run_before_it_starts(
    project: Path, tmp_path: Path
) -> None:
    (project / "cases.yaml").write_text(CASES.replace("users:refund_user", "users:refund_usr"))
    agent = Agent()

    with pytest.raises(DatasetError) as caught:
        evaluate(agent, project / "cases.yaml", store=tmp_path / "runs.db")

    error = caught.value
    assert (error.file, error.line, error.case) == (str(project / "cases.yaml"), 7, "second")
    assert error.field == "user_simulation.script"
    assert "users:refund_usr cannot be loaded" in error.message
    assert error.hint == "did you mean users:refund_user?"
    assert agent.calls == 0


async def _stopped_midway(agent: Agent, cases: Path, store: Path) -> str:
    task = asyncio.create_task(evaluate_async(agent, cases, store=store, concurrency=1))
    await agent.reached.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with RunStore(store) as runs:
        (row,) = runs.list_runs()
        assert row.status.value != "finished"
        return row.run_id


def test_a_resume_loads_the_same_scripts_from_anywhere(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "runs.db"
    agent = Agent(held="first")
    run_id = asyncio.run(_stopped_midway(agent, project / "cases.yaml", store))
    monkeypatch.chdir(project.parent.parent)  # yet another directory
    agent.held = None

    resumed = evaluate(agent, load_cases(project / "cases.yaml"), store=store, resume=run_id)

    assert resumed.complete
    for result in resumed.results:
        assert result.trial.output == "Refund issued for order 8812."
        assert result.trial.simulation is not None
        assert len(result.trial.simulation.turns) == 3


def test_a_resume_whose_script_is_gone_stops_before_it_runs(project: Path, tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    agent = Agent(held="first")
    run_id = asyncio.run(_stopped_midway(agent, project / "cases.yaml", store))
    (project / "users.py").rename(project / "players.py")
    agent.held, agent.calls = None, 0

    with pytest.raises(DatasetError) as caught:
        evaluate(agent, [], store=store, resume=run_id)

    error = caught.value
    assert error.case == "first" and error.field == "user_simulation.script"
    assert "cannot be loaded" in error.message
    assert agent.calls == 0


class PlayedUser:
    """A stand-in for the model simulator, given as a run's `user_simulator`."""

    label = "test:played"

    async def reply(self, request: UserRequest) -> UserReply:
        if not request.messages:
            return UserReply(message="My order arrived broken.")
        last = request.messages[-1]["content"].lower()
        if "refund issued" in last:
            return UserReply(stop=EndReason.GOAL_ACHIEVED)
        return UserReply(message="8812" if "order number" in last else "ana@example.com")


def test_an_eval_suite_passes_its_user_simulator_to_the_run(project: Path, tmp_path: Path) -> None:
    (project / "cases.yaml").write_text(
        CASES + "- id: third\n  user_simulation:\n    goal: Get a refund for order 8812.\n"
    )
    suite = EvalSuite("refunds", store=tmp_path / "runs.db").add_cases(project / "cases.yaml")
    suite.add_evaluators("contains_keywords")

    run = suite.run(Agent(), user_simulator=PlayedUser())

    trials = {result.case.id: result.trial for result in run.results}
    assert trials["third"].simulation is not None
    assert trials["third"].simulation.user == "test:played"
    assert trials["third"].simulation.end_reason is EndReason.GOAL_ACHIEVED
    assert trials["third"].output == "Refund issued for order 8812."
    assert trials["first"].simulation is not None
    assert trials["first"].simulation.user.endswith("users.py:refund_user")


def test_scoring_recorded_traces_loads_no_script(project: Path, tmp_path: Path) -> None:
    (project / "cases.yaml").write_text(
        "- id: recorded\n"
        "  agent_trace: [{output: Refund issued for order 8812.}]\n"
        "  expected_output: Refund issued for order 8812.\n"
        "  user_simulation: {script: 'users.py:no_such_user'}\n"
    )

    run = evaluate(None, project / "cases.yaml", store=tmp_path / "runs.db")

    assert run.complete
    assert run.results[0].scores["exact_match"].passed is True
