"""A damaged store rescored through the pool is refused as the in-process rescore refuses it:
the same error, nothing written. The pool checks the file (`PRAGMA quick_check`) in a thread
while its workers score, so these tests also make the check slow, to see that no range's
changed scores are written before it has answered."""

from __future__ import annotations

import gc
import hashlib
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from tests.engine.rescore_runs import RUN_ID, SEEDS, build

import agenteval
import agenteval.engine.rescore_pool as rescore_pool
import agenteval.engine.rescoring as rescoring
import agenteval.sqlite.database as database
from agenteval.errors import StoreError
from agenteval.store import RunStore


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


def _built(tmp_path: Path, name: str) -> Path:
    """A varied stored run, every page in the file (no WAL beside it)."""
    db = tmp_path / name
    build(db, SEEDS[1])
    gc.collect()  # `build`'s last connection closed, with it
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert not Path(f"{db}-wal").exists()
    return db


def _damaged(tmp_path: Path, name: str) -> Path:
    """A varied stored run with garbage over a page a rescore never reads (the runs' index by
    target), so the rescore reads and scores every trial and only the damage check fails."""
    db = _built(tmp_path, name)
    with closing(sqlite3.connect(db)) as conn:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        (page,) = conn.execute("SELECT pageno FROM dbstat WHERE name = 'runs_by_target'").fetchone()
    with db.open("r+b") as fh:
        fh.seek((page - 1) * size)
        fh.write(b"\xa5" * size)
    return db


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _refused(db: Path) -> str:
    before = _digest(db)
    with pytest.raises(StoreError) as refused:
        agenteval.rescore(RUN_ID, builtins=True, store=db)
    assert _digest(db) == before, "the damaged file was written"
    message = refused.value.render()
    assert "the run store is damaged" in message and "nothing was written" in message
    return message


def test_a_damaged_store_is_refused_in_the_pool_as_in_process(
    tmp_path: Path, pooled: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    in_pool = _refused(_damaged(tmp_path, "pooled.db"))
    assert pooled
    monkeypatch.setattr(rescoring, "POOL_FROM", 10**9)
    in_process = _refused(_damaged(tmp_path, "in-process.db"))
    assert len(pooled) == 1
    assert in_pool == in_process.replace("in-process.db", "pooled.db")


def test_a_slow_check_still_comes_before_the_first_write(
    tmp_path: Path, pooled: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _damaged(tmp_path, "slow.db")
    real = database.quick_check
    writes: list[int] = []

    def slow(conn: sqlite3.Connection) -> list[str]:
        time.sleep(1.5)  # past the first ranges' scores, ready to be written
        return real(conn)

    def counted(self: RunStore, run_id: str, rows: Any) -> None:
        writes.append(len(rows))
        real_write(self, run_id, rows)

    real_write = RunStore.write_changed
    monkeypatch.setattr(database, "quick_check", slow)
    monkeypatch.setattr(RunStore, "write_changed", counted)
    _refused(db)
    assert pooled and not writes


def test_a_healthy_store_is_rescored_once_checked(
    tmp_path: Path, pooled: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _built(tmp_path, "healthy.db")
    checks: list[int] = []
    real = database.quick_check

    def counted(conn: sqlite3.Connection) -> list[str]:
        checks.append(1)
        return real(conn)

    real_write = RunStore.write_changed
    writes: list[int] = []

    def written(self: RunStore, run_id: str, rows: Any) -> None:
        writes.append(len(rows))
        real_write(self, run_id, rows)

    monkeypatch.setattr(database, "quick_check", counted)
    monkeypatch.setattr(RunStore, "write_changed", written)
    agenteval.rescore(RUN_ID, builtins=True, store=db)
    assert pooled and checks == [1]
    assert len(writes) > 1, "the damaged runs of these tests have changed scores to write"
