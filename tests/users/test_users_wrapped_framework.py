"""A framework agent used as a plain agent of one prompt inside the user's own callable (its
`FrameworkAgent.__call__`), in a case with a simulated user: the callable is played turn by
turn, and each call of the framework agent runs the one prompt it was given, not the trial's
conversation a second time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.users.echo_agents import pydantic_ai_agent
from tests.users.tagged import echo

import agenteval
from agenteval import EndReason, EvalCase
from agenteval.agents.frameworks import as_framework_agent


def test_a_framework_agent_called_per_turn_by_a_callable_runs_one_prompt(tmp_path: Path) -> None:
    framework = as_framework_agent(pydantic_ai_agent())
    assert framework is not None
    prompts: list[Any] = []

    async def agent(messages: list[dict[str, str]]) -> str | None:
        prompts.append(messages)
        trial = await framework(messages[-1]["content"])  # the last message alone
        return trial.output

    case = EvalCase(
        id="wrapped", user_simulation={"script": "tests.users.tagged:counting", "max_turns": 3}
    )
    run = agenteval.evaluate(agent, [case], store=tmp_path / "runs.db")
    trial = run.results[0].trial
    assert trial.failure is None, trial.failure
    assert trial.simulation is not None
    users = ["message 0", "message 2", "message 4"]
    assert [turn.user for turn in trial.simulation.turns] == users
    # Each call of the framework agent saw only its prompt.
    assert [turn.agent for turn in trial.simulation.turns] == [echo([user]) for user in users]
    assert trial.simulation.end_reason is EndReason.MAX_TURNS
    assert len(prompts) == 3
