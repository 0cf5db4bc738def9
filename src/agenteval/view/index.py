"""A run's index for the viewer: its summary and one small row per trial, made in one pass over
the stored run, so that a page of a 100,000-trial run is filtered, sorted and cut on the server
without reading a trace.

`RunIndex` is what one pass gives: the run's `Summary` (built as `agenteval show` builds it) and
a `Row` per trial (status, failing scorers, mean score, cost as the HTML report's case table
decides them, through the report's own `trial_view`). `IndexCache` builds indexes in one
background thread, keyed by the run's `Stamp`: a page asks (`get`) and gets the freshest index
built so far, stale while a newer one builds (a live run), or None with the build's progress.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from agenteval.pricing import PriceTable
from agenteval.records import RunInfo
from agenteval.report.html.trials import trial_view
from agenteval.report.summary import Summary, SummaryBuilder
from agenteval.view.reader import Stamp, StoreReader

__all__ = [
    "SORTS",
    "STATUSES",
    "IndexCache",
    "IndexState",
    "PricesFor",
    "Row",
    "RunIndex",
    "build_index",
]

STATUSES = ("pass", "fail", "error", "unscored")
"""A row's statuses, as the report's case table names them."""
_STATUS_ORDER = {"error": 0, "fail": 1, "unscored": 2, "pass": 3}
"""How the report's table sorts statuses (report.js `STATUS_ORDER`)."""

PricesFor = Callable[[RunInfo], PriceTable | None]
"""The prices a run is reported with (the CLI passes `run_prices` with its settings' table);
None: the shipped table, as `summarize` takes it."""


@dataclass(frozen=True, slots=True)
class Row:
    """One trial in the run's case table: what its row shows and what the table filters and
    sorts on (the report's `row_data`, but its search text: that is `StoreReader.search`)."""

    index: int
    """The row's number from 1 in report order (cases in order, then trials)."""
    case_id: str
    trial: int
    status: str
    """`pass`, `fail`, `error` or `unscored`, as the report's `trial_view` decides."""
    failing: tuple[str, ...]
    """The scorers that failed or errored on it."""
    mean: float | None
    latency: float | None
    tokens: int
    cost: float | None
    tags: tuple[str, ...]
    flaky: bool
    """Whether its case is flaky (its trials disagree)."""

    @property
    def key(self) -> tuple[str, int]:
        """(case id, trial), as the store keys it."""
        return (self.case_id, self.trial)


def _sort_key(name: str) -> Callable[[Row], Any]:
    keys: dict[str, Callable[[Row], Any]] = {
        "index": lambda row: row.index,
        "case": lambda row: row.case_id,
        "trial": lambda row: row.trial,
        "status": lambda row: _STATUS_ORDER[row.status],
        "failing": lambda row: len(row.failing),
        "score": lambda row: row.mean,
        "latency": lambda row: row.latency,
        "tokens": lambda row: row.tokens,
        "cost": lambda row: row.cost,
    }
    return keys[name]


SORTS = ("index", "case", "trial", "status", "failing", "score", "latency", "tokens", "cost")
"""The fields `RunIndex.select` sorts by (the report's sortable columns)."""


@dataclass(frozen=True, eq=False)
class RunIndex:
    """A run as its pages list it, from one pass over its stored results (see the module).

    Built by `build_index`, kept by `IndexCache` until the run's stamp changes. `select` is
    safe from many threads (sorted orders are kept once made). Compared by identity: two
    indexes are the same build or not.
    """

    run_id: str
    stamp: Stamp
    """The run's stamp when the pass began: the index holds at least what it says."""
    info: RunInfo
    summary: Summary
    rows: tuple[Row, ...]
    total_latency: list[float]
    """Each trial's latency (the report's histogram), in report order."""
    working_latency: list[float]
    """Each trial's latency excluding waits, in report order."""
    build_s: float
    """How long the pass took."""
    _orders: dict[tuple[str, bool], list[Row]] = field(default_factory=dict, repr=False)
    _by_key: dict[tuple[str, int], Row] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def row(self, case_id: str, trial: int) -> Row | None:
        """The row of one (case, trial), None when the index has none (its number for a
        trace's page, say); the lookup is made at the first call."""
        with self._lock:
            if not self._by_key and self.rows:
                self._by_key.update((row.key, row) for row in self.rows)
            return self._by_key.get((case_id, trial))

    @property
    def tags(self) -> list[str]:
        """Every tag of the run's cases, sorted (the tag filter's choices)."""
        return sorted({tag for row in self.rows for tag in row.tags})

    def select(
        self,
        status: str | None = None,
        scorer: str | None = None,
        tag: str | None = None,
        flaky: bool = False,
        keys: Collection[tuple[str, int]] | None = None,
        sort: str | None = None,
        descending: bool = False,
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[int, list[Row]]:
        """The rows matching every filter given (`keys`: only these (case id, trial) pairs,
        as `StoreReader.search` finds them), sorted as the report's table sorts (missing
        values last whichever the direction, ties in report order): how many match, and
        `limit` of them from `offset`. An unknown `sort` raises ValueError."""
        rows = self._ordered(sort or "index", descending)
        wanted = None if keys is None else set(keys)
        if status is None and scorer is None and tag is None and not flaky and wanted is None:
            matching = rows
        else:
            matching = [
                row
                for row in rows
                if (status is None or row.status == status)
                and (scorer is None or scorer in row.failing)
                and (tag is None or tag in row.tags)
                and (not flaky or row.flaky)
                and (wanted is None or (row.case_id, row.trial) in wanted)
            ]
        start = max(offset, 0)
        return len(matching), list(matching[start : start + max(limit, 0)])

    def _ordered(self, sort: str, descending: bool) -> list[Row] | tuple[Row, ...]:
        if sort not in SORTS:
            raise ValueError(f"cannot sort by {sort!r}: one of {', '.join(SORTS)}")
        if sort == "index" and not descending:
            return self.rows
        with self._lock:
            found = self._orders.get((sort, descending))
        if found is not None:
            return found
        key = _sort_key(sort)
        present = [row for row in self.rows if key(row) is not None]
        absent = [row for row in self.rows if key(row) is None]
        # A stable sort, reversed or not, keeps equal rows in report order (as report.js's
        # ties), and rows without the value come last either way.
        ordered = sorted(present, key=key, reverse=descending) + absent
        with self._lock:
            self._orders[(sort, descending)] = ordered
        return ordered


_Made = tuple[
    int,
    str,
    int,
    str,
    tuple[str, ...],
    float | None,
    float | None,
    int,
    float | None,
    tuple[str, ...],
]
"""A row's fields but `flaky`, known only once every trial is read."""


def build_index(
    reader: StoreReader,
    run_id: str,
    prices_for: PricesFor | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    stop: threading.Event | None = None,
) -> RunIndex:
    """One pass over the stored run: its summary as `agenteval show` builds it (`summarize`
    over its results, with `prices_for(info)` and the run's own `passing`) and a row per
    trial. `progress(read, total)` is told every few hundred trials; `stop` set ends the pass
    with `InterruptedError`."""
    started = time.perf_counter()
    stamp = reader.stamp(run_id)  # before reading: what is read is at least this
    info = reader.info(run_id)
    prices = prices_for(info) if prices_for is not None else None
    passing = info.settings.get("passing")
    builder = SummaryBuilder(prices=prices, passing=passing)
    table = prices if prices is not None else PriceTable.default()
    # As the summary keeps it (`Summary.passing`), so the rows judge as the report's do.
    shown_passing = None if passing is None else sorted(passing)
    shared: dict[tuple[str, ...], tuple[str, ...]] = {}
    made: list[_Made] = []
    total_latency: list[float] = []
    working_latency: list[float] = []
    total = stamp.trials
    for index, result in enumerate(reader.iter_results(run_id), start=1):
        builder.add(result)
        view = trial_view(index, result, table, shown_passing, set())
        trial = result.trial
        failing = tuple(view.failing)
        tags = tuple(result.case.tags)
        made.append(
            (
                index,
                result.case.id,
                trial.trial,
                view.status,
                shared.setdefault(failing, failing),
                view.mean,
                trial.latency_s,
                trial.usage.total_tokens,
                view.cost,
                shared.setdefault(tags, tags),
            )
        )
        if trial.latency_s is not None:
            total_latency.append(trial.latency_s)
        if trial.working_latency_s is not None:
            working_latency.append(trial.working_latency_s)
        if index % 500 == 0:
            if stop is not None and stop.is_set():
                raise InterruptedError(f"the index of run {run_id} was not finished")
            if progress is not None:
                progress(index, max(total, index))
    summary = builder.build()
    # The flaky cases are known once every trial is counted, as the report marks them.
    flaky = {case.case_id for case in summary.reliability.flaky} if summary.reliability else set()
    rows = tuple(Row(*values, values[1] in flaky) for values in made)
    if progress is not None:
        progress(len(rows), len(rows))
    return RunIndex(
        run_id=run_id,
        stamp=stamp,
        info=info,
        summary=summary,
        rows=rows,
        total_latency=total_latency,
        working_latency=working_latency,
        build_s=time.perf_counter() - started,
    )


@dataclass(frozen=True, slots=True)
class IndexState:
    """What `IndexCache.get` knows of a run's index now."""

    index: RunIndex | None
    """The freshest index built (it may be older than the run while `building`)."""
    building: bool
    """Whether an index of the run is being built, or waits for its turn."""
    read: int
    """Trials the build has read so far."""
    total: int
    """Trials it will read (those stored when it began)."""
    error: str | None = None
    """Why the last build failed (its run's stamp has not changed since), if it did."""


@dataclass
class _Entry:
    """One run's place in the cache."""

    index: RunIndex | None = None
    building: bool = False
    read: int = 0
    total: int = 0
    error: str | None = None
    failed_at: Stamp | None = None
    """The stamp a build failed at: not tried again until the stamp changes."""

    def state(self) -> IndexState:
        return IndexState(self.index, self.building, self.read, self.total, self.error)


INLINE_TRIALS = 2_000
"""The largest run `IndexCache.get(..., inline=True)` builds in the asking thread (~0.2 s)."""


class IndexCache:
    """The indexes of the runs pages ask for, at most `max_runs` of them (least recently
    asked dropped first), built one at a time in one background thread, the smallest waiting
    run first.

    `get(run_id)` compares the run's stamp with its index's and starts a build when there is
    none or it changed; meanwhile it serves the index it has. Safe from many threads.
    """

    def __init__(
        self,
        reader: StoreReader,
        max_runs: int = 8,
        *,
        prices_for: PricesFor | None = None,
        on_built: Callable[[RunIndex], None] | None = None,
    ) -> None:
        self._reader = reader
        self._max_runs = max(max_runs, 1)
        self._prices_for = prices_for
        # Told of each index as it is built, before it can be dropped: what a page keeps of
        # many runs (the runs list's figures) outlives the few indexes kept.
        self._on_built = on_built
        self._lock = threading.Condition()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._queue: deque[str] = deque()
        self._worker: threading.Thread | None = None
        self._stop = threading.Event()

    def get(self, run_id: str, *, inline: bool = False) -> IndexState:
        """The run's index as it is now, starting a build if it is missing or stale;
        `UnknownRun` when no such run is stored.

        With `inline`, a run of at most `INLINE_TRIALS` trials is built in the calling thread
        before answering (a page about that run: a small run's summary is never kept waiting
        behind a large run's build in the background thread)."""
        stamp = self._reader.stamp(run_id)
        here = False
        with self._lock:
            entry = self._entries.get(run_id)
            if entry is None:
                entry = self._entries[run_id] = _Entry()
            self._entries.move_to_end(run_id)
            stale = entry.index is None or entry.index.stamp != stamp
            if (
                stale
                and not entry.building
                and entry.failed_at != stamp
                and not self._stop.is_set()
            ):
                entry.building, entry.read, entry.total = True, 0, stamp.trials
                here = inline and stamp.trials <= INLINE_TRIALS
                if not here:
                    self._queue.append(run_id)
                    if self._worker is None:
                        self._worker = threading.Thread(
                            target=self._work, name="agenteval-view-index", daemon=True
                        )
                        self._worker.start()
            self._evict()
            state = entry.state()
        if here:
            self._build(run_id)
            return self.peek(run_id)
        return state

    def peek(self, run_id: str) -> IndexState:
        """The run's index as it is now, without starting a build (a page that only uses an
        index when there is one: a trace's number)."""
        with self._lock:
            entry = self._entries.get(run_id)
            return _Entry().state() if entry is None else entry.state()

    def wait(self, run_id: str, timeout: float | None = None) -> IndexState:
        """`get`, then wait (at most `timeout` seconds) for the build it started or found to
        end; the state then."""
        state = self.get(run_id)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while True:
                entry = self._entries.get(run_id)
                if entry is None or not entry.building:
                    return state if entry is None else entry.state()
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return entry.state()
                self._lock.wait(left)

    def close(self) -> None:
        """Stop building (a build in progress ends at its next few hundred trials)."""
        self._stop.set()
        with self._lock:
            worker = self._worker
        if worker is not None:
            worker.join()

    def _evict(self) -> None:
        """Drop the least recently asked runs beyond `max_runs`, but any being built."""
        extra = len(self._entries) - self._max_runs
        for run_id in list(self._entries):
            if extra <= 0:
                return
            if not self._entries[run_id].building:
                del self._entries[run_id]
                extra -= 1

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._queue or self._stop.is_set():
                    for run_id in self._queue:
                        if run_id in self._entries:
                            self._entries[run_id].building = False
                    self._queue.clear()
                    self._worker = None
                    self._lock.notify_all()
                    return
                # The smallest run first: a run of a few trials is not kept waiting behind a
                # large one asked for earlier (the runs list asks for every run at once).
                run_id = min(self._queue, key=self._queued_size)
                self._queue.remove(run_id)
            self._build(run_id)

    def _queued_size(self, run_id: str) -> int:
        entry = self._entries.get(run_id)
        return 0 if entry is None else entry.total

    def _build(self, run_id: str) -> None:
        def progress(read: int, total: int) -> None:
            with self._lock:
                entry = self._entries.get(run_id)
                if entry is not None:
                    entry.read, entry.total = read, total

        index: RunIndex | None = None
        error: str | None = None
        failed_at: Stamp | None = None
        try:
            index = build_index(
                self._reader, run_id, self._prices_for, progress=progress, stop=self._stop
            )
        except InterruptedError:
            pass
        except Exception as exc:  # shown on the run's page, not lost in a thread
            error = str(exc) or type(exc).__name__
            try:
                failed_at = self._reader.stamp(run_id)
            except Exception:  # the store itself failed: try again at the next ask
                failed_at = None
        with self._lock:
            entry = self._entries.get(run_id)
            if entry is None:  # dropped meanwhile: keep what was built all the same
                entry = self._entries[run_id] = _Entry()
                self._evict()
            entry.building = False
            if index is not None:
                entry.index, entry.error, entry.failed_at = index, None, None
                entry.read = entry.total = len(index.rows)
            elif error is not None:
                entry.error, entry.failed_at = error, failed_at
            self._lock.notify_all()
        if index is not None and self._on_built is not None:
            self._on_built(index)
