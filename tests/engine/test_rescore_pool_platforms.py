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


def test_v21_rescore_a_small_rescore_works_without_sched_getaffinity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    build(db, 1, cases=4, trials=2)
    monkeypatch.delattr(os, "sched_getaffinity")  # as on macOS and Windows
    run = agenteval.rescore(RUN_ID, builtins=True, store=db)
    assert run.summary.trials == 8
