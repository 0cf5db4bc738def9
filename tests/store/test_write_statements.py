"""`write_results` writes many rows a statement (`layout.upsert_trials`, `upsert_scores`,
`delete_scores_of`); the rows it leaves are those `executemany` of the one-row statements left,
rowids (the order scores were first written in) included: compared batch after batch on two
stores, with re-written trials whose score sets change, a key twice in one batch, batches
across the statements' row limit, and a batch that fails (nothing of it stays)."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterable
from pathlib import Path

import pytest

from agenteval import EvalCase
from agenteval.errors import StoreError
from agenteval.records import RunInfo
from agenteval.store import RunStore, runs
from agenteval.store.layout import (
    DELETE_SCORES,
    ROWS_PER_STATEMENT,
    UPSERT_SCORE,
    UPSERT_TRIAL,
    delete_scores_of,
)
from agenteval.store.results import EncodedResults


class OneRowStore(RunStore):
    """`write_results` as main wrote it: `executemany` of the one-row statements."""

    def write_results(self, run_id: str, encoded: EncodedResults) -> None:
        keys = [(run_id, case_id, trial) for case_id, trial in encoded.keys]
        with self._write() as conn:
            self._require_run(conn, run_id)
            self._add_missing_cases(conn, run_id, encoded.cases)
            conn.executemany(DELETE_SCORES, keys)
            conn.executemany(
                UPSERT_TRIAL,
                [(run_id, c, t, data, encoded.written_at) for c, t, data in encoded.trials],
            )
            conn.executemany(
                UPSERT_SCORE, [(run_id, c, t, name, data) for c, t, name, data in encoded.scores]
            )


def _batch(rng: random.Random, size: int, step: int) -> EncodedResults:
    encoded = EncodedResults(written_at=f"2026-12-02T20:00:{step:02d}Z")
    for _ in range(size):
        case_id, trial = f"c{rng.randrange(60)}", rng.randrange(4)
        encoded.keys.append((case_id, trial))
        encoded.trials.append((case_id, trial, f'{{"step":{step},"r":{rng.random()}}}'))
        for name in rng.sample(["exact", "judge", "tools", "cost", "style"], rng.randrange(4)):
            encoded.scores.append((case_id, trial, name, f'{{"v":{rng.random()}}}'))
    return encoded


def _rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(path)
    try:
        return {
            table: conn.execute(f"SELECT rowid, * FROM {table} ORDER BY rowid").fetchall()
            for table in ("runs", "cases", "trials", "scores")
        }
    finally:
        conn.close()


def test_many_rows_a_statement_leave_the_rows_one_a_statement_left(tmp_path: Path) -> None:
    info = RunInfo(run_id="r1", created_at="2026-12-02T20:00:00Z")  # type: ignore[arg-type]
    cases = [EvalCase(id=f"c{i}", input="q") for i in range(50)]  # c50..c59 added by batches
    stores = [RunStore(tmp_path / "many.db"), OneRowStore(tmp_path / "one.db")]
    for store in stores:
        store.create_run(info, cases)
    rng = random.Random(20261202)
    sizes = [1, 2, ROWS_PER_STATEMENT - 1, ROWS_PER_STATEMENT, ROWS_PER_STATEMENT + 1, 250, 7]
    for step, size in enumerate(sizes * 3):
        state = rng.getstate()
        for store in stores:
            rng.setstate(state)
            encoded = _batch(rng, size, step)
            for case_id, _ in encoded.keys:
                encoded.cases.setdefault(case_id, EvalCase(id=case_id, input="q"))
            store.write_results("r1", encoded)
    many, one = _rows(tmp_path / "many.db"), _rows(tmp_path / "one.db")
    assert len(many["scores"]) > 300
    assert many == one


def test_a_batch_that_fails_leaves_nothing(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "s.db")
    store.create_run(RunInfo(run_id="r1"), [])
    rng = random.Random(1)
    store.write_results("r1", _batch(rng, 150, 1))
    before = _rows(tmp_path / "s.db")
    bad = _batch(rng, 150, 2)
    bad.scores.append(("c1", 0, "x", None))  # type: ignore[arg-type]  # NOT NULL: fails last
    with pytest.raises((StoreError, sqlite3.IntegrityError)):
        store.write_results("r1", bad)
    assert _rows(tmp_path / "s.db") == before


def _plan_on(library: str, statement: str, parameters: list[object]) -> str:
    """`statement`'s query plan on the SQLite Python links (`sqlite3`) or the newest one,
    which apsw bundles: the store must look rows up by key on both."""
    schema = (
        "CREATE TABLE scores (run_id TEXT NOT NULL, case_id TEXT NOT NULL, trial INTEGER NOT"
        " NULL, name TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (run_id, case_id, trial,"
        " name))"
    )
    if library == "sqlite3":
        conn = sqlite3.connect(":memory:")
        conn.execute(schema)
        rows = list(conn.execute(f"EXPLAIN QUERY PLAN {statement}", parameters))
    else:
        apsw = pytest.importorskip("apsw")
        connection = apsw.Connection(":memory:")
        connection.execute(schema)
        rows = list(connection.execute(f"EXPLAIN QUERY PLAN {statement}", parameters))
    return " ".join(str(row[-1]) for row in rows)


@pytest.mark.parametrize("library", ["sqlite3", "apsw"])
@pytest.mark.parametrize("keys", [1, 2, 19, ROWS_PER_STATEMENT])
def test_deleting_a_batch_s_scores_looks_each_key_up(library: str, keys: int) -> None:
    # From SQLite 3.45 (not 3.40) a plain JOIN read every score of the run for each batch
    # (3.45 from 19 keys, 3.47 on from 2): a 20,000-trial run took 94 s instead of 4 on 3.53.
    parameters: list[object] = [value for i in range(keys) for value in (f"c{i}", 0)]
    details = _plan_on(library, delete_scores_of(keys), [*parameters, "r"])
    assert "(run_id=? AND case_id=? AND trial=?)" in details, details


class OneRowCasesStore(RunStore):
    """`create_run` as main wrote its cases: `executemany` of the one-row statement."""

    def create_run(self, info: RunInfo, cases: Iterable[EvalCase]) -> int:
        original = runs.ROWS_PER_STATEMENT
        runs.ROWS_PER_STATEMENT = 1  # type: ignore[misc]  # one row a statement
        try:
            return super().create_run(info, cases)
        finally:
            runs.ROWS_PER_STATEMENT = original  # type: ignore[misc]


@pytest.mark.parametrize("count", [0, 1, ROWS_PER_STATEMENT, ROWS_PER_STATEMENT + 1, 1234])
def test_a_run_s_cases_are_the_rows_one_a_statement_wrote(tmp_path: Path, count: int) -> None:
    info = RunInfo(run_id="r1", created_at="2026-12-02T20:00:00Z")  # type: ignore[arg-type]
    cases = (
        EvalCase(id=f"c{i}", input=f"q {i} sk-proj-{'x1' * 12}", metadata={"i": i})
        for i in range(count)
    )
    listed = list(cases)
    assert RunStore(tmp_path / "many.db").create_run(info, iter(listed)) == count
    assert OneRowCasesStore(tmp_path / "one.db").create_run(info, iter(listed)) == count
    many, one = _rows(tmp_path / "many.db"), _rows(tmp_path / "one.db")
    assert len(many["cases"]) == count
    assert many == one
    if count:
        assert "[REDACTED]" in str(many["cases"][0][-1])


def test_a_case_listed_twice_stores_nothing_of_the_run(tmp_path: Path) -> None:
    cases = [EvalCase(id=f"c{i}", input="q") for i in range(250)] + [EvalCase(id="c7", input="q")]
    store = RunStore(tmp_path / "s.db")
    with pytest.raises(StoreError, match="'c7' twice"):
        store.create_run(RunInfo(run_id="r1"), iter(cases))
    assert _rows(tmp_path / "s.db")["cases"] == []
    assert _rows(tmp_path / "s.db")["runs"] == []
