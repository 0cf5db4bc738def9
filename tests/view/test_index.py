"""A run's index for the viewer: its summary is `agenteval show`'s, its rows are the HTML
report's case table (same statuses, failing scorers, scores, costs, flaky marks), its filters
and sorts are the table's; the cache builds in one background thread, serves a stale index
while a changed run rebuilds, and drops the least recently asked runs."""

from __future__ import annotations

import functools
import sqlite3
import subprocess
import threading
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from tests.view.bulk import expected_kind, expected_latency, live_writer_command, write_bulk_run

import agenteval
from agenteval.case import EvalCase
from agenteval.pricing import PriceTable
from agenteval.records import RunStatus, TrialResult
from agenteval.report.html.trials import row_data, trial_view
from agenteval.report.summary import summarize
from agenteval.score import Score
from agenteval.store import RunStore
from agenteval.trace import Trial
from agenteval.view import IndexCache, Row, RunIndex, StoreReader, UnknownRun, build_index
from agenteval.view.index import SORTS

BULK_TRIALS = 100_000

_SEEN: Counter[str] = Counter()
_LOCK = threading.Lock()


def moody_agent(question: str) -> str:
    """Right on odd calls per question and wrong on even ones for `wobbly` questions (flaky
    cases); raises for `boom`; else upper-cases."""
    if "boom" in question:
        raise ValueError("boom")
    with _LOCK:
        _SEEN[question] += 1
        seen = _SEEN[question]
    if "wobbly" in question and seen % 2 == 0:
        return "wrong"
    return question.upper()


async def view_length(case: EvalCase, trial: Trial) -> Score:
    """A custom scorer: errors on `odd` cases, skips `open` ones, passes short answers."""
    if "odd" in case.id:
        raise RuntimeError("cannot judge odd cases")
    if case.id == "open":
        return Score(name="view_length", reason="nothing to compare with")
    value = 1.0 if len(trial.output or "") < 30 else 0.0
    return Score(name="view_length", value=value, passed=value == 1.0)


def _cases() -> list[EvalCase]:
    return [
        EvalCase(id="plain", input="hello there", expected_output="HELLO THERE", tags=["a"]),
        EvalCase(id="wobbly", input="wobbly one", expected_output="WOBBLY ONE", tags=["b"]),
        EvalCase(id="boom", input="boom now", expected_output="x", tags=["a", "b"]),
        EvalCase(id="open", input="no expectation here"),  # exact_match does not apply
        EvalCase(id="odd-1", input="odd case", expected_output="ODD CASE", tags=["c"]),
        EvalCase(id="wrong", input="wrong answer", expected_output="nope"),
        EvalCase(id="long", input="a long question " * 4, expected_output=("A LONG QUESTION " * 4)),
    ]


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A run made by the engine: passes, failures, errors, unscored trials, a flaky case, a
    scorer that errors, tags; two trials per case."""
    path = tmp_path_factory.mktemp("real") / "runs.db"
    run = agenteval.evaluate(
        moody_agent, _cases(), [view_length], trials=2, store=path, retries=0, concurrency=1
    )
    return path, run.run_id


@pytest.fixture(scope="module")
def bulk(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, RunIndex]:
    """One 100,000-trial run and its index, for the module's tests."""
    path = tmp_path_factory.mktemp("bulk") / "runs.db"
    run_id = write_bulk_run(path, trials=BULK_TRIALS)
    with StoreReader(path) as reader:
        return path, run_id, build_index(reader, run_id)


def _report_rows(path: Path, run_id: str) -> tuple[Any, list[dict[str, Any]]]:
    """The summary as `agenteval show` builds it and the rows as the HTML report's table."""
    with RunStore(path, create=False) as store:
        info = store.get_info(run_id)
        summary = summarize(
            store.iter_results(run_id), prices=None, passing=info.settings.get("passing")
        )
        flaky = {c.case_id for c in summary.reliability.flaky} if summary.reliability else set()
        rows = [
            row_data(trial_view(i, result, PriceTable.default(), summary.passing, flaky))
            for i, result in enumerate(store.iter_results(run_id), start=1)
        ]
    return summary, rows


def _as_report_row(row: Row) -> dict[str, Any]:
    return {
        "i": row.index,
        "case": row.case_id,
        "trial": row.trial,
        "status": row.status,
        "failing": list(row.failing),
        "score": row.mean,
        "latency": row.latency,
        "tokens": row.tokens,
        "cost": row.cost,
        "tags": list(row.tags),
        "flaky": row.flaky,
    }


def test_the_index_is_the_summary_of_show_and_the_rows_of_the_report(
    real_run: tuple[Path, str],
) -> None:
    path, run_id = real_run
    with StoreReader(path) as reader:
        index = build_index(reader, run_id)
    summary, rows = _report_rows(path, run_id)
    assert index.summary.model_dump() == summary.model_dump()
    assert [_as_report_row(row) for row in index.rows] == [
        {k: v for k, v in row.items() if k != "text"} for row in rows
    ]
    statuses = Counter(row.status for row in index.rows)
    assert set(statuses) == {"pass", "fail", "error", "unscored"}, statuses
    assert {row.case_id for row in index.rows if row.flaky} == {"wobbly"}
    assert any("view_length" in row.failing for row in index.rows if row.case_id == "odd-1")
    assert index.tags == ["a", "b", "c"]
    assert len(index.total_latency) == len(index.rows) == 14


def test_passing_and_prices_are_the_runs_own_as_show_takes_them(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    run = agenteval.evaluate(
        moody_agent, _cases(), [view_length], store=path, passing=["view_length"], retries=0
    )
    seen: list[str] = []

    def prices_for(info: Any) -> PriceTable | None:
        seen.append(info.run_id)
        return None

    with StoreReader(path) as reader:
        index = build_index(reader, run.run_id, prices_for)
    summary, rows = _report_rows(path, run.run_id)
    assert seen == [run.run_id]
    assert index.summary.passing == ["view_length"] == summary.passing
    assert [row.status for row in index.rows] == [row["status"] for row in rows]
    # Judged by view_length alone: `wrong` passes though exact_match failed it.
    assert {row.status for row in index.rows if row.case_id == "wrong"} == {"pass"}


def _reference(rows: list[Row], field: str, descending: bool) -> list[int]:
    """report.js's sort: missing values last in both directions, ties in report order."""
    order = {"error": 0, "fail": 1, "unscored": 2, "pass": 3}
    keys = {
        "index": lambda r: r.index,
        "case": lambda r: r.case_id,
        "trial": lambda r: r.trial,
        "status": lambda r: order[r.status],
        "failing": lambda r: len(r.failing),
        "score": lambda r: r.mean,
        "latency": lambda r: r.latency,
        "tokens": lambda r: r.tokens,
        "cost": lambda r: r.cost,
    }
    key = keys[field]
    present = [r for r in rows if key(r) is not None]
    absent = [r for r in rows if key(r) is None]
    sign = -1 if descending else 1

    def compare(a: Row, b: Row) -> int:
        x, y = key(a), key(b)
        if x != y:
            return sign * (-1 if x < y else 1)
        return a.index - b.index

    return [r.index for r in sorted(present, key=functools.cmp_to_key(compare)) + absent]


@pytest.mark.parametrize("field", SORTS)
@pytest.mark.parametrize("descending", [False, True])
def test_select_sorts_as_the_reports_table(
    real_run: tuple[Path, str], field: str, descending: bool
) -> None:
    path, run_id = real_run
    with StoreReader(path) as reader:
        index = build_index(reader, run_id)
    count, page = index.select(sort=field, descending=descending, limit=100)
    assert count == 14
    assert [row.index for row in page] == _reference(list(index.rows), field, descending)


def test_select_filters_pages_and_refuses_an_unknown_sort(real_run: tuple[Path, str]) -> None:
    path, run_id = real_run
    with StoreReader(path) as reader:
        index = build_index(reader, run_id)
        found = reader.search(run_id, "WOBBLY")
    rows = list(index.rows)
    assert index.select(status="error")[0] == sum(r.status == "error" for r in rows)
    count, page = index.select(scorer="view_length")
    assert page == [r for r in rows if "view_length" in r.failing] and count == len(page)
    assert index.select(tag="b")[1] == [r for r in rows if "b" in r.tags]
    assert index.select(flaky=True)[1] == [r for r in rows if r.flaky]
    assert index.select(keys=found)[1] == [r for r in rows if r.case_id == "wobbly"]
    assert index.select(status="pass", tag="a", keys=found) == (0, [])
    found_row = index.row("wobbly", 1)
    assert found_row is not None and found_row.key == ("wobbly", 1)
    assert found_row is index.rows[found_row.index - 1]
    assert index.row("wobbly", 2) is None and index.row("nope", 0) is None
    count, page = index.select(offset=10, limit=3)
    assert count == 14 and [r.index for r in page] == [11, 12, 13]
    assert index.select(offset=20) == (14, [])
    with pytest.raises(ValueError, match="cannot sort by 'text'"):
        index.select(sort="text")


# -- the cache ----------------------------------------------------------------------------------


def _store_with_runs(path: Path, count: int) -> list[str]:
    return [write_bulk_run(path, trials=20, cases=10, target=f"t{i}.yaml") for i in range(count)]


def test_the_cache_builds_in_the_background_then_serves_the_same_index(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    (run_id,) = _store_with_runs(path, 1)
    with StoreReader(path, refresh_s=0) as reader:
        cache = IndexCache(reader)
        try:
            first = cache.get(run_id)
            assert first.building or first.index is not None
            done = cache.wait(run_id)
            assert not done.building and done.index is not None
            assert (done.read, done.total) == (20, 20)
            assert cache.get(run_id).index is done.index  # not built again
            with pytest.raises(UnknownRun):
                cache.get("nope")
        finally:
            cache.close()


def test_a_changed_run_is_rebuilt_and_its_old_index_served_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    (run_id,) = _store_with_runs(path, 1)
    gate = threading.Event()
    entered = threading.Event()
    calls: list[str] = []

    def prices_for(info: Any) -> PriceTable | None:
        calls.append(info.run_id)
        if len(calls) == 2:  # the rebuild: held until the test has looked
            entered.set()
            gate.wait()
        return None

    with StoreReader(path, refresh_s=0) as reader, RunStore(path) as writer:
        cache = IndexCache(reader, prices_for=prices_for)
        try:
            old = cache.wait(run_id).index
            assert old is not None and len(old.rows) == 20
            case = EvalCase(id="late", input="late")
            writer.add_result(
                run_id,
                TrialResult(case=case, trial=Trial(case_id="late", output="x"), scores={}),
            )
            state = cache.get(run_id)
            assert entered.wait(120)  # a guard against hanging, not a time limit
            during = cache.get(run_id)
            assert state.building and during.building
            assert during.index is old  # the stale index, while the new one builds
            gate.set()
            new = cache.wait(run_id).index
            assert new is not None and new is not old and len(new.rows) == 21
            assert new.rows[-1].case_id == "late" and new.rows[-1].status == "unscored"
            writer.set_status(run_id, RunStatus.RUNNING)
            newest = cache.wait(run_id).index
            assert newest is not None and newest.info.status is RunStatus.RUNNING
        finally:
            gate.set()
            cache.close()


def test_the_least_recently_asked_runs_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    runs = _store_with_runs(path, 4)
    with StoreReader(path) as reader:
        cache = IndexCache(reader, max_runs=2)
        try:
            for run_id in runs:
                assert cache.wait(run_id).index is not None
            kept = cache.get(runs[-1]).index
            assert kept is not None
            # Only the two asked last are kept: asking the first again builds it again.
            assert cache.get(runs[0]).index is None
            assert cache.wait(runs[0]).index is not None
            assert cache.get(runs[-1]).index is kept  # asked since, so still kept
            assert cache.get(runs[-2]).index is None
        finally:
            cache.close()


def test_the_builds_run_in_one_thread_one_after_another(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    runs = _store_with_runs(path, 3)
    threads: set[str] = set()
    active = 0
    overlap = False
    lock = threading.Lock()

    class Counting(StoreReader):
        def iter_results(self, run_id: str):  # type: ignore[no-untyped-def]
            nonlocal active, overlap
            with lock:
                active += 1
                overlap = overlap or active > 1
                threads.add(threading.current_thread().name)
            try:
                yield from super().iter_results(run_id)
            finally:
                with lock:
                    active -= 1

    with Counting(path) as reader:
        cache = IndexCache(reader)
        try:
            for run_id in runs:
                cache.get(run_id)
            assert all(cache.wait(run_id).index is not None for run_id in runs)
        finally:
            cache.close()
    assert not overlap
    assert threads == {"agenteval-view-index"}


def test_a_build_that_fails_says_why_and_is_not_retried_until_the_run_changes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    (run_id,) = _store_with_runs(path, 1)
    with closing(sqlite3.connect(path)) as db:
        db.execute('UPDATE trials SET data = \'{"trial": "not a number"}\' WHERE trial = 1')
        db.commit()
    builds: list[str] = []

    def prices_for(info: Any) -> PriceTable | None:
        builds.append(info.run_id)
        return None

    with StoreReader(path, refresh_s=0) as reader:
        cache = IndexCache(reader, prices_for=prices_for)
        try:
            state = cache.wait(run_id)
            assert state.index is None and not state.building
            assert state.error is not None and "cannot be read" in state.error
            again = cache.wait(run_id)
            assert again.error == state.error and len(builds) == 1
        finally:
            cache.close()


# -- 100,000 trials -----------------------------------------------------------------------------


def test_a_100k_run_indexes_every_trial_as_written(bulk: tuple[Path, str, RunIndex]) -> None:
    _, _, index = bulk
    assert len(index.rows) == BULK_TRIALS == index.summary.trials
    kinds = Counter(row.status for row in index.rows)
    expected = Counter(expected_kind(i // 2, i % 2) for i in range(BULK_TRIALS))
    assert kinds == expected
    last = index.rows[-1]
    assert (last.index, last.case_id, last.trial) == (BULK_TRIALS, "case-049999", 1)
    assert last.latency == expected_latency(49_999, 1)
    verdicts = {"pass": True, "fail": False, "error": False, "unscored": None}
    flaky = set()
    for case in range(BULK_TRIALS // 2):
        seen = {verdicts[expected_kind(case, trial)] for trial in (0, 1)} - {None}
        if len(seen) == 2:
            flaky.add(f"case-{case:06d}")
    assert {f"case-{i:06d}" for i in range(50_000) if i % 11 == 7} <= flaky
    assert {row.case_id for row in index.rows if row.flaky} == flaky


def test_the_last_page_of_a_100k_run_sorted_and_filtered(
    bulk: tuple[Path, str, RunIndex],
) -> None:
    _, _, index = bulk
    count, page = index.select(offset=BULK_TRIALS - 50, limit=50)
    assert count == BULK_TRIALS and [r.index for r in page] == list(range(99_951, 100_001))
    count, page = index.select(sort="latency", descending=True, offset=BULK_TRIALS - 50)
    latencies = sorted((r.latency or 0.0 for r in index.rows), reverse=True)
    assert [r.latency for r in page] == latencies[-50:]
    count, page = index.select(status="fail", tag="billing", sort="case", descending=True)
    want = [r for r in index.rows if r.status == "fail" and "billing" in r.tags]
    assert count == len(want)
    assert page[0].case_id == max(r.case_id for r in want)


def test_the_index_of_a_run_another_process_writes_follows_it_to_the_end(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    run_id = "20261202-120000-idx"
    writer = subprocess.Popen(
        live_writer_command(path, run_id, 120, 0.01),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "created"
    sizes: list[int] = []
    with StoreReader(path, refresh_s=0) as reader:
        cache = IndexCache(reader)
        try:
            while writer.poll() is None:
                state = cache.get(run_id)
                if state.index is not None:
                    sizes.append(len(state.index.rows))
            _, err = writer.communicate()
            assert writer.returncode == 0, err
            # A build begun before the end may be the one waited for: then the next one.
            for _ in range(3):
                final = cache.wait(run_id)
                if final.index is not None and final.index.info.status is RunStatus.FINISHED:
                    break
        finally:
            cache.close()
    assert final.index is not None and len(final.index.rows) == 120
    assert final.index.summary.trials == 120
    assert sizes == sorted(sizes)  # the index only ever grows
    assert any(0 < n < 120 for n in sizes), sizes  # it was read while the run was written


def test_many_threads_asking_at_once_start_one_build(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    (run_id,) = _store_with_runs(path, 1)
    builds: list[str] = []
    start = threading.Barrier(8)
    indexes: list[RunIndex | None] = []

    def prices_for(info: Any) -> PriceTable | None:
        builds.append(threading.current_thread().name)
        return None

    with StoreReader(path) as reader:
        cache = IndexCache(reader, prices_for=prices_for)

        def ask() -> None:
            start.wait()
            cache.get(run_id)
            indexes.append(cache.wait(run_id).index)

        try:
            threads = [threading.Thread(target=ask) for _ in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            cache.close()
    assert builds == ["agenteval-view-index"]
    assert len(indexes) == 8 and indexes[0] is not None
    assert all(index is indexes[0] for index in indexes)
