"""The viewer's reads of the run store: the store opened read-only, shared by the server's
threads, read a page at a time.

`StoreReader(path)` opens the store with `RunStore(path, read_only=True)`: a missing, foreign,
corrupt or newer file raises the usual one-line `StoreError` at once, and nothing the viewer
does can write to the file. Each call borrows one of a few read-only connections (uvicorn runs
the app's handlers in a thread pool, and a connection serves one thread at a time), so a long
read (an index build) never holds up a page. A run being written by another process is read as
of each call's snapshot (WAL); the writer is never blocked.

`stamp(run_id)` says cheaply whether anything a page shows of a run changed: see `Stamp`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agenteval.records import MissingTrials, RunInfo, TrialResult
from agenteval.report.html.trials import search_text
from agenteval.store import RunStore, RunSummaryRow

__all__ = ["RunRow", "Stamp", "StoreReader", "UnknownRun"]

_IDLE = 4
"""Read-only connections kept open between calls; more are opened while more threads read."""


class UnknownRun(LookupError):
    """No run of this id is stored (the app answers 404)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(run_id)
        self.run_id = run_id

    def __str__(self) -> str:
        return f"no stored run {self.run_id!r}"


@dataclass(frozen=True)
class RunRow(RunSummaryRow):
    """One run as the runs list shows it: `agenteval runs`'s row, its agent and how long it
    took (None while it runs)."""

    agent: str | None = None
    """The agent as the run stored it (`RunInfo.agent`)."""

    @property
    def duration_s(self) -> float | None:
        """Seconds from start to finish; None for a run not finished."""
        if self.finished_at is None:
            return None
        return (self.finished_at - self.created_at).total_seconds()


@dataclass(frozen=True, slots=True)
class Stamp:
    """What a run's pages show, in a few numbers: two stamps of a run are equal unless
    something shown changed in between (a trial stored, scores rescored, the status or the
    settings changed). The `IndexCache` rebuilds a run's index when its stamp changes, and the
    live pages poll it.

    The counts come from indexes (40 ms for 100,000 trials). A rescore can rewrite scores in
    place, keeping their rows, counts and rowids, and a trial stored again keeps its row:
    `content` and `written` catch those (a CRC of every score's JSON, 0.3 s for 100,000 trials).
    Nothing is recomputed while nothing was committed to the file (`StoreReader.stamp`).
    """

    status: str
    finished_at: str | None
    info_hash: str
    """A hash of the run's stored info (settings, status) text."""
    trials: int
    """Trials stored."""
    scores: int
    """Scores stored."""
    max_score_rowid: int
    content: int
    """A CRC of the run's scores' stored JSON."""
    written: str | None
    """When a trial of the run was last written (the latest `trials.finished_at`)."""


@dataclass
class _Stamping:
    """The last stamp of a run, and what it was computed from."""

    version: int
    """`PRAGMA data_version` on the stamping connection when it was computed."""
    stamp: Stamp
    at: float
    """When it was computed (`time.monotonic`)."""
    cost_s: float
    """How long computing it took."""


class StoreReader:
    """The run store at `path`, read-only, for the viewer; safe to call from many threads.

    `refresh_s`: while the file keeps changing (another run being written), a run's stamp is
    recomputed at most this often, or five times as long as computing it last took, whichever
    is longer (a 100,000-trial run's full check reads every score: ~0.3 s); 0 recomputes at
    every call. Nothing changed in the file costs one `PRAGMA`.
    """

    def __init__(self, path: str | Path, *, refresh_s: float = 1.0) -> None:
        self._path = Path(path)
        self._refresh_s = refresh_s
        self._lock = threading.Lock()
        self._idle: list[RunStore] = []
        self._closed = False
        self._known: set[str] = set()
        self._stamps: dict[str, _Stamping] = {}
        # Stamps are read on one connection of their own: `PRAGMA data_version` compares
        # only with values read on the same connection.
        self._stamper = self._open()
        self._stamp_lock = threading.Lock()

    @property
    def path(self) -> Path:
        """The store's file."""
        return self._path

    def close(self) -> None:
        """Close every connection (a call still reading closes its own when it ends)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for store in idle:
            store.close()
        with self._stamp_lock:
            self._stamper.close()

    def __enter__(self) -> StoreReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- runs -------------------------------------------------------------------------------

    def runs(self) -> list[RunRow]:
        """Every stored run, newest first, with its progress, agent and duration."""
        with self._store() as store:
            rows = store.run_rows()
        return [
            RunRow(**{f: getattr(row, f) for f in _SUMMARY_FIELDS}, agent=agent)
            for row, agent in rows
        ]

    def info(self, run_id: str) -> RunInfo:
        """The run's stored settings; `UnknownRun` when no such run is stored."""
        with self._run(run_id) as store:
            return store.get_info(run_id)

    def missing(self, run_id: str) -> MissingTrials:
        """How many of the run's trials are not stored yet, naming a few."""
        with self._run(run_id) as store:
            return store.missing_trials(run_id)

    def stamp(self, run_id: str) -> Stamp:
        """The run's `Stamp` now (see there and `refresh_s`)."""
        self._require(run_id)
        with self._stamp_lock:
            if self._closed:
                raise RuntimeError("the store reader is closed")
            store = self._stamper
            version = store.data_version()
            last = self._stamps.get(run_id)
            now = time.monotonic()
            if last is not None:
                if last.version == version:
                    return last.stamp  # nothing committed to the file since
                wait = max(self._refresh_s, 5 * last.cost_s) if self._refresh_s > 0 else 0.0
                if now - last.at < wait:
                    return last.stamp
            parts = store.stamp_parts(run_id)
            if parts is None:
                raise UnknownRun(run_id)
            status, finished_at, info_hash, trials, scores, top = parts
            content, written = store.content_digest(run_id)
            stamp = Stamp(
                status=status,
                finished_at=finished_at,
                info_hash=info_hash,
                trials=trials,
                scores=scores,
                max_score_rowid=top,
                content=content,
                written=written,
            )
            self._stamps[run_id] = _Stamping(
                version=version, stamp=stamp, at=now, cost_s=time.monotonic() - now
            )
            return stamp

    # -- results ----------------------------------------------------------------------------

    def results(self, run_id: str, keys: Sequence[tuple[str, int]]) -> list[TrialResult]:
        """The stored results of `keys` ((case id, trial) pairs), in that order; a key with no
        stored trial is left out. Only these rows are read and parsed."""
        with self._run(run_id) as store:
            return store.results_of(run_id, keys)

    def case_results(self, run_id: str, case_id: str) -> list[TrialResult]:
        """Every stored trial of one case of the run, by trial index (empty for an unknown
        case)."""
        with self._run(run_id) as store:
            return store.results_of(run_id, store.case_keys(run_id, case_id))

    def result(self, run_id: str, case_id: str, trial: int) -> TrialResult | None:
        """One stored trial of the run; None when it has no such (case, trial)."""
        found = self.results(run_id, [(case_id, trial)])
        return found[0] if found else None

    def position(self, run_id: str, case_id: str, trial: int) -> int | None:
        """The stored trial's number in the run's table (its `#`); None when not stored."""
        with self._run(run_id) as store:
            return store.position(run_id, case_id, trial)

    def keys_in_order(self, run_id: str, offset: int, limit: int) -> list[tuple[str, int]]:
        """The run's stored (case id, trial) pairs in report order, `limit` from `offset`."""
        with self._run(run_id) as store:
            return store.keys_in_order(run_id, offset, limit)

    def search(self, run_id: str, text: str) -> set[tuple[str, int]]:
        """The (case id, trial) pairs the report's search finds for `text`: ignoring case, in
        the case id, the case's input, the trial's answer or the case's tags (`search_text`),
        not anywhere in the stored JSON (its keys, expectations, errors); the empty text finds
        nothing (it is not asked)."""
        needle = text.strip().lower()  # as report.js reads the search box
        if not needle:
            return set()
        found: set[tuple[str, int]] = set()
        texts: tuple[str, str | None, str] | None = None
        with self._run(run_id) as store:
            for case, trial, output in store.search_fields(run_id):
                if texts is None or texts[0] != case.id or texts[1] != output:
                    texts = (case.id, output, search_text(case, output))
                if needle in texts[2]:
                    found.add((case.id, trial))
        return found

    def iter_results(self, run_id: str) -> Iterator[TrialResult]:
        """Every stored result of the run in report order, a chunk at a time; the connection
        is held until the iterator is exhausted or closed (the index build's read)."""
        with self._run(run_id) as store:
            yield from store.iter_results(run_id)

    # -- connections ------------------------------------------------------------------------

    def _open(self) -> RunStore:
        return RunStore(self._path, create=False, read_only=True)

    @contextmanager
    def _store(self) -> Iterator[RunStore]:
        """A read-only connection of this thread's own while the block runs."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the store reader is closed")
            store = self._idle.pop() if self._idle else None
        if store is None:
            store = self._open()
        try:
            yield store
        finally:
            with self._lock:
                keep = not self._closed and len(self._idle) < _IDLE
                if keep:
                    self._idle.append(store)
            if not keep:
                store.close()

    def _require(self, run_id: str) -> None:
        """Raise `UnknownRun` unless the run is stored (runs are never deleted, so a run
        once found is not looked up again)."""
        if run_id in self._known:
            return
        with self._store() as store:
            if not store.has_run(run_id):
                raise UnknownRun(run_id)
        with self._lock:
            self._known.add(run_id)

    @contextmanager
    def _run(self, run_id: str) -> Iterator[RunStore]:
        self._require(run_id)
        with self._store() as store:
            yield store


_SUMMARY_FIELDS = tuple(RunSummaryRow.__dataclass_fields__)
