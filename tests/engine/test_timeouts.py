"""Time limits that hold: an async agent that blocks the event loop past its deadline, or that
swallows its cancellation, ends as `timeout`, saying why, and the run goes on and finishes.

Time limits here are short (0.2-0.3 s); nothing asserts how long anything took, and the tests
that could hang run in a process of their own with a generous limit."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase, FailureCause
from agenteval.engine.trials import RetryPolicy, run_trial

NO_RETRY = RetryPolicy(max_retries=0)
FAST_RETRY = RetryPolicy(max_retries=1, initial_wait_s=0.01, max_wait_s=0.02)
HANG_GUARD_S = 120


def _blocked_s(message: str) -> float:
    """How long the message says the agent blocked the loop: at least what it slept (a bound
    that holds however slow the machine; nothing here checks how fast anything was)."""
    found = re.search(r"blocked the event loop for (\d+\.\d) s", message)
    assert found is not None, message
    return float(found.group(1))


async def _run(agent: Any, case: EvalCase | None = None, **kw: Any) -> agenteval.Trial:
    kw.setdefault("timeout_s", 0.2)
    kw.setdefault("retry", NO_RETRY)
    return await run_trial(agent, case or EvalCase(input="hi"), 0, **kw)


async def test_an_agent_that_blocks_the_loop_past_its_deadline_times_out_saying_so() -> None:
    async def agent(text: str) -> str:
        time.sleep(0.6)  # noqa: ASYNC251 - blocks the event loop: the timer cannot run
        return "late"

    trial = await _run(agent)
    assert trial.failure is not None and trial.failure.cause is FailureCause.TIMEOUT
    assert _blocked_s(trial.failure.message) >= 0.6
    assert trial.output is None


async def test_a_block_in_a_later_turn_of_a_conversation_times_out_too() -> None:
    async def agent(messages: list[dict[str, str]]) -> str:
        if len(messages) > 1:
            time.sleep(0.5)  # noqa: ASYNC251 - the hostile agent
        return "answer"

    case = EvalCase(conversation=[{"input": "one"}, {"input": "two"}])
    trial = await _run(agent, case)
    assert trial.failure is not None and trial.failure.cause is FailureCause.TIMEOUT
    assert _blocked_s(trial.failure.message) >= 0.5


async def test_a_short_block_within_the_limit_is_fine() -> None:
    async def agent(text: str) -> str:
        time.sleep(0.01)  # noqa: ASYNC251 - the hostile agent
        await asyncio.sleep(0)
        return "ok"

    trial = await _run(agent, timeout_s=5.0)
    assert trial.failure is None and trial.output == "ok"


async def test_an_agent_that_answers_after_swallowing_its_cancellation_times_out() -> None:
    async def agent(text: str) -> str:
        with contextlib.suppress(asyncio.CancelledError):  # swallowed: the hostile agent
            await asyncio.sleep(30)
        return "I ignored it"

    trial = await _run(agent)
    assert trial.failure is not None and trial.failure.cause is FailureCause.TIMEOUT
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_an_agent_that_ignores_cancellation_is_abandoned_and_retried() -> None:
    attempts = 0

    async def agent(text: str) -> str:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            while True:
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    continue
        return "second time"

    trial = await asyncio.wait_for(_run(agent, retry=FAST_RETRY), HANG_GUARD_S)
    assert trial.output == "second time" and trial.failure is None
    assert trial.retries == {"timeout": 1}
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_an_agents_own_error_after_its_deadline_stays_its_own() -> None:
    async def agent(text: str) -> str:
        time.sleep(0.3)  # noqa: ASYNC251 - the hostile agent
        raise ValueError("a bug")

    trial = await _run(agent)
    assert trial.failure is not None and trial.failure.cause is FailureCause.AGENT_ERROR


_SCRIPT = """
import asyncio, json, sys
import agenteval
from agenteval import EvalCase

async def agent(text):
    if text == "stubborn":
        while True:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                continue
    if text == "stubborn-cleanup":
        try:
            while True:
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    continue
        finally:
            await asyncio.sleep(0.01)  # awaits even while being closed
    if text == "blocking":
        import time
        time.sleep(0.6)  # noqa: ASYNC251 - the hostile agent
    await asyncio.sleep(0)
    return "fine"

# The fine cases first, the blocking one last: no fine trial is held up by the block.
cases = [EvalCase(id=t, input=t, expected_output="fine")
         for t in ("a", "b", "c", "stubborn", "stubborn-cleanup", "blocking")]
run = asyncio.run(agenteval.evaluate_async(
    agent, cases, concurrency=2, timeout=0.3, retries=0, store="runs.db"))
print(json.dumps({
    "status": run.info.status,
    "results": {r.case.id: [r.trial.failure and r.trial.failure.cause,
                            r.trial.failure and r.trial.failure.message]
                for r in run.results},
}))
"""


def test_a_run_with_agents_that_ignore_cancellation_finishes_cleanly(tmp_path: Path) -> None:
    script = tmp_path / "stubborn.py"
    script.write_text(textwrap.dedent(_SCRIPT), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr
    for noise in ("Task was destroyed", "Traceback", "Exception ignored", "never awaited"):
        assert noise not in done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] == "finished"
    results = report["results"]
    assert set(results) == {"a", "stubborn", "b", "stubborn-cleanup", "blocking", "c"}
    for fine in ("a", "b", "c"):
        assert results[fine] == [None, None]
    for stubborn in ("stubborn", "stubborn-cleanup"):
        cause, message = results[stubborn]
        assert cause == "timeout" and "ignored the cancellation" in message
    cause, message = results["blocking"]
    assert cause == "timeout" and _blocked_s(message) >= 0.6


@pytest.mark.parametrize("concurrency", [1, 3])
async def test_other_trials_delayed_by_a_blocked_loop_are_not_blamed_for_it(
    tmp_path: Path, concurrency: int
) -> None:
    async def agent(text: str) -> str:
        if text == "blocker":
            time.sleep(1.2)  # noqa: ASYNC251 - the hostile agent
            return "late"
        await asyncio.sleep(0.01)
        return "fine"

    cases = [EvalCase(id="blocker", input="blocker")] + [
        EvalCase(id=f"c{i}", input=f"c{i}") for i in range(4)
    ]
    run = await agenteval.evaluate_async(
        agent, cases, concurrency=concurrency, timeout=0.5, retries=0, store=tmp_path / "r.db"
    )
    results = {r.case.id: r.trial.failure for r in run.results}
    blocker = results.pop("blocker")
    assert blocker is not None and _blocked_s(blocker.message) >= 1.2
    for failure in results.values():
        assert failure is None or "blocked the event loop for" not in failure.message


@pytest.mark.parametrize("gives_up", [True, False], ids=["answers-anyway", "never-ends"])
async def test_a_real_cancellation_an_agent_swallows_still_cancels_the_trial(
    gives_up: bool,
) -> None:
    started = asyncio.Event()

    async def agent(text: str) -> str:
        started.set()
        while True:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                if gives_up:
                    return "carried on"

    task = asyncio.ensure_future(_run(agent, timeout_s=0.3))
    await started.wait()
    task.cancel()  # the run being stopped (a Ctrl-C, say), before the deadline
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(task), HANG_GUARD_S)
