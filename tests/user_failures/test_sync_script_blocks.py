"""A sync scripted user (documented: "Sync or async") that takes its time (a
blocking call to a model, a file, a service) must not hold the event loop: other trials
running at the same time would see their agent's time limit pass while the user of another
trial wrote, and fail as `timeout`."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from agenteval import EvalCase, evaluate


def slow_sync_user(messages: list[dict[str, str]]) -> str | None:
    """A user who thinks (blocking) before its second message, then stops."""
    if len(messages) >= 4:
        return None
    time.sleep(1.6)  # within its limit (the trial's, 2 s), past the other trials' deadline
    return "and the second thing?"


async def patient_agent(messages: Any) -> str:
    # Each plain trial is awaiting its answer when the script's user starts to think (0.5 s).
    await asyncio.sleep(1.0 if messages == "hello" else 0.5)
    return "ok"


def test_a_blocking_sync_script_does_not_time_out_another_trial(tmp_path: Path) -> None:
    users = EvalCase(
        id="script",
        user_simulation={"script": f"{__name__}:slow_sync_user", "starting_prompt": "hi"},
    )
    others = [EvalCase(id=f"plain-{n}", input="hello", expected_output="ok") for n in range(3)]
    result = evaluate_with(tmp_path, [users, *others])
    failures = {r.case.id: r.trial.failure for r in result.results if r.trial.failure}
    assert failures == {}, failures


def evaluate_with(tmp_path: Path, cases: list[EvalCase]) -> Any:
    return evaluate(
        patient_agent,
        cases,
        scorers=["exact_match"],
        builtins=False,
        store=tmp_path / "runs.db",
        timeout=2.0,
        retries=0,
        concurrency=4,
    )
