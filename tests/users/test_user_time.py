"""The trial's time limit is the agent's: time spent waiting for the simulated user (a slow
simulator model) is left out of it, and out of the working latency."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agenteval import EndReason, EvalCase, FailureCause, UserReply, UserRequest, evaluate


class SlowUser:
    label = "test:slow"

    async def reply(self, request: UserRequest) -> UserReply | None:
        await asyncio.sleep(0.4)
        if len(request.messages) >= 6:
            return UserReply(stop=EndReason.GOAL_ACHIEVED)
        return UserReply(message="and then?")


async def quick_agent(messages: Any) -> str:
    await asyncio.sleep(0.01)
    return f"answer {len(messages)}"


async def slow_agent(messages: Any) -> str:
    await asyncio.sleep(0.3 * len(messages))
    return f"answer {len(messages)}"


def _trial(tmp_path: Path, agent: Any) -> Any:
    case = EvalCase(id="slow-user", user_simulation={"goal": "talk", "starting_prompt": "hi"})
    run = evaluate(
        agent, [case], store=tmp_path / "runs.db", timeout=0.6, retries=0, user_simulator=SlowUser()
    )
    return run.results[0].trial


def test_a_slow_user_does_not_use_up_the_agents_time(tmp_path: Path) -> None:
    trial = _trial(tmp_path, quick_agent)
    assert trial.failure is None, trial.failure
    assert trial.simulation.end_reason is EndReason.GOAL_ACHIEVED
    assert len(trial.simulation.turns) == 3
    assert trial.working_latency_s < 0.6


def test_an_agent_slower_than_its_limit_still_times_out(tmp_path: Path) -> None:
    trial = _trial(tmp_path, slow_agent)
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.TIMEOUT
    assert trial.simulation.end_reason is EndReason.TRIAL_FAILED
