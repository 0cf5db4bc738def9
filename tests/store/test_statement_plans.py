"""The store's statements keep their plans on the newest SQLite too, not only on the one CI's
Python links (3.40, Debian bookworm): each statement's own text is planned (`EXPLAIN QUERY
PLAN`) by the `sqlite3` module's SQLite and by `apsw`'s (the newest release, bundled with it),
on a store file laid out by `RunStore`. Newer SQLites plan some joins and sorts differently
(and weigh a bound `LIMIT` value when planning): a plan that reads every row of a run where
the other looks rows up by key turns a linear run into a quadratic one. An audit of every
statement agenteval runs (live, resumed, rescored and judged runs, the reports, compare and
gate, the viewer, the pytest plugin) found these to differ."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from pathlib import Path

import pytest

from agenteval.store import RunStore
from agenteval.store.paged import KEYS_IN_ORDER
from agenteval.store.progress import SUMMARY_ROWS
from agenteval.store.results import STORED_RANGES

Plan = Callable[[str, Sequence[object]], list[str]]
"""A statement's plan: its `EXPLAIN QUERY PLAN` details, in order."""


@pytest.fixture(params=["sqlite3", "apsw"])
def plan(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Plan]:
    """Plans statements on a real store file with the `sqlite3` module's SQLite or apsw's."""
    path = tmp_path / "runs.db"
    RunStore(path).close()
    if request.param == "apsw":
        apsw = pytest.importorskip("apsw")
        conn = apsw.Connection(str(path))
        try:
            yield lambda sql, params: [
                str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            ]
        finally:
            conn.close()
    else:
        with closing(sqlite3.connect(path)) as opened:
            yield lambda sql, params: [
                str(row[3]) for row in opened.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            ]


# `agenteval runs --limit N` counts the trials of the N newest runs only: SQLite 3.54 plans a
# small limit (1 to 6) as a scan of every run, sorted, counting every run's trials first.
@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5, 6, 20, -1])
def test_listing_runs_reads_them_newest_first_through_their_index(plan: Plan, limit: int) -> None:
    details = plan(SUMMARY_ROWS, [limit])
    assert details[0] == "SCAN r USING INDEX runs_by_created", details


# A pooled rescore cuts the run into ranges of cases: each case's trials counted as its cases
# are read in order. SQLite 3.54 read the run's trials first and sorted their counts by case.
def test_cutting_a_run_into_ranges_counts_each_case_s_trials_in_case_order(plan: Plan) -> None:
    details = plan(STORED_RANGES, ["r1"])
    assert details == [
        "SEARCH c USING INDEX cases_in_order (run_id=?)",
        "SEARCH t USING COVERING INDEX sqlite_autoindex_trials_1 (run_id=? AND case_id=?)",
    ], details


# A page of a run's table: its cases read in order from the offset, each one's trials from the
# key. SQLite 3.54 planned a small limit (1 to 5; the viewer asks for 50) as a read of every
# trial of the run, sorted.
@pytest.mark.parametrize(("limit", "offset"), [(1, 0), (5, 0), (5, 99_995), (50, 0), (50, 5_000)])
def test_a_page_of_a_run_reads_its_cases_in_order(plan: Plan, limit: int, offset: int) -> None:
    details = plan(KEYS_IN_ORDER, ["r1", limit, offset])
    assert details == [
        "SEARCH c USING INDEX cases_in_order (run_id=?)",
        "SEARCH t USING COVERING INDEX sqlite_autoindex_trials_1 (run_id=? AND case_id=?)",
    ], details
