"""What a rescore reads (`RunStore.iter_stored`) is what main read: every trial, its case and
its scores' stored texts by name in the order written, over chunks that cut a case's trials
apart and ranges of cases, on the varied runs (some scores rewritten since, so a chunk's score
rows interleave)."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.engine.rescore_runs import RUN_ID, SEEDS, build

from agenteval import EvalCase, RunStore, Trial
from agenteval.errors import StoreError
from agenteval.store import StoredTrial
from agenteval.store import results as store_results


def _mains(path: Path, run_id: str, first: int, last: int, chunk: int) -> Iterator[StoredTrial]:
    """main's (78b92ec) `_iter_stored`, as it was, over plain SQLite."""
    conn = sqlite3.connect(path)
    case: EvalCase | None = None
    after = (first, -1)
    while True:
        rows = conn.execute(
            "SELECT c.idx, t.trial, t.case_id, c.data, t.data"
            " FROM cases c JOIN trials t ON t.run_id = c.run_id AND t.case_id = c.case_id"
            " WHERE c.run_id = ? AND c.idx >= ? AND c.idx <= ?"
            " AND (c.idx > ? OR (c.idx = ? AND t.trial > ?))"
            " ORDER BY c.idx, t.trial LIMIT ?",
            (run_id, after[0], last, after[0], after[0], after[1], chunk),
        ).fetchall()
        if not rows:
            return
        wanted = {(row[2], row[1]) for row in rows}
        scores: dict[tuple[str, int], dict[str, str]] = {}
        for case_id, trial, name, data in conn.execute(
            "SELECT s.case_id, s.trial, s.name, s.data FROM scores s JOIN cases c"
            " ON c.run_id = s.run_id AND c.case_id = s.case_id"
            " WHERE s.run_id = ? AND c.idx BETWEEN ? AND ? ORDER BY s.rowid",
            (run_id, rows[0][0], rows[-1][0]),
        ):
            if (case_id, trial) in wanted:
                scores.setdefault((case_id, trial), {})[sys.intern(name)] = data
        for _idx, trial, case_id, case_data, trial_data in rows:
            if case is None or case.id != case_id:
                case = EvalCase.model_validate_json(case_data)
            yield StoredTrial(
                key=(case_id, trial),
                case=case,
                trial=Trial.model_validate_json(trial_data),
                scores=scores.get((case_id, trial), {}),
            )
        after = (rows[-1][0], rows[-1][1])


def _text(item: StoredTrial) -> tuple[object, ...]:
    return (
        item.key,
        item.case.model_dump_json(),
        item.trial.model_dump_json(),
        list(item.scores.items()),
    )


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("chunk", [1, 2, 7, 500])
@pytest.mark.parametrize("trials", [1, 3])
def test_read_as_main_read(
    tmp_path: Path, seed: int, chunk: int, trials: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "runs.db"
    build(path, seed, trials=trials)
    with sqlite3.connect(path) as conn:  # a score rewritten out of its trial's run of rows
        conn.execute(
            "UPDATE scores SET rowid = (SELECT MAX(rowid) + 1 FROM scores)"
            " WHERE rowid = (SELECT MIN(rowid) FROM scores WHERE name = 'exact_match')"
        )
        conn.execute("DELETE FROM scores WHERE rowid IN (SELECT rowid FROM scores LIMIT 11, 9)")
    monkeypatch.setattr(store_results, "CHUNK", chunk)
    with RunStore(path) as store:
        for first, last in [(0, 2**62), (3, 5), (0, 0), (7, 39)]:
            got = [_text(item) for item in store.iter_stored(RUN_ID, (first, last))]
            want = [_text(item) for item in _mains(path, RUN_ID, first, last, chunk)]
            assert got == want, (first, last)
            assert got


@pytest.mark.parametrize("table", ["cases", "trials"])
def test_a_record_it_cannot_read_is_named_as_before(tmp_path: Path, table: str) -> None:
    path = tmp_path / "runs.db"
    build(path, 1, trials=1)
    with sqlite3.connect(path) as conn:
        (case_id,) = conn.execute("SELECT case_id FROM cases WHERE idx = 4").fetchone()
        conn.execute(
            f"UPDATE {table} SET data = '{{\"nonsense\": 1}}' WHERE case_id = ?", (case_id,)
        )
    where = (
        f"case {case_id!r} of run {RUN_ID!r}"
        if table == "cases"
        else f"trial 0 of case {case_id!r} in run {RUN_ID!r}"
    )
    with RunStore(path) as store:
        read = store.iter_stored(RUN_ID)
        for _ in range(4):
            next(read)
        with pytest.raises(StoreError) as caught:
            next(read)
    assert f"{path}: {where} cannot be read by this version of agenteval: 1 invalid" in str(
        caught.value
    )
