"""A Ray worker killed by Ray's memory monitor (its node ran low on memory) costs the trial that
used the memory, recorded `worker_crashed`, and no other: Ray raises `OutOfMemoryError` (not an
actor error) for every call to the workers it killed, and it kills more than one, idle ones
too, so each trial it hit runs again alone; the one that still runs out is the agent's."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psutil
import pytest
from tests.executors.ray_cluster import LOOPBACK

import agenteval
from agenteval import EvalCase
from agenteval.trace import FailureCause

_HEADROOM = 1536 * 1024 * 1024
"""Bytes the node may grow by before Ray's memory monitor kills a worker (set per test)."""


async def hogs_memory(question: str) -> str:
    if question == "hog":
        held = []
        for _ in range(60):  # up to 6 GB: well past the headroom, if nothing kills it
            held.append(bytearray(100 * 1024 * 1024))
            await asyncio.sleep(0.05)
        return "survived"
    await asyncio.sleep(0.5)
    return question.upper()


def test_a_worker_killed_for_memory_is_its_trials_worker_crashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray

    for name, value in LOOPBACK.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    memory = psutil.virtual_memory()
    threshold = (memory.total - memory.available + _HEADROOM) / memory.total
    # Read by the local Ray the run starts (its raylet's memory monitor).
    monkeypatch.setenv("RAY_memory_usage_threshold", f"{threshold:.3f}")
    cases = [EvalCase(id="hog", input="hog")] + [
        EvalCase(id=f"c{i}", input=f"q{i}") for i in range(3)
    ]
    run = agenteval.evaluate(
        hogs_memory,
        cases,
        store=tmp_path / "r.db",
        executor="ray",
        workers=2,
        concurrency=2,
        retries=1,
    )
    by_case = {r.case.id: r.trial for r in run.results}
    assert sorted(by_case) == ["c0", "c1", "c2", "hog"]
    hog = by_case.pop("hog").failure
    assert hog is not None
    assert hog.cause is FailureCause.WORKER_CRASHED
    assert "memory" in hog.message
    for case_id, trial in by_case.items():
        assert trial.failure is None, (case_id, trial.failure)
        assert trial.output == f"Q{case_id[1:]}"
    assert not ray.is_initialized()
