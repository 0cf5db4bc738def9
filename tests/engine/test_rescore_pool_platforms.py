"""Found by issue 21's review of the rescore pool, before its fix: `score_stored` asks `pool_workers()` on every merged
rescore by built-ins (before the size threshold), and `pool_workers` calls
`os.sched_getaffinity`, which only Linux has: on macOS (and Windows) every such rescore,
however small, raises AttributeError where main rescored it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.engine.rescore_runs import RUN_ID, build

import agenteval
from agenteval.engine.rescore_pool import pool_workers


def test_v21_rescore_a_small_rescore_works_without_sched_getaffinity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    build(db, 1, cases=4, trials=2)
    monkeypatch.delattr(os, "sched_getaffinity")  # as on macOS and Windows
    if hasattr(os, "process_cpu_count"):  # 3.13's, which there is `cpu_count`
        monkeypatch.setattr(os, "process_cpu_count", os.cpu_count)
    run = agenteval.rescore(RUN_ID, builtins=True, store=db)
    assert run.summary.trials == 8


def test_the_pool_takes_as_many_workers_as_python_313_says_this_process_may_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `os.process_cpu_count` (3.13+) is the affinity, or `PYTHON_CPU_COUNT` when set.
    monkeypatch.setattr(os, "process_cpu_count", lambda: 3, raising=False)
    assert pool_workers() == 3
    monkeypatch.setattr(os, "process_cpu_count", lambda: None, raising=False)
    assert pool_workers() == 1  # the count unknown: one
