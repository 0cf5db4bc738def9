"""The trial's time limit stops while the user writes, but a user who never
answers (a script waiting on something that never comes) must not hang the run forever: a user
that takes longer than the trial's whole time limit for one message fails the trial as the
user's (user_simulator_error, left out of scoring)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from agenteval import EvalCase, FailureCause, evaluate


class Stuck:
    label = "stuck"

    async def reply(self, request: Any) -> Any:
        await asyncio.Event().wait()


def test_a_user_who_never_answers_fails_the_trial_as_the_users(tmp_path: Path) -> None:
    case = EvalCase(
        id="c",
        expected_output="x",
        user_simulation={"goal": "g", "starting_prompt": "hi", "max_turns": 3},
    )

    done: list[Any] = []

    def run() -> None:
        done.append(
            evaluate(
                lambda messages: "x",
                [case],
                scorers=["exact_match"],
                builtins=False,
                store=tmp_path / "runs.db",
                user_simulator=Stuck(),
                timeout=0.3,
                retries=0,
            )
        )

    # In a daemon thread: a guard against the hang itself, far above the 0.3 s limit.
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(30)
    assert done, "the run hung on a user who never answers"
    result = done[0]
    trial = result.results[0].trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.USER_SIMULATOR_ERROR, trial.failure
    assert "stuck" in trial.failure.message
    assert result.results[0].scores["exact_match"].value is None
