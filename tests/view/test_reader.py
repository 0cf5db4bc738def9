"""The viewer's reads: the store opened read-only (never created, laid out, switched or
written; bad files refused with the usual one-line errors), a store another process is writing
read while it writes, and `StoreReader`'s paged reads, stamps and search over real files."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest
from tests.view.bulk import case_id, expected_kind, live_writer_command, write_bulk_run

from agenteval.case import EvalCase
from agenteval.errors import StoreError
from agenteval.records import RunInfo, RunStatus, TrialResult
from agenteval.score import Score
from agenteval.sqlite import Database
from agenteval.store import SCHEMA_VERSION, RunStore
from agenteval.store.layout import STORE_FILE
from agenteval.trace import Trial
from agenteval.view import StoreReader, UnknownRun

BULK_TRIALS = 100_000


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _result(case: EvalCase, trial: int, value: float = 1.0, *, note: str = "") -> TrialResult:
    return TrialResult(
        case=case,
        trial=Trial(case_id=case.id, trial=trial, output=f"out {case.id} {trial}", latency_s=0.1),
        scores={
            "exact_match": Score(
                name="exact_match", value=value, passed=value >= 0.5, reason=note or "checked"
            ),
            "helpful": Score(name="helpful", value=0.5, passed=True),
        },
    )


def _small_store(path: Path, *, cases: int = 4, trials: int = 2) -> tuple[str, list[EvalCase]]:
    """A finished run stored through `RunStore`, its file closed (WAL folded in)."""
    made = [
        EvalCase(id=f"c{i}", input=f'Question {i}: ÉTÉ 100%_done "quoted"', tags=[f"t{i % 2}"])
        for i in range(cases)
    ]
    info = RunInfo(target="small.yaml", agent="python:small", trials=trials)
    with RunStore(path) as store:
        store.create_run(info, made)
        store.add_results(info.run_id, [_result(c, t) for c in made for t in range(trials)])
        store.set_status(info.run_id, RunStatus.FINISHED)
    return info.run_id, made


@pytest.fixture
def small(tmp_path: Path) -> tuple[Path, str, list[EvalCase]]:
    path = tmp_path / "runs.db"
    run_id, cases = _small_store(path)
    return path, run_id, cases


@pytest.fixture(scope="module")
def bulk(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One 100,000-trial run (50,000 cases, two trials each) for the module's tests."""
    path = tmp_path_factory.mktemp("bulk") / "runs.db"
    return path, write_bulk_run(path, trials=BULK_TRIALS)


# -- opened read-only --------------------------------------------------------------------------


def test_a_read_only_store_reads_everything_and_leaves_the_file_as_it_was(
    small: tuple[Path, str, list[EvalCase]],
) -> None:
    path, run_id, cases = small
    before = _digest(path)
    with RunStore(path, read_only=True) as store:
        assert store.read_only
        assert store.get_info(run_id).agent == "python:small"
        assert [c.id for c in store.get_cases(run_id)] == [c.id for c in cases]
        assert len(list(store.iter_results(run_id))) == 8
        assert store.missing_trials(run_id).count == 0
        assert [row.run_id for row in store.list_runs()] == [run_id]
    assert _digest(path) == before


def test_every_write_to_a_read_only_store_raises_and_writes_nothing(
    small: tuple[Path, str, list[EvalCase]],
) -> None:
    path, run_id, cases = small
    before = _digest(path)
    with RunStore(path, read_only=True) as store:
        writes = [
            lambda: store.create_run(RunInfo(target="x"), cases),
            lambda: store.add_result(run_id, _result(cases[0], 5)),
            lambda: store.set_status(run_id, RunStatus.RUNNING),
            lambda: store.replace_scores(run_id, "c0", 0, {}),
        ]
        for write in writes:
            with pytest.raises(StoreError, match="read-only"):
                write()
    assert _digest(path) == before


def test_opening_read_only_never_changes_the_journal_mode_nor_lays_the_file_out(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    run_id, _ = _small_store(path)
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode = DELETE")  # as an older or hand-edited store may be
    before = _digest(path)
    with StoreReader(path) as reader:
        assert reader.info(run_id).run_id == run_id
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert _digest(path) == before


@pytest.mark.parametrize(
    ("make", "message"),
    [
        ("missing", "no run store here"),
        ("folder", "is a folder"),
        ("not_sqlite", "not a SQLite database"),
        ("foreign", "is a SQLite database but not an agenteval run store"),
        ("empty_sqlite", "is an empty file, not yet an agenteval run store"),
        ("newer", "written by a newer agenteval"),
        ("older", "has an older layout"),
        ("corrupt", "the run store is corrupt"),
    ],
)
def test_a_file_the_viewer_cannot_read_gives_one_line_and_is_left_as_it_was(
    tmp_path: Path, make: str, message: str
) -> None:
    path = tmp_path / "runs.db"
    if make == "folder":
        path.mkdir()
    elif make == "not_sqlite":
        path.write_bytes(b"my notes, not a database\n" * 100)
    elif make == "foreign":
        with closing(sqlite3.connect(path)) as db:
            db.execute("CREATE TABLE users (name TEXT)")
            db.commit()
    elif make == "empty_sqlite":
        path.write_bytes(b"")
    elif make in ("newer", "older", "corrupt"):
        _small_store(path)
        if make == "corrupt":
            data = bytearray(path.read_bytes())
            data[100:4096] = b"\xa5" * (4096 - 100)  # the schema page, past the header
            path.write_bytes(bytes(data))
        else:
            version = SCHEMA_VERSION + 1 if make == "newer" else SCHEMA_VERSION - 1
            with closing(sqlite3.connect(path)) as db:
                db.execute(f"PRAGMA user_version = {version}")
                db.commit()
    files_before = sorted(p.name for p in tmp_path.iterdir())
    before = _digest(path) if path.is_file() else None

    with pytest.raises(StoreError) as caught, StoreReader(path) as reader:
        reader.runs()

    text = str(caught.value)
    assert message in text
    assert str(path) in text
    assert "Traceback" not in text and len(text.splitlines()) <= 2
    assert isinstance(caught.value.hint, str) and caught.value.hint
    if make == "missing":
        assert not path.exists()
    if before is not None:
        assert _digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == files_before


def test_database_read_only_write_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _small_store(path)
    db = Database(path, STORE_FILE, read_only=True)
    try:
        assert db.read_only
        with pytest.raises(StoreError, match="open read-only"), db.write() as conn:
            conn.execute("DELETE FROM runs")
        with db.use() as conn:
            with pytest.raises(sqlite3.OperationalError, match="readonly"):
                conn.execute("DELETE FROM runs")  # SQLite itself refuses: mode=ro
            assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    finally:
        db.close()


def test_a_path_with_uri_characters_is_opened_as_that_file(tmp_path: Path) -> None:
    folder = tmp_path / "odd ?mode=rwc#x%20"
    folder.mkdir()
    path = folder / "runs.db"
    run_id, _ = _small_store(path)
    with StoreReader(path) as reader:
        assert [row.run_id for row in reader.runs()] == [run_id]
    assert sorted(p.name for p in tmp_path.iterdir()) == [folder.name]


# -- read while another process writes ----------------------------------------------------------


def test_a_store_being_written_by_another_process_is_read_while_it_writes(
    tmp_path: Path,
) -> None:
    """A real writer process stores 150 trials one by one; the reader reads throughout,
    holding read snapshots open in between, and the writer never waits on it."""
    path = tmp_path / "runs.db"
    run_id = "20261202-120000-live"
    writer = subprocess.Popen(
        live_writer_command(path, run_id, 150, 0.005),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "created"
    seen: list[int] = []
    stamps = set()
    with StoreReader(path, refresh_s=0) as reader:
        # A read snapshot held open the whole time (a page mid-way through a long read).
        held = RunStore(path, read_only=True)
        conn = held._conn
        assert conn is not None
        conn.execute("BEGIN")
        # The writer goes on meanwhile: on a loaded machine it may have stored a few already.
        at_start = conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
        assert at_start < 150
        while writer.poll() is None:
            seen.append(reader.stamp(run_id).trials)
            stamps.add(reader.stamp(run_id))
            keys = reader.keys_in_order(run_id, 0, 1_000)
            assert keys == [(f"live-{i:04d}", 0) for i in range(len(keys))]
            assert len(reader.results(run_id, keys[-3:])) == len(keys[-3:])
        out, err = writer.communicate()
        assert writer.returncode == 0, err
        assert out.strip().endswith("finished")
        # The held snapshot still sees the store as it was when it began.
        assert conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == at_start
        conn.execute("COMMIT")
        held.close()
        final = reader.stamp(run_id)
        assert final.trials == 150 and final.status == "finished"
        assert reader.missing(run_id).count == 0
    assert seen == sorted(seen)  # never backwards
    assert any(0 < n < 150 for n in seen), seen  # read mid-run, not only before and after
    assert len(stamps) > 2


# -- StoreReader ----------------------------------------------------------------------------


def test_runs_lists_every_run_newest_first_with_agent_and_duration(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    first, _ = _small_store(path)
    second = write_bulk_run(path, trials=20, cases=10, finished=False)
    with StoreReader(path) as reader:
        rows = reader.runs()
    assert [row.run_id for row in rows] == [second, first]
    assert rows[0].agent == "python:bulk_agent" and rows[1].agent == "python:small"
    assert rows[0].duration_s is None and rows[0].status is RunStatus.RUNNING
    assert rows[1].duration_s is not None and rows[1].duration_s >= 0
    assert (rows[0].trials_done, rows[0].trials_total, rows[0].complete) == (20, 20, True)
    assert (rows[1].cases, rows[1].trials_per_case) == (4, 2)


def test_an_unknown_run_raises_unknown_run_everywhere(
    small: tuple[Path, str, list[EvalCase]],
) -> None:
    path, _, _ = small
    with StoreReader(path) as reader:
        calls = [
            lambda: reader.info("nope"),
            lambda: reader.stamp("nope"),
            lambda: reader.missing("nope"),
            lambda: reader.results("nope", [("c0", 0)]),
            lambda: reader.case_results("nope", "c0"),
            lambda: reader.result("nope", "c0", 0),
            lambda: reader.keys_in_order("nope", 0, 10),
            lambda: reader.search("nope", "x"),
        ]
        for call in calls:
            with pytest.raises(UnknownRun) as caught:
                call()
            assert isinstance(caught.value, LookupError)
            assert caught.value.run_id == "nope"


def test_results_come_in_the_order_asked_and_only_stored_keys(
    small: tuple[Path, str, list[EvalCase]],
) -> None:
    path, run_id, _ = small
    with StoreReader(path) as reader:
        keys = [("c3", 1), ("c0", 0), ("c9", 0), ("c3", 0), ("c0", 7)]
        got = reader.results(run_id, keys)
        assert [r.key for r in got] == [("c3", 1), ("c0", 0), ("c3", 0)]
        assert list(got[0].scores) == ["exact_match", "helpful"]  # as written
        assert [r.key for r in reader.case_results(run_id, "c2")] == [("c2", 0), ("c2", 1)]
        assert reader.case_results(run_id, "c9") == []
        one = reader.result(run_id, "c1", 1)
        assert one is not None and one.trial.output == "out c1 1"
        assert reader.result(run_id, "c1", 2) is None


def test_keys_in_order_pages_through_the_run_in_report_order(
    small: tuple[Path, str, list[EvalCase]],
) -> None:
    path, run_id, _ = small
    with StoreReader(path) as reader:
        everything = [(r.case.id, r.trial.trial) for r in reader.iter_results(run_id)]
        pages = [reader.keys_in_order(run_id, offset, 3) for offset in range(0, 9, 3)]
    assert [key for page in pages for key in page] == everything
    assert everything[:3] == [("c0", 0), ("c0", 1), ("c1", 0)]
    assert pages[-1] == everything[6:]


def test_search_is_a_case_insensitive_substring_of_the_stored_case_or_trial(
    small: tuple[Path, str, list[EvalCase]],
) -> None:
    path, run_id, _ = small
    every = {(f"c{i}", t) for i in range(4) for t in range(2)}
    with StoreReader(path) as reader:
        assert reader.search(run_id, "OUT C1 1") == {("c1", 1)}  # the trial's output
        assert reader.search(run_id, "question 2") == {("c2", 0), ("c2", 1)}  # the case's
        assert reader.search(run_id, "été") == every  # not ASCII: folded all the same
        assert reader.search(run_id, "100%_d") == every  # LIKE's wildcards are text
        assert reader.search(run_id, "100%x") == set()
        assert reader.search(run_id, "1__") == set()
        assert reader.search(run_id, '"quoted"') == every  # as JSON writes quotes
        assert reader.search(run_id, "nothing like it") == set()
        assert reader.search(run_id, "  ") == set()


def test_the_stamp_changes_with_every_change_a_page_shows_and_only_then(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    run_id, cases = _small_store(path)
    last = cases[-1]
    new_scores = {
        "exact_match": Score(name="exact_match", value=1.0, passed=True),
        "helpful": Score(name="helpful", value=0.25, passed=False),
    }
    with RunStore(path) as writer, StoreReader(path, refresh_s=0) as reader:
        first = reader.stamp(run_id)
        assert reader.stamp(run_id) == first

        # The last trial's scores replaced (delete and insert): SQLite reuses their rowids,
        # so the counts and the highest rowid stay; the stamp sees it all the same.
        writer.replace_scores(run_id, last.id, 1, new_scores)
        replaced = reader.stamp(run_id)
        assert (replaced.trials, replaced.scores, replaced.max_score_rowid) == (
            first.trials,
            first.scores,
            first.max_score_rowid,
        )
        assert replaced.content != first.content

        # The same trial stored again, its scores as they are: only the trial changed.
        trial = Trial(case_id=last.id, trial=1, output="another answer", latency_s=0.2)
        writer.add_result(run_id, TrialResult(case=last, trial=trial, scores=new_scores))
        again = reader.stamp(run_id)
        assert (again.scores, again.max_score_rowid, again.content) == (
            replaced.scores,
            replaced.max_score_rowid,
            replaced.content,
        )
        assert again != replaced

        # Another run written: this run's stamp stays.
        other = RunInfo(target="other.yaml")
        writer.create_run(other, cases)
        writer.add_results(other.run_id, [_result(cases[0], 0)])
        assert reader.stamp(run_id) == again

        # A score merged in place (a rescore's merge): same rows, counts and rowids.
        stored = next(s for s in writer.iter_stored(run_id) if s.key == ("c2", 1))
        writer.merge_scores(
            run_id, [(stored, {"exact_match": Score(name="exact_match", value=0.0, passed=False)})]
        )
        merged = reader.stamp(run_id)
        assert (merged.trials, merged.scores, merged.max_score_rowid) == (
            again.trials,
            again.scores,
            again.max_score_rowid,
        )
        assert merged != again

        writer.add_result(run_id, _result(EvalCase(id="c9", input="new"), 0))
        appended = reader.stamp(run_id)
        assert appended.trials == merged.trials + 1

        writer.set_status(run_id, RunStatus.RUNNING)
        running = reader.stamp(run_id)
        assert running.status == "running" and running.finished_at is None
        assert reader.stamp(run_id) == running


def test_the_stamp_is_not_recomputed_until_the_refresh_interval_passes(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    run_id, _cases = _small_store(path)
    with RunStore(path) as writer, StoreReader(path, refresh_s=3600) as reader:
        first = reader.stamp(run_id)
        writer.add_result(run_id, _result(EvalCase(id="c9", input="new"), 0))
        assert reader.stamp(run_id) == first  # within the hour: the stamp as last computed
    with StoreReader(path, refresh_s=3600) as fresh:
        assert fresh.stamp(run_id).trials == first.trials + 1


def test_many_threads_read_at_once(small: tuple[Path, str, list[EvalCase]]) -> None:
    path, run_id, _ = small
    errors: list[BaseException] = []
    with StoreReader(path, refresh_s=0) as reader:
        expected = [r.key for r in reader.iter_results(run_id)]

        def read() -> None:
            try:
                for _ in range(40):
                    keys = reader.keys_in_order(run_id, 0, 100)
                    assert keys == expected
                    assert [r.key for r in reader.results(run_id, keys)] == expected
                    assert reader.stamp(run_id).trials == 8
                    assert reader.search(run_id, "out c3") == {("c3", 0), ("c3", 1)}
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=read) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []


def test_a_copied_store_while_open_is_readable_as_a_new_reader(tmp_path: Path) -> None:
    """A store whose WAL was never folded in (its writer still open) reads complete."""
    path = tmp_path / "runs.db"
    run_id, _ = _small_store(path)
    with RunStore(path) as writer:
        writer.add_result(run_id, _result(EvalCase(id="c9", input="new"), 0))
        copy = tmp_path / "copy.db"
        for suffix in ("", "-wal"):
            if Path(f"{path}{suffix}").exists():
                shutil.copy(f"{path}{suffix}", f"{copy}{suffix}")
        with StoreReader(copy) as reader:
            assert reader.stamp(run_id).trials == 9


# -- 100,000 trials -----------------------------------------------------------------------------


def test_the_last_page_of_a_100k_run_reads_its_keys_and_results(bulk: tuple[Path, str]) -> None:
    path, run_id = bulk
    with StoreReader(path) as reader:
        keys = reader.keys_in_order(run_id, BULK_TRIALS - 50, 50)
        assert keys == [(case_id(i // 2), i % 2) for i in range(BULK_TRIALS - 50, BULK_TRIALS)]
        results = reader.results(run_id, keys)
        assert [r.key for r in results] == keys
        for result in results:
            index = int(result.case.id.split("-")[1])
            failed = result.trial.failure is not None
            assert failed == (expected_kind(index, result.trial.trial) == "error")
        assert reader.keys_in_order(run_id, BULK_TRIALS, 50) == []
        assert reader.stamp(run_id).trials == BULK_TRIALS
        assert reader.search(run_id, "CASE-049999") == {(case_id(49_999), 0), (case_id(49_999), 1)}


def test_importing_the_viewer_imports_no_web_stack() -> None:
    code = (
        "import sys, agenteval.view; "
        "assert not {'starlette', 'uvicorn'} & set(sys.modules), sorted(sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
