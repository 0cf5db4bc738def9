"""A rescore spread over worker processes (`engine.rescore_pool`) leaves the store and the
summary exactly as the in-process rescore (and main) did: real SQLite files, real workers.
The pool is forced on small runs here (`POOL_FROM` 0, ranges of a few trials)."""

from __future__ import annotations

import inspect
import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.engine import test_rescore_redacted as redacted_tests
from tests.engine.rescore_runs import RUN_ID, SEEDS, build, snapshot

import agenteval
import agenteval.engine.rescore_pool as rescore_pool
import agenteval.engine.rescoring as rescoring
from agenteval.errors import StoreError
from agenteval.run import TrialResult
from agenteval.store import RunStore

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def pooled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pool on from the first trial, in ranges of about 7 trials; counts its uses."""
    used: list[int] = []
    real = rescore_pool.score_in_pool

    async def counted(*args: Any, **kwargs: Any) -> None:
        used.append(len(kwargs["ranges"]))
        await real(*args, **kwargs)

    monkeypatch.setattr(rescoring, "POOL_FROM", 0)
    monkeypatch.setattr(rescoring, "RANGE_TRIALS", 7)
    monkeypatch.setattr(rescore_pool, "score_in_pool", counted)
    return used


def _golden(seed: int) -> dict[str, Any]:
    return json.loads((GOLDEN / f"rescored-{seed}.json").read_text())


def _rows(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT rowid, * FROM scores ORDER BY rowid").fetchall()


@pytest.mark.parametrize("seed", SEEDS)
def test_the_pool_writes_and_summarises_as_main_did(
    tmp_path: Path, seed: int, pooled: list[int]
) -> None:
    db = tmp_path / "runs.db"
    build(db, seed)
    run = agenteval.rescore(RUN_ID, builtins=True, store=db)
    assert pooled and pooled[0] > 10  # the pool scored it, in many ranges
    got = json.loads(json.dumps(snapshot(db, run.summary)))
    expected = _golden(seed)
    assert got["summary"] == expected["summary"]
    assert (got["rows"], got["rows_sha256"]) == (expected["rows"], expected["rows_sha256"])
    # Scored again: nothing changes, nothing is written.
    before = _rows(db)
    again = agenteval.rescore(RUN_ID, builtins=True, store=db)
    assert _rows(db) == before
    assert again.summary == run.summary


def test_stopped_midway_then_scored_again_the_store_is_as_main_left_it(
    tmp_path: Path, pooled: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    build(db, SEEDS[0])
    real = RunStore.write_changed
    writes: list[int] = []

    def stopped(self: RunStore, run_id: str, rows: Any) -> None:
        if len(writes) == 3:
            raise KeyboardInterrupt  # stopped after three ranges' writes
        writes.append(len(rows))
        real(self, run_id, rows)

    monkeypatch.setattr(RunStore, "write_changed", stopped)
    with pytest.raises(KeyboardInterrupt):
        agenteval.rescore(RUN_ID, builtins=True, store=db)
    assert len(writes) == 3 and all(writes)
    monkeypatch.setattr(RunStore, "write_changed", real)
    run = agenteval.rescore(RUN_ID, builtins=True, store=db)
    expected = _golden(SEEDS[0])
    got = json.loads(json.dumps(snapshot(db, run.summary)))
    assert (got["rows"], got["rows_sha256"]) == (expected["rows"], expected["rows_sha256"])
    assert got["summary"] == expected["summary"]


def _damaged(tmp_path: Path, name: str) -> Path:
    db = tmp_path / name
    build(db, SEEDS[1])
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE trials SET data = '{\"case_id\": 3}' WHERE case_id = 'case-017' AND trial = 1"
        )
    return db


def test_a_damaged_stored_trial_is_the_same_error_in_the_pool(
    tmp_path: Path, pooled: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _damaged(tmp_path, "pooled.db")
    with pytest.raises(StoreError) as in_pool:
        agenteval.rescore(RUN_ID, builtins=True, store=db)
    assert pooled
    monkeypatch.setattr(rescoring, "POOL_FROM", 10**9)
    db = _damaged(tmp_path, "in-process.db")
    with pytest.raises(StoreError) as in_process:
        agenteval.rescore(RUN_ID, builtins=True, store=db)
    assert "trial 1 of case 'case-017'" in str(in_process.value)
    assert str(in_pool.value) == str(in_process.value).replace("in-process.db", "pooled.db")


def test_with_a_callback_for_each_trial_the_rescore_stays_in_process(
    tmp_path: Path, pooled: list[int]
) -> None:
    db = tmp_path / "runs.db"
    build(db, SEEDS[2])
    seen: list[TrialResult] = []
    run = agenteval.rescore(RUN_ID, builtins=True, store=db, on_result=seen.append)
    assert not pooled and len(seen) == run.summary.trials == 120


def test_a_script_without_a_main_guard_is_not_run_again_by_the_workers(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    build(db, SEEDS[0])
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import agenteval, agenteval.engine.rescoring as r\n"
        "r.POOL_FROM, r.RANGE_TRIALS = 0, 10\n"
        "print('started', flush=True)\n"
        f"run = agenteval.rescore({RUN_ID!r}, builtins=True, store={str(db)!r})\n"
        "print(run.summary.trials)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["started", "120"]


_REDACTED_TESTS = [
    test
    for name, test in vars(redacted_tests).items()
    if name.startswith("test_") and list(inspect.signature(test).parameters) == ["store"]
]


@pytest.mark.parametrize("test", _REDACTED_TESTS, ids=lambda t: t.__name__)
def test_masked_secrets_rescore_the_same_in_the_pool(
    test: Callable[[Path], None], tmp_path: Path, pooled: list[int]
) -> None:
    """test_rescore_redacted's store tests, with every built-in rescore in the pool."""
    test(tmp_path / "runs.db")
