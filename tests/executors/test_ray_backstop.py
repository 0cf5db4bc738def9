"""The driver's backstop: an attempt whose worker stops answering (an async agent that blocks
its actor's event loop, so the worker's own time limit never fires) is ended by the driver,
its actor killed and the trial recorded `timeout`; the other trials go on."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.executors.ray_cluster import LOOPBACK

import agenteval
from agenteval import EvalCase
from agenteval.engine.executors import cluster_pool
from agenteval.retry import RetryPolicy
from agenteval.trace import FailureCause


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
