"""The driver's backstop: an attempt whose worker stops answering (an async agent that blocks
its actor's event loop, so the worker's own time limit never fires) is ended by the driver,
its actor killed and the trial recorded `timeout`; the other trials go on."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from tests.executors.ray_cluster import LOOPBACK

import agenteval
from agenteval import EvalCase
from agenteval.engine.executors import cluster_pool
from agenteval.retry import RetryPolicy
from agenteval.trace import FailureCause
from agenteval.user_simulation import UserSimulation


async def blocks_its_loop(question: str) -> str:
    if question == "stuck":
        time.sleep(60)  # noqa: ASYNC251 (the point: the worker's event loop cannot run)
    return question


def test_a_worker_that_stops_answering_is_killed_by_the_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray

    for name, value in LOOPBACK.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(cluster_pool, "_BACKSTOP_GRACE_S", 1.0)  # not a minute, in a test
    started = time.monotonic()
    run = agenteval.evaluate(
        blocks_its_loop,
        [EvalCase(id="stuck", input="stuck"), EvalCase(id="fine", input="fine")],
        store=tmp_path / "r.db",
        executor="ray",
        workers=2,
        concurrency=2,
        timeout=0.2,
        retry_policy=RetryPolicy(max_retries=0, max_wait_s=0.0),
    )
    by_case = {r.case.id: r.trial for r in run.results}
    assert by_case["fine"].failure is None
    stuck = by_case["stuck"].failure
    assert stuck is not None
    assert stuck.cause is FailureCause.TIMEOUT
    assert "the driver killed it" in stuck.message
    assert time.monotonic() - started < 60  # ended by the backstop, not by the sleep
    assert not ray.is_initialized()


async def slow_user(messages: list[dict[str, str]]) -> str:
    """A scripted user that takes its time (off the agent's clock), and never stops."""
    await asyncio.sleep(1.0)
    return "and then?"


async def answers_at_once(question: str) -> str:
    return "noted"


def test_a_slow_scripted_user_is_no_timeout_of_the_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each user reply may take the trial's limit (2 s), off the agent's clock: eight turns
    # take 7 s, past a backstop of twice one limit (plus its grace, 1 s in a test).
    for name, value in LOOPBACK.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(cluster_pool, "_BACKSTOP_GRACE_S", 1.0)
    user = UserSimulation(script=f"{__name__}:slow_user", max_turns=8)
    run = agenteval.evaluate(
        answers_at_once,
        [EvalCase(id="talk", input="hello", user_simulation=user)],
        store=tmp_path / "r.db",
        executor="ray",
        workers=1,
        timeout=2.0,
        retry_policy=RetryPolicy(max_retries=0, max_wait_s=0.0),
    )
    (result,) = run.results
    assert result.trial.failure is None, result.trial.failure
    assert result.trial.simulation is not None
    assert len(result.trial.simulation.turns) == 8
