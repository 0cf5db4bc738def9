"""The run store: every run, its cases, and each (case, trial) with its scores, in one SQLite file.

One writer (the engine's driver) streams results in as trials finish; each trial and its scores
are committed together, so a run killed at any moment resumes from what was stored. Readers in
other processes (`agenteval runs`, a report) can read while a run writes (WAL mode).

The store writes what it is given, with three exceptions, all made where a record is encoded
(`_to_json`): secrets are redacted; data nested past 64 levels, or circular, is stored cut, and
the record notes the cut (`jsonsafe`); values under secret-named keys in what agents and scorers
produced are masked. Anything else a caller puts in a `RunInfo`, a case or a trial is what lands
on disk.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from agenteval.case import EvalCase
from agenteval.errors import StoreError
from agenteval.jsonsafe import Hide, cut_copy, model_json_text, safe_repr
from agenteval.records import MissingTrials, RunInfo, RunStatus, TrialResult
from agenteval.redaction import REDACTED, Redactor, is_secret_key
from agenteval.score import Score
from agenteval.sqlite.damage import (
    Stamp,
    damage_summary,
    file_stamp,
    known_undamaged,
    quick_check,
    remember,
)
from agenteval.trace import Trial, utc_now

__all__ = [
    "DEFAULT_STORE_PATH",
    "SCHEMA_VERSION",
    "EncodedResults",
    "RunStore",
    "RunSummaryRow",
    "StoredTrial",
]

DEFAULT_STORE_PATH = Path(".agenteval/runs.db")
"""Where runs are stored unless `--store` says otherwise."""

SCHEMA_VERSION = 1
"""The layout this version writes (`PRAGMA user_version`). Older layouts are upgraded in place by
adding to them, never by dropping anything; a newer one is refused."""

# `PRAGMA application_id` marks the file as ours, so another program's SQLite database is refused
# instead of having tables added to it. 0x61676576 is "agev".
_APPLICATION_ID = 0x61676576
_SQLITE_HEADER = b"SQLite format 3\x00"
_BUSY_TIMEOUT_S = 30.0
_CHUNK = 500
_RUNS_HINT = "agenteval runs lists the stored runs"
_OTHER_FILE_HINT = "pass --store PATH to use another file"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    created_at  TEXT NOT NULL,
    finished_at TEXT,
    status      TEXT NOT NULL,
    target      TEXT,
    trials      INTEGER NOT NULL,
    info        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at);
CREATE INDEX IF NOT EXISTS runs_by_target ON runs (target, status, created_at);
CREATE TABLE IF NOT EXISTS cases (
    run_id  TEXT NOT NULL,
    idx     INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    data    TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS cases_in_order ON cases (run_id, idx);
CREATE TABLE IF NOT EXISTS trials (
    run_id      TEXT NOT NULL,
    case_id     TEXT NOT NULL,
    trial       INTEGER NOT NULL,
    data        TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id, trial)
);
CREATE TABLE IF NOT EXISTS scores (
    run_id  TEXT NOT NULL,
    case_id TEXT NOT NULL,
    trial   INTEGER NOT NULL,
    name    TEXT NOT NULL,
    data    TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id, trial, name)
);
"""

# Upserts update in place rather than delete and re-insert (as INSERT OR REPLACE does), so a
# row keeps its rowid, and scores keep the order they were first written in.
_UPSERT_TRIAL = """
INSERT INTO trials (run_id, case_id, trial, data, finished_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (run_id, case_id, trial)
DO UPDATE SET data = excluded.data, finished_at = excluded.finished_at
"""
_UPSERT_SCORE = """
INSERT INTO scores (run_id, case_id, trial, name, data) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (run_id, case_id, trial, name) DO UPDATE SET data = excluded.data
"""
_DELETE_SCORES = "DELETE FROM scores WHERE run_id = ? AND case_id = ? AND trial = ?"

_M = TypeVar("_M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class StoredTrial:
    """A stored trial as a rescore reads it (`RunStore.iter_stored`): its case, the trial, and
    its scores as their stored JSON text, by name in the order written."""

    key: tuple[str, int]
    """(case id, trial index), as the trial is stored."""
    case: EvalCase
    trial: Trial
    scores: dict[str, str]


_SCORE_LIST: TypeAdapter[list[Score]] = TypeAdapter(list[Score])


def _scores_json(scores: list[Score]) -> bytes:
    """The scores as one JSON list in one call, each item as `_to_json` writes a score."""
    return _SCORE_LIST.dump_json(scores, fallback=safe_repr, warnings=False, exclude_defaults=True)


@dataclass(frozen=True)
class RunSummaryRow:
    """One stored run as `agenteval runs` lists it."""

    run_id: str
    created_at: datetime
    finished_at: datetime | None
    status: RunStatus
    target: str | None
    cases: int
    trials_per_case: int
    trials_done: int
    """(case, trial) pairs with a stored trial."""
    trials_total: int
    """The pairs the run was asked for: `cases * trials_per_case`, or for recorded traces the
    trials recorded (as `RunStore.missing_trials` counts them)."""

    @property
    def complete(self) -> bool:
        """Whether every pair has a stored trial: a run marked finished without it (as an older
        agenteval could mark one) is not finished."""
        return self.trials_done >= self.trials_total


@dataclass
class EncodedResults:
    """A batch of results ready to store (see `RunStore.encode_results`)."""

    written_at: str
    cases: dict[str, EvalCase] = field(default_factory=dict)
    keys: list[tuple[str, int]] = field(default_factory=list)
    trials: list[tuple[str, int, str]] = field(default_factory=list)
    """(case id, trial index, trial JSON)."""
    scores: list[tuple[str, int, str, str]] = field(default_factory=list)
    """(case id, trial index, scorer name, score JSON)."""


class RunStore:
    """The SQLite file that holds every run; a context manager that closes it on exit.

    `RunStore(path)` opens the file, creating it (and its folder) when it does not exist, unless
    `create=False`. A file that is not a run store, is corrupt, or was written by a newer
    agenteval raises `StoreError`; opening never changes or drops anything already stored.
    """

    def __init__(
        self,
        path: str | Path = DEFAULT_STORE_PATH,
        *,
        create: bool = True,
        redactor: Redactor | None = None,
    ) -> None:
        self._memory = str(path) == ":memory:"
        self._path = Path(path)
        # Secrets never reach the store: every record is redacted on its way in (API keys
        # from the environment, and well-known key shapes wherever they appear).
        self._redactor = redactor if redactor is not None else Redactor.from_environment()
        self._lock = threading.RLock()
        self._known_cases: dict[str, set[str]] = {}
        self._conn: sqlite3.Connection | None = None
        # The file's stamp when this store found it undamaged, before its first write (None:
        # not yet written, or an in-memory store).
        self._checked_stamp: tuple[tuple[int, int], Stamp] | None = None
        self._checked = self._memory
        if not self._memory:
            self._check_file(create)
        try:
            self._conn = sqlite3.connect(
                ":memory:" if self._memory else self._path,
                timeout=_BUSY_TIMEOUT_S,
                isolation_level=None,  # transactions are begun and ended explicitly
                check_same_thread=False,  # one writer, guarded by self._lock
            )
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            self._prepare_when_free()
        except BaseException:
            self._conn.close()
            self._conn = None
            raise

    def _prepare_when_free(self) -> None:
        # Processes opening a new store at the same moment (pytest-xdist workers, say) race to
        # switch it to WAL, which SQLite refuses while another holds the file: wait a little.
        deadline = time.monotonic() + _BUSY_TIMEOUT_S
        while True:
            try:
                self._prepare()
                return
            except StoreError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    @classmethod
    def open(cls, path: str | Path = DEFAULT_STORE_PATH, *, create: bool = True) -> RunStore:
        """Open (or create) the store at `path`; the same as `RunStore(path)`."""
        return cls(path, create=create)

    @property
    def path(self) -> Path:
        """The store's file."""
        return self._path

    def close(self) -> None:
        """Close the file. Everything written so far is already committed."""
        with self._lock:
            if self._conn is not None:
                # Closing the last connection folds the WAL into the file, which changes its
                # stamp; when nothing but this store's own writes touched the file since it was
                # checked, the file as it is after closing is known to be undamaged too.
                unchanged = (
                    self._checked_stamp is not None
                    and file_stamp(self._path) == self._checked_stamp
                )
                self._conn.close()
                self._conn = None
                if unchanged:
                    remember(self._path)

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({str(self._path)!r})"

    # -- runs -------------------------------------------------------------------------------

    def _json(self, model: BaseModel) -> str:
        return self._redactor.redact_text(_to_json(model))

    def _redacted(self, texts: list[str]) -> list[str]:
        """The JSON `texts` with secrets redacted. One search over all of them finds whether
        any holds a secret (JSON has no raw newline, so joining two records can never make a
        match); only then is each one redacted on its own."""
        joined = "\n".join(texts)
        if self._redactor.redact_text(joined) is joined:
            return texts
        return [self._redactor.redact_text(text) for text in texts]

    def create_run(self, info: RunInfo, cases: Iterable[EvalCase]) -> int:
        """Store a new run and its cases, in order, in one transaction; return how many cases.

        `cases` is read once, as it comes: a generator of any length is stored without ever
        being held in memory.
        """
        seen: set[str] = set()

        def case_rows() -> Iterator[tuple[str, int, str, str]]:
            numbered = enumerate(cases)
            while chunk := list(itertools.islice(numbered, _CHUNK)):
                for _, case in chunk:
                    if case.id in seen:
                        raise StoreError(
                            f"run {info.run_id!r} lists case id {case.id!r} twice",
                            file=self._path,
                            case=case.id,
                            hint="give every case a unique `id`",
                        )
                    seen.add(case.id)
                texts = self._redacted([_to_json(case) for _, case in chunk])
                for (idx, case), text in zip(chunk, texts, strict=True):
                    yield (info.run_id, idx, case.id, text)

        with self._write() as conn:
            if _exists(conn, info.run_id):
                raise StoreError(
                    f"a run with id {info.run_id!r} is already stored",
                    file=self._path,
                    hint="start a new run id, or resume that run",
                )
            conn.execute(
                "INSERT INTO runs (run_id, created_at, finished_at, status, target, trials, info)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                self._run_row(info),
            )
            conn.executemany(
                "INSERT INTO cases (run_id, idx, case_id, data) VALUES (?, ?, ?, ?)", case_rows()
            )
        self._known_cases[info.run_id] = seen
        return len(seen)

    def get_info(self, run_id: str) -> RunInfo:
        """The run's settings, as last stored."""
        with self._read() as conn:
            row = conn.execute("SELECT info FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise self._unknown_run(run_id)
        return self._parse(RunInfo, row[0], f"run {run_id!r}")

    def update_info(self, info: RunInfo) -> None:
        """Replace a stored run's settings (for example with the tools found at start)."""
        created_at, finished_at, status, target, trials, data = self._run_row(info)[1:]
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE runs SET created_at = ?, finished_at = ?, status = ?, target = ?,"
                " trials = ?, info = ? WHERE run_id = ?",
                (created_at, finished_at, status, target, trials, data, info.run_id),
            )
            if cursor.rowcount == 0:
                raise self._unknown_run(info.run_id)

    def change_info(self, run_id: str, change: Callable[[RunInfo], RunInfo]) -> RunInfo:
        """Read the run's settings, pass them through `change`, and store what it returns, in
        one write transaction; return the stored settings.

        The file is locked for writing before the read, so no other process writes the run in
        between: what `change` decides on (who owns the run, say) is still true when it is
        stored. An error raised by `change` leaves the run as it was.
        """
        with self._write() as conn:
            row = conn.execute("SELECT info FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise self._unknown_run(run_id)
            info = change(self._parse(RunInfo, row[0], f"run {run_id!r}"))
            if info.run_id != run_id:
                raise ValueError(f"change_info changed the run id {run_id!r} to {info.run_id!r}")
            conn.execute(
                "UPDATE runs SET created_at = ?, finished_at = ?, status = ?, target = ?,"
                " trials = ?, info = ? WHERE run_id = ?",
                (*self._run_row(info)[1:], run_id),
            )
        return info

    def set_status(
        self, run_id: str, status: RunStatus, finished_at: datetime | None = None
    ) -> None:
        """Mark a run running or finished.

        Finishing without a `finished_at` stamps the current time; setting a run back to
        running (to resume it) clears its finish time.
        """
        status = RunStatus(status)
        if finished_at is None and status is RunStatus.FINISHED:
            finished_at = utc_now()
        if status is RunStatus.RUNNING:
            finished_at = None
        with self._write() as conn:
            row = conn.execute("SELECT info FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise self._unknown_run(run_id)
            info = self._parse(RunInfo, row[0], f"run {run_id!r}")
            info.status = status
            info.finished_at = finished_at
            conn.execute(
                "UPDATE runs SET status = ?, finished_at = ?, info = ? WHERE run_id = ?",
                (status.value, _time_text(finished_at), self._json(info), run_id),
            )

    def list_runs(self, limit: int | None = None) -> list[RunSummaryRow]:
        """The stored runs, newest first, with how many of their trials are done."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT r.run_id, r.created_at, r.finished_at, r.status, r.target, r.trials,"
                " (SELECT COUNT(*) FROM cases c WHERE c.run_id = r.run_id),"
                " (SELECT COUNT(*) FROM trials t WHERE t.run_id = r.run_id AND t.trial < r.trials),"
                " json_extract(r.info, '$.settings.expected_trials')"
                " FROM runs r ORDER BY r.created_at DESC, r.run_id DESC LIMIT ?",
                (-1 if limit is None else max(limit, 0),),
            ).fetchall()
        return [
            RunSummaryRow(
                run_id=run_id,
                created_at=datetime.fromisoformat(created_at),
                finished_at=datetime.fromisoformat(finished_at) if finished_at else None,
                status=RunStatus(status),
                target=target,
                cases=n_cases,
                trials_per_case=trials,
                trials_done=done,
                trials_total=n_cases * trials
                if recorded is None
                else min(int(recorded), n_cases * trials),
            )
            for run_id, created_at, finished_at, status, target, trials, n_cases, done, recorded in (
                rows
            )
        ]

    def latest_unfinished(
        self, target: str, *, skip: Callable[[RunInfo], bool] | None = None
    ) -> str | None:
        """The most recent run on `target` that is still marked running, if any, passing over
        the runs `skip` names (those another live process is running, for `--resume`)."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT run_id, info FROM runs WHERE target = ? AND status = ?"
                " ORDER BY created_at DESC, run_id DESC",
                (target, RunStatus.RUNNING.value),
            )
            for run_id, data in rows:
                if skip is None or not skip(self._parse(RunInfo, data, f"run {run_id!r}")):
                    return str(run_id)
        return None

    def resolve_run_id(self, prefix_or_id: str) -> str:
        """The full id of the run named by `prefix_or_id`: a full id, a unique prefix of one,
        or `latest` for the most recent run."""
        wanted = prefix_or_id.strip()
        with self._read() as conn:
            if wanted == "latest":
                row = conn.execute(
                    "SELECT run_id FROM runs ORDER BY created_at DESC, run_id DESC LIMIT 1"
                ).fetchone()
                if row is None:
                    raise StoreError(
                        "no runs are stored yet", file=self._path, hint=_OTHER_FILE_HINT
                    )
                return str(row[0])
            if wanted and _exists(conn, wanted):
                return wanted
            matches = (
                [
                    str(row[0])
                    for row in conn.execute(
                        "SELECT run_id FROM runs WHERE substr(run_id, 1, ?) = ?"
                        " ORDER BY created_at DESC, run_id DESC",
                        (len(wanted), wanted),
                    )
                ]
                if wanted
                else []
            )
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise self._unknown_run(prefix_or_id)
        shown = ", ".join(matches[:10]) + (
            f" and {len(matches) - 10} more" if len(matches) > 10 else ""
        )
        raise StoreError(
            f"run id prefix {prefix_or_id!r} matches {len(matches)} runs: {shown}",
            file=self._path,
            hint=f"give more of the id; {_RUNS_HINT}",
        )

    # -- cases and results ------------------------------------------------------------------

    def get_cases(self, run_id: str) -> list[EvalCase]:
        """The run's cases, in the order they were given."""
        return list(self.iter_cases(run_id))

    def count_cases(self, run_id: str) -> int:
        """How many cases the run has."""
        with self._read() as conn:
            self._require_run(conn, run_id)
            row = conn.execute("SELECT COUNT(*) FROM cases WHERE run_id = ?", (run_id,)).fetchone()
        return int(row[0])

    def iter_cases(self, run_id: str) -> Iterator[EvalCase]:
        """The run's cases in order, read a chunk at a time (never all held in memory)."""
        with self._read() as conn:
            self._require_run(conn, run_id)
        return self._iter_cases(run_id)

    def _iter_cases(self, run_id: str) -> Iterator[EvalCase]:
        after = -1
        while True:
            with self._read() as conn:
                rows = conn.execute(
                    "SELECT idx, case_id, data FROM cases WHERE run_id = ? AND idx > ?"
                    " ORDER BY idx LIMIT ?",
                    (run_id, after, _CHUNK),
                ).fetchall()
            if not rows:
                return
            for _idx, case_id, data in rows:
                yield self._parse(EvalCase, data, f"case {case_id!r} of run {run_id!r}")
            after = rows[-1][0]

    def add_result(self, run_id: str, result: TrialResult) -> None:
        """Store one trial with all its scores, atomically; writing the same pair again
        replaces it (trial and score set) instead of adding a second copy."""
        self.add_results(run_id, (result,))

    def add_results(self, run_id: str, results: Iterable[TrialResult]) -> None:
        """Store a batch of trials with their scores in one transaction: all or none.

        A result whose case the run does not list yet adds that case after the others.
        """
        self.write_results(run_id, self.encode_results(results))

    def encode_results(self, results: Iterable[TrialResult]) -> EncodedResults:
        """A batch of results as the rows `write_results` stores: JSON, secrets redacted.

        `add_results` is both; the engine encodes in its event loop and writes in a thread,
        so that the thread, which waits on SQLite, holds the interpreter lock only briefly.
        """
        batch = list(results)
        texts: list[str] = []
        for result in batch:
            texts.append(_to_json(result.trial))
            texts.extend(_to_json(score) for score in result.scores.values())
        texts = self._redacted(texts)
        encoded = EncodedResults(written_at=_time_text(utc_now()) or "")
        next_text = iter(texts).__next__
        for result in batch:
            case_id, trial = result.key
            encoded.cases.setdefault(case_id, result.case)
            encoded.keys.append((case_id, trial))
            encoded.trials.append((case_id, trial, next_text()))
            encoded.scores.extend((case_id, trial, name, next_text()) for name in result.scores)
        return encoded

    def write_results(self, run_id: str, encoded: EncodedResults) -> None:
        """Store what `encode_results` made, in one transaction: all or none."""
        keys = [(run_id, case_id, trial) for case_id, trial in encoded.keys]
        with self._write() as conn:
            self._require_run(conn, run_id)
            self._add_missing_cases(conn, run_id, encoded.cases)
            conn.executemany(_DELETE_SCORES, keys)
            conn.executemany(
                _UPSERT_TRIAL,
                [(run_id, c, t, data, encoded.written_at) for c, t, data in encoded.trials],
            )
            conn.executemany(
                _UPSERT_SCORE, [(run_id, c, t, name, data) for c, t, name, data in encoded.scores]
            )

    def finished_keys(self, run_id: str) -> set[tuple[str, int]]:
        """The (case id, trial) pairs of the run that have a stored trial."""
        with self._read() as conn:
            self._require_run(conn, run_id)
            rows = conn.execute(
                "SELECT case_id, trial FROM trials WHERE run_id = ?", (run_id,)
            ).fetchall()
        return {(str(case_id), int(trial)) for case_id, trial in rows}

    def stored_trials(self, run_id: str, case_id: str) -> set[int]:
        """The trial indexes of one case of the run that have a stored trial (the pytest
        plugin's check that a case's every trial was stored before it is judged)."""
        with self._read() as conn:
            self._require_run(conn, run_id)
            rows = conn.execute(
                "SELECT trial FROM trials WHERE run_id = ? AND case_id = ?", (run_id, case_id)
            ).fetchall()
        return {int(trial) for (trial,) in rows}

    def count_results(self, run_id: str) -> int:
        """How many (case, trial) pairs of the run have a stored trial."""
        with self._read() as conn:
            self._require_run(conn, run_id)
            row = conn.execute("SELECT COUNT(*) FROM trials WHERE run_id = ?", (run_id,)).fetchone()
        return int(row[0])

    def missing_trials(self, run_id: str, *, examples: int = 5) -> MissingTrials:
        """How many of the run's (case, trial) pairs have no stored trial, naming up to
        `examples` of them in case order.

        Counting is one query over the stored keys (a few milliseconds for 100,000 trials);
        only a run with missing trials pays for finding which.
        """
        with self._read() as conn:
            row = conn.execute(
                "SELECT r.trials, json_extract(r.info, '$.settings.expected_trials'),"
                " (SELECT COUNT(*) FROM cases c WHERE c.run_id = r.run_id),"
                " (SELECT COUNT(*) FROM trials t WHERE t.run_id = r.run_id AND t.trial < r.trials)"
                " FROM runs r WHERE r.run_id = ?",
                (run_id,),
            ).fetchone()
            if row is None:
                raise self._unknown_run(run_id)
            trials, recorded, n_cases, stored = int(row[0]), row[1], int(row[2]), int(row[3])
            # Recorded traces scored as they are (`agenteval score`) may give cases unequal
            # numbers of trials: the run then asks for the recorded ones only.
            expected = n_cases * trials
            if recorded is not None:
                expected = min(int(recorded), expected)
            named: list[tuple[str, int]] = []
            if stored < expected and recorded is None and examples > 0:
                short = conn.execute(
                    "SELECT c.case_id, (SELECT group_concat(t.trial) FROM trials t"
                    " WHERE t.run_id = c.run_id AND t.case_id = c.case_id AND t.trial < ?)"
                    " FROM cases c WHERE c.run_id = ? AND (SELECT COUNT(*) FROM trials t"
                    " WHERE t.run_id = c.run_id AND t.case_id = c.case_id AND t.trial < ?) < ?"
                    " ORDER BY c.idx LIMIT ?",
                    (trials, run_id, trials, trials, examples),
                )
                for case_id, have in short:
                    present = {int(t) for t in str(have).split(",")} if have else set()
                    named.extend((str(case_id), t) for t in range(trials) if t not in present)
                    if len(named) >= examples:
                        break
        return MissingTrials(
            run_id=run_id, expected=expected, stored=stored, examples=tuple(named[:examples])
        )

    def iter_results(self, run_id: str) -> Iterator[TrialResult]:
        """Every stored result of the run with its scores, by case order then trial index.

        Results are read a chunk at a time, so a large run is never held in memory at once.
        """
        with self._read() as conn:
            self._require_run(conn, run_id)
        return self._iter_results(run_id)

    def _iter_results(self, run_id: str) -> Iterator[TrialResult]:
        for stored in self._iter_stored(run_id):
            where = f"case {stored.case.id!r} in run {run_id!r}"
            scores = {
                name: self._parse(Score, data, f"score {name!r} of {where}")
                for name, data in stored.scores.items()
            }
            yield TrialResult(case=stored.case, trial=stored.trial, scores=scores)

    def iter_stored(self, run_id: str) -> Iterator[StoredTrial]:
        """`iter_results` for a rescore: every stored trial with its case, and its scores left
        as their stored JSON text, by name in the order written.

        A rescore replaces most scores, so it parses only those it keeps (`read_score`), and
        `merge_scores` compares the new ones with the stored text.
        """
        with self._read() as conn:
            self._require_run(conn, run_id)
        return self._iter_stored(run_id)

    def _iter_stored(self, run_id: str) -> Iterator[StoredTrial]:
        # Results come case by case, so one parsed case is reused by all of its trials.
        case: EvalCase | None = None
        after = (-1, -1)
        while True:
            with self._read() as conn:
                rows = conn.execute(
                    "SELECT c.idx, t.trial, t.case_id, c.data, t.data"
                    " FROM cases c JOIN trials t ON t.run_id = c.run_id AND t.case_id = c.case_id"
                    # `c.idx >= ?` lets the index start at the last chunk's case.
                    " WHERE c.run_id = ? AND c.idx >= ?"
                    " AND (c.idx > ? OR (c.idx = ? AND t.trial > ?))"
                    " ORDER BY c.idx, t.trial LIMIT ?",
                    (run_id, after[0], after[0], after[0], after[1], _CHUNK),
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
                        # Interned: a summary keeps the names of every case's scores.
                        scores.setdefault((case_id, trial), {})[sys.intern(name)] = data
            for _idx, trial, case_id, case_data, trial_data in rows:
                if case is None or case.id != case_id:
                    case = self._parse(EvalCase, case_data, f"case {case_id!r} of run {run_id!r}")
                where = f"trial {trial} of case {case_id!r} in run {run_id!r}"
                yield StoredTrial(
                    key=(case_id, trial),
                    case=case,
                    trial=self._parse(Trial, trial_data, where),
                    scores=scores.get((case_id, trial), {}),
                )
            after = (rows[-1][0], rows[-1][1])

    def read_score(self, data: str, where: str) -> Score:
        """A score's stored JSON text (from `iter_stored`) as a `Score`; `where` names it in
        the error when this version cannot read it."""
        return self._parse(Score, data, where)

    def merge_scores(
        self,
        run_id: str,
        items: Iterable[tuple[StoredTrial, Mapping[str, Score]]],
    ) -> int:
        """`replace_scores_many(..., merge=True)` for trials read with `iter_stored`: the new
        scores replace the stored ones of the same name, in one transaction, and return how
        many were written.

        A score whose JSON is exactly its stored text is not written again: rescoring with the
        same scorers mostly gives the same scores, and serialising is far cheaper than
        redacting and writing. (What is stored was redacted when it was written.)
        """
        rows = [
            (run_id, *stored.key, name, data)
            for stored, scores in items
            for name, data in self._changed_scores(stored.scores, scores)
        ]
        if rows:
            with self._write() as conn:
                self._require_run(conn, run_id)
                conn.executemany(_UPSERT_SCORE, rows)
        return len(rows)

    def _changed_scores(
        self, stored: Mapping[str, str], scores: Mapping[str, Score]
    ) -> Iterator[tuple[str, str]]:
        """The scores whose JSON differs from the stored text, by name, redacted."""
        if stored.keys() >= scores.keys():
            # The usual case first: the whole set at once, in one call, equals what is stored.
            try:
                together = _scores_json(list(scores.values()))
            except (ValueError, TypeError, UnicodeError, RecursionError):
                together = b""
            texts = [stored[name] for name in scores]
            if together == f"[{','.join(texts)}]".encode():
                return
        for name, score in scores.items():
            text = _to_json(score)
            if stored.get(name) != text:
                yield name, self._redactor.redact_text(text)

    def replace_scores(
        self,
        run_id: str,
        case_id: str,
        trial: int,
        scores: Mapping[str, Score],
        *,
        merge: bool = False,
    ) -> None:
        """Write new scores for a stored trial: replace its whole score set, or with
        `merge=True` only add or overwrite the scores named in `scores`."""
        self.replace_scores_many(run_id, [(case_id, trial, scores)], merge=merge)

    def replace_scores_many(
        self,
        run_id: str,
        items: Iterable[tuple[str, int, Mapping[str, Score]]],
        *,
        merge: bool = False,
    ) -> None:
        """`replace_scores` for many (case id, trial, scores) at once, in one transaction."""
        batch = [(case_id, trial, dict(scores)) for case_id, trial, scores in items]
        rows = [
            (run_id, case_id, trial, name, self._json(score))
            for case_id, trial, scores in batch
            for name, score in scores.items()
        ]
        with self._write() as conn:
            self._require_run(conn, run_id)
            for case_id, trial, _scores in batch:
                found = conn.execute(
                    "SELECT 1 FROM trials WHERE run_id = ? AND case_id = ? AND trial = ?",
                    (run_id, case_id, trial),
                ).fetchone()
                if found is None:
                    raise StoreError(
                        f"run {run_id!r} has no stored trial {trial} of case {case_id!r} to score",
                        file=self._path,
                        case=case_id,
                        hint="only stored trials can be rescored",
                    )
            if not merge:
                conn.executemany(
                    _DELETE_SCORES, [(run_id, case_id, trial) for case_id, trial, _ in batch]
                )
            conn.executemany(_UPSERT_SCORE, rows)

    # -- opening ----------------------------------------------------------------------------

    def _check_file(self, create: bool) -> None:
        # Look at the file before SQLite does: a file that is not a database is refused
        # without being touched (SQLite would otherwise try to write a WAL beside it).
        path = self._path
        try:
            if path.exists():
                if path.is_dir():
                    raise StoreError(
                        "is a folder, not a run store file", file=path, hint=_OTHER_FILE_HINT
                    )
                with path.open("rb") as fh:
                    header = fh.read(len(_SQLITE_HEADER))
                if header and header != _SQLITE_HEADER:
                    raise StoreError(
                        "is not an agenteval run store (not a SQLite database)",
                        file=path,
                        hint=f"{_OTHER_FILE_HINT}, or move this file aside",
                    )
            elif not create:
                raise StoreError(
                    "no run store here",
                    file=path,
                    hint=f"run `agenteval run` first, or {_OTHER_FILE_HINT}",
                )
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot open the run store: {exc.strerror or exc}",
                file=path,
                hint=_OTHER_FILE_HINT,
            ) from None

    def _prepare(self) -> None:
        with self._lock, self._guard():
            conn = self._live()
            app_id, version, tables = _identify(conn)
            self._check_identity(app_id, version, tables)
            if not self._memory:
                # WAL: readers in other processes never block the writer nor see half a
                # transaction. NORMAL sync with WAL keeps every commit across a killed process.
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            if version == SCHEMA_VERSION and app_id == _APPLICATION_ID:
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                # Another process may have set the file up between the look and the lock.
                app_id, version, tables = _identify(conn)
                self._check_identity(app_id, version, tables)
                self._migrate(conn, version)
                conn.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _check_identity(self, app_id: int, version: int, tables: int) -> None:
        foreign = app_id not in (0, _APPLICATION_ID) or (app_id == 0 and tables > 0)
        if foreign:
            raise StoreError(
                "is a SQLite database but not an agenteval run store",
                file=self._path,
                hint=f"{_OTHER_FILE_HINT}; this file is left as it is",
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the run store was written by a newer agenteval (store schema {version}; "
                f"this version reads up to {SCHEMA_VERSION})",
                file=self._path,
                hint=f"upgrade agenteval, or {_OTHER_FILE_HINT}",
            )

    @staticmethod
    def _migrate(conn: sqlite3.Connection, version: int) -> None:
        # Each step only adds (tables, columns, indexes); nothing stored is dropped or rewritten.
        if version < 1:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)

    # -- plumbing ---------------------------------------------------------------------------

    def _live(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError("the run store is closed", file=self._path)
        return self._conn

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._guard():
            yield self._live()

    def check_undamaged(self) -> None:
        """Raise `StoreError` if the file is damaged, saying what can still be read; the first
        write checks anyway, so a caller only calls this to refuse sooner (before a run
        starts, say)."""
        with self._lock, self._guard():
            if not self._checked:
                self._check_undamaged(self._live())

    def _check_undamaged(self, conn: sqlite3.Connection) -> None:
        """Refuse to write to a damaged file, before the first write (see `store_check`)."""
        self._checked = True
        stamp = file_stamp(self._path)
        if known_undamaged(self._path):
            self._checked_stamp = stamp
            return
        problems = quick_check(conn)
        if problems:
            raise self._damaged(problems)
        self._checked_stamp = stamp
        remember(self._path, stamp)

    def _damaged(self, problems: list[str]) -> StoreError:
        """The error for a damaged file: what SQLite found, and what can still be read."""
        try:
            readable = (
                f"`agenteval runs` still lists its {len(self.list_runs())} runs, and "
                "`agenteval show RUN_ID --json FILE` reads any run whose pages are intact"
            )
        except StoreError:
            readable = (
                "its list of runs is damaged too; `agenteval show RUN_ID --json FILE` may still "
                "read a run whose pages are intact"
            )
        return StoreError(
            f"the run store is damaged ({damage_summary(problems)}); nothing was written to it",
            file=self._path,
            hint=f"{readable}; `sqlite3 {self._path} .recover` salvages what SQLite can still "
            "read; move the file aside to start a new store, or " + _OTHER_FILE_HINT,
        )

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._guard():
            conn = self._live()
            if not self._checked:
                self._check_undamaged(conn)
            # IMMEDIATE takes the write lock up front, so two writing processes wait for each
            # other (busy timeout) instead of failing halfway through a transaction.
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _error(self, exc: sqlite3.Error) -> StoreError:
        text = str(exc)
        lowered = text.lower()
        if "locked" in lowered or "busy" in lowered:
            hint = "another process is writing to this store; wait for it, or " + _OTHER_FILE_HINT
        elif "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
            hint = f"the file is damaged; move it aside to start a new store, or {_OTHER_FILE_HINT}"
            text = f"the run store is corrupt ({text})"
        elif "readonly" in lowered or "read-only" in lowered or "unable to open" in lowered:
            hint = f"check the file's and its folder's permissions, or {_OTHER_FILE_HINT}"
        elif "full" in lowered:
            hint = f"free some disk space, or {_OTHER_FILE_HINT}"
        else:
            hint = _OTHER_FILE_HINT
        return StoreError(f"run store error: {text}", file=self._path, hint=hint)

    def _unknown_run(self, run_id: str) -> StoreError:
        return StoreError(f"no stored run {run_id!r}", file=self._path, hint=_RUNS_HINT)

    def _require_run(self, conn: sqlite3.Connection, run_id: str) -> None:
        if not _exists(conn, run_id):
            raise self._unknown_run(run_id)

    def _add_missing_cases(
        self, conn: sqlite3.Connection, run_id: str, cases: Mapping[str, EvalCase]
    ) -> None:
        known = self._known_cases.get(run_id)
        if known is None or not known.issuperset(cases):
            known = self._known_cases[run_id] = {
                str(row[0])
                for row in conn.execute("SELECT case_id FROM cases WHERE run_id = ?", (run_id,))
            }
        for case_id, case in cases.items():
            if case_id in known:
                continue
            conn.execute(
                "INSERT INTO cases (run_id, idx, case_id, data) SELECT ?, COALESCE(MAX(idx), -1)"
                " + 1, ?, ? FROM cases WHERE run_id = ?",
                (run_id, case_id, self._json(case), run_id),
            )
            known.add(case_id)

    def _run_row(self, info: RunInfo) -> tuple[str, str, str | None, str, str | None, int, str]:
        return (
            info.run_id,
            _time_text(info.created_at) or "",
            _time_text(info.finished_at),
            RunStatus(info.status).value,
            info.target,
            info.trials,
            self._json(info),
        )

    def _parse(self, model: type[_M], data: str, where: str) -> _M:
        try:
            return model.model_validate_json(data)
        except ValidationError as exc:
            cut = _read_cut(model, data)
            if cut is not None:
                return cut
            raise StoreError(
                f"{where} cannot be read by this version of agenteval: "
                f"{exc.error_count()} invalid field(s), first: {exc.errors()[0]['msg']}",
                file=self._path,
                hint="read it with the agenteval version that wrote it, or start a new run",
            ) from None


def _identify(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """The file's application id, schema version and number of tables."""
    # One statement, so one snapshot: read apart, another process setting the file up in
    # between could show its tables but not yet its application id (a "foreign" file).
    app_id, version, tables = conn.execute(
        "SELECT (SELECT application_id FROM pragma_application_id),"
        " (SELECT user_version FROM pragma_user_version),"
        " (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%')"
    ).fetchone()
    return int(app_id), int(version), int(tables)


def _exists(conn: sqlite3.Connection, run_id: str) -> bool:
    return conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is not None


def _time_text(moment: datetime | None) -> str | None:
    # One fixed UTC form, so stored times sort as text.
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


# What an agent or a tool produced is masked by key (`password`, `api_key`, `session_cookie`, ...)
# wherever it comes from: every record passes through `_to_json` on its way in, so this is the
# one place that covers the recorder, OpenTelemetry spans, an agent's own Trial, a recorded
# `agent_trace` and a scorer's details alike. What the user wrote (settings, tool schemas,
# expected arguments) is not masked by key: a schema's `password` property is not a secret.
_HIDDEN_FIELDS: dict[type[BaseModel], frozenset[str]] = {
    Trial: frozenset({"tool_calls", "steps", "metadata"}),
    Score: frozenset({"details"}),
    EvalCase: frozenset({"agent_trace"}),
}
# Where a record notes what had to be cut to store it (`jsonsafe.CUT_NOTE`).
_NOTE_FIELDS: dict[type[BaseModel], str] = {
    Trial: "metadata",
    Score: "details",
    EvalCase: "metadata",
    RunInfo: "settings",
}
_HOW: dict[type[BaseModel], tuple[Hide | None, str | None]] = {
    model: (
        Hide(secret=is_secret_key, fields=_HIDDEN_FIELDS[model], mask=REDACTED)
        if model in _HIDDEN_FIELDS
        else None,
        note_in,
    )
    for model, note_in in _NOTE_FIELDS.items()
}
_AS_GIVEN: tuple[Hide | None, str | None] = (None, None)


def _to_json(model: BaseModel) -> str:
    """The record as JSON text; never fails, whatever an agent or a tool put in it: deep or
    circular data is cut (and noted in the record), secret-named keys masked (`jsonsafe`)."""
    hide, note_in = _HOW.get(type(model), _AS_GIVEN)
    return model_json_text(model, hide, note_in)


def _read_cut(model: type[_M], data: str) -> _M | None:
    """A stored record too deep for pydantic's JSON reader (stores written before the depth
    limit): read by `json`, cut to the limit, then validated; None when that fails too."""
    try:
        plain = json.loads(data)
    except (ValueError, RecursionError):
        return None
    try:
        return model.model_validate(cut_copy(plain, _NOTE_FIELDS.get(model)))
    except (ValidationError, RecursionError):
        return None
