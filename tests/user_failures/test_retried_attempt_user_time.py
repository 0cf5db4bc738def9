"""The user's time is left out of the trial's working latency in every attempt,
a retried one too (the agent's own time is what the working latency measures)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agenteval import EndReason, EvalCase, UserReply, UserRequest, evaluate


class SlowUser:
    label = "test:slow"

    async def reply(self, request: UserRequest) -> UserReply | None:
        await asyncio.sleep(0.5)
        if len(request.messages) >= 4:
            return UserReply(stop=EndReason.GOAL_ACHIEVED)
        return UserReply(message="and then?")


class FlakyOnce:
    """Quick, but its service drops the connection once, at its second turn."""

    def __init__(self) -> None:
        self.failed = False

    async def __call__(self, messages: Any) -> str:
        if not self.failed and len(messages) >= 3:
            self.failed = True
            raise ConnectionError("dropped")
        return "ok"


def test_a_retried_attempts_user_time_is_not_working_time(tmp_path: Path) -> None:
    case = EvalCase(id="c", user_simulation={"goal": "talk", "starting_prompt": "hi"})
    run = evaluate(
        FlakyOnce(), [case], store=tmp_path / "runs.db", retries=1, user_simulator=SlowUser()
    )
    trial = run.results[0].trial
    assert trial.failure is None, trial.failure
    assert trial.attempts == 2
    # Three user replies of 0.5 s were waited for, one of them in the first attempt; the
    # agent's own time is a few milliseconds.
    assert trial.latency_s >= 1.5
    assert trial.working_latency_s < 0.4, (trial.working_latency_s, trial.latency_s)
