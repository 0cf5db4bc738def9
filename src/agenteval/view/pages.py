"""The viewer's pages as HTML: the runs list, a run (its summary and a page of its case table),
one trace, a comparison and one case of it side by side. No web framework here: `app.py` maps
addresses to these and answers; everything a run holds is rendered through the report's own
templates and filters (`report_environment`), so the viewer shows a run as the report does.

A page never reads a whole run to answer: the first page of a run's trials comes straight from
the store in the report's order, and what needs every trial (the summary, filters, sorting) is
the run's `RunIndex`, built once in the background (`IndexCache`) and shown when it is ready.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, PackageLoader
from markupsafe import Markup

from agenteval.catalog import scorer_references
from agenteval.errors import StoreError
from agenteval.owners import owner_gone
from agenteval.pricing import PriceTable
from agenteval.records import RunInfo, RunStatus, TrialResult, shown_status
from agenteval.redaction import Redactor
from agenteval.report.compare import CaseChange, Comparison, compare_runs
from agenteval.report.html import diff_from_comparison
from agenteval.report.html.diff import diff_view
from agenteval.report.html.page import report_environment, run_context, trial_views
from agenteval.report.json_document import completeness
from agenteval.report.simulation import END_REASON_WORDS
from agenteval.report.terminal import format_rate, format_seconds, format_usd
from agenteval.store import RunStore
from agenteval.view.addresses import (
    NUMERIC,
    PAGE_SIZE,
    STATUS_CHOICES,
    RunFilters,
    RunsFilters,
    columns,
    last_offset,
    pager,
    run_matches,
)
from agenteval.view.index import IndexCache, Row, RunIndex
from agenteval.view.reader import Stamp, StoreReader

__all__ = ["Pages"]

FLAKY_SHOWN = 50
"""Flaky cases a run's summary lists (the case table's "flaky only" filter lists them all)."""
SUMMARIES_KEPT = 16
"""Runs whose drawn summary is kept, each until the run changes."""
COMPARISONS_KEPT = 2
"""Comparisons kept, each until one of its runs changes."""
CHANGES_SHOWN = 500
"""New failures (and fixes) listed on a comparison's page; the count says how many there are."""
_CASE_TABLES = ("New failures", "New fixes")


@dataclass
class _RunStats:
    """What the runs list shows of a summarized run."""

    rate: str
    cost: str


@dataclass
class Pages:
    """The viewer over one store: its reader, the runs' indexes, and the templates."""

    reader: StoreReader
    store_label: str
    prices_for: Callable[[RunInfo], PriceTable | None] = lambda info: None
    cache: IndexCache = field(init=False)
    env: Environment = field(init=False)
    _stats: dict[str, tuple[Stamp, _RunStats]] = field(init=False, default_factory=dict)
    _summaries: dict[str, tuple[tuple[Stamp, Stamp], str]] = field(init=False, default_factory=dict)
    _comparisons: dict[tuple[str, str, Stamp, Stamp], Future[Comparison]] = field(
        init=False, default_factory=dict
    )
    _comparing: ThreadPoolExecutor = field(init=False)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.cache = IndexCache(
            self.reader, prices_for=self.prices_for, on_built=self._record_stats
        )
        self.env = report_environment(PackageLoader("agenteval.view", "templates"))
        # One comparison at a time, off the request: two large runs take a while to read.
        self._comparing = ThreadPoolExecutor(1, thread_name_prefix="agenteval-view-compare")

    def close(self) -> None:
        """Stop the background builds and close the store."""
        self._comparing.shutdown(wait=False, cancel_futures=True)
        self.cache.close()
        self.reader.close()

    def _render(self, name: str, **context: Any) -> str:
        context.setdefault("poll", None)
        context.setdefault("stamp", None)
        return self.env.get_template(name).render(store=self.store_label, **context)

    def error(self, status: int, title: str, message: str, hint: str = "") -> str:
        """A page saying what went wrong (404, 400, a damaged store)."""
        return self._render("error.html.j2", status=status, title=title, message=message, hint=hint)

    def info(self, run_id: str) -> RunInfo:
        """The run's record, redacted as the report redacts it (raises `UnknownRun`)."""
        return Redactor.from_environment().redact_model(self.reader.info(run_id))

    # -- the runs list ---------------------------------------------------------------------

    def runs_rows(self) -> list[dict[str, Any]]:
        """Every run newest first, as the list and `/api/runs` show it."""
        rows = []
        for run in self.reader.runs():
            stats, pending = self._run_stats(run.run_id)
            status = run.shown_status
            # Only a run still going is live: a `stopped` or `interrupted` one (its process
            # gone) is marked running in the store, and would be polled for ever.
            live = status == RunStatus.RUNNING.value
            end = run.finished_at
            rows.append(
                {
                    "run_id": run.run_id,
                    "created_at": run.created_at,
                    "started": run.created_at.strftime("%Y-%m-%d %H:%M:%S"),
                    "target": run.target,
                    "agent": run.agent,
                    "status": status,
                    "status_class": status,
                    "live": live,
                    "done": f"{run.trials_done:,}/{run.trials_total:,}",
                    "rate": stats.rate if stats else "…",
                    "cost": stats.cost if stats else "…",
                    "pending": pending,
                    "duration": format_seconds((end - run.created_at).total_seconds())
                    if end is not None
                    else "running"
                    if live
                    else "—",
                }
            )
        return rows

    def _record_stats(self, index: RunIndex) -> None:
        """Keep what the runs list shows of a run as soon as its index is built (the index
        itself may be dropped for others soon after)."""
        summary = index.summary
        stats = _RunStats(
            rate=format_rate(summary.passed) if summary.passed.total else "none judged",
            cost=format_usd(summary.cost.total_usd),
        )
        with self._lock:
            self._stats[index.run_id] = (index.stamp, stats)

    def _run_stats(self, run_id: str) -> tuple[_RunStats | None, bool]:
        """The run's figures for the list (the last known while newer ones are made), and
        whether newer ones are being made."""
        stamp = self.reader.stamp(run_id)
        with self._lock:
            known = self._stats.get(run_id)
        if known is not None and known[0] == stamp:
            return known[1], False
        self.cache.get(run_id)  # builds it, and `_record_stats` keeps its figures
        return (known[1] if known else None), True

    def runs_page(self, filters: RunsFilters) -> str:
        rows = self.runs_rows()
        shown = [row for row in rows if run_matches(row, filters)]
        live = any(row["live"] or row["pending"] for row in rows)
        return self._render(
            "runs.html.j2",
            shown=shown,
            total=len(rows),
            filters=filters,
            targets=sorted({row["target"] for row in rows if row["target"]}),
            statuses=sorted({row["status"] for row in rows}),
            problem=None,
            poll="/api/runs" if live else None,
        )

    # -- a run ---------------------------------------------------------------------------------

    def run_page(self, run_id: str, filters: RunFilters) -> str:
        info = self.info(run_id)
        # Taken before the parts are read: a trial stored meanwhile changes the next poll's.
        stamp = self.progress(run_id)["stamp"]
        summary_html, summary_pending = self.summary_fragment(run_id)
        cases_html, cases_pending = self.cases_fragment(run_id, filters)
        base = f"/runs/{quote(run_id, safe='')}"
        query = filters.query()
        return self._render(
            "run.html.j2",
            info=info,
            summary_html=Markup(summary_html),
            summary_pending=summary_pending,
            summary_src=f"{base}/summary",
            cases_html=Markup(cases_html),
            cases_pending=cases_pending,
            cases_src=f"{base}/cases" + (f"?{query}" if query else ""),
            poll=f"/api/runs/{quote(run_id, safe='')}/progress",
            stamp=stamp,
        )

    def summary_fragment(self, run_id: str) -> tuple[str, bool]:
        """The run's summary as the report draws it, or a line saying how far its reading has
        got; and whether it is still being read."""
        info = self.info(run_id)
        state = self.cache.get(run_id, inline=True)
        missing = self.reader.missing(run_id)
        if state.index is None:
            return (
                self._render(
                    "summary.html.j2",
                    info=info,
                    summary=None,
                    status=completeness(info, missing)["status"],
                    read=state.read,
                    total=state.total,
                    behind=None,
                    error=state.error,
                ),
                state.error is None,
            )
        index = state.index
        # An older summary is shown while the new one is built, saying so, and replaced when
        # it is. Drawn once per state of the run: a large run's summary is large.
        stamp = self.reader.stamp(run_id)
        behind = None if index.stamp == stamp else (index.summary.trials, stamp.trials)
        with self._lock:
            drawn = self._summaries.get(run_id)
        if drawn is not None and drawn[0] == (index.stamp, stamp):
            return drawn[1], behind is not None
        context = run_context(
            info,
            index.summary,
            (index.total_latency, index.working_latency),
            missing=missing,
            flaky_shown=FLAKY_SHOWN,
        )
        html = self._render("summary.html.j2", **context, behind=behind, error=None)
        with self._lock:
            self._summaries[run_id] = ((index.stamp, stamp), html)
            while len(self._summaries) > SUMMARIES_KEPT:
                self._summaries.pop(next(iter(self._summaries)))
        return html, behind is not None

    def cases_fragment(self, run_id: str, filters: RunFilters) -> tuple[str, bool]:
        """One page of the run's case table; and whether it waits for the run's index."""
        info = self.info(run_id)
        stamp = self.reader.stamp(run_id)
        state = self.cache.get(run_id, inline=True)
        index = state.index
        stored = stamp.trials
        prices = self._prices(info)
        waiting = filters.needs_index and index is None
        # A filtered table drawn from an index older than the run is redrawn when the new one
        # is built (the page polls while this part is pending).
        stale = index is not None and index.stamp != stamp
        offset = (filters.page - 1) * PAGE_SIZE
        views: list[Any] = []
        unreadable: list[str] = []
        matching: int | None = None
        if filters.needs_index and index is not None:
            matching, views, unreadable = self._indexed_page(run_id, index, filters, offset, prices)
        elif not waiting:
            matching = stored
            views, unreadable = self._stored_page(run_id, info, index, stored, offset, prices)
        summary = index.summary if index is not None else None
        html = self._render(
            "cases.html.j2",
            info=info,
            filters=filters,
            status_choices=STATUS_CHOICES,
            scorer_names=list(summary.scorers) if summary else [],
            tags=index.tags if index is not None else [],
            flaky_filter=bool(summary and summary.reliability),
            matching=matching,
            stored=stored,
            waiting=waiting,
            read=state.read,
            views=views,
            columns=columns(run_id, filters),
            numeric=NUMERIC,
            pager=pager(run_id, filters, matching),
            references=scorer_references(info),
            end_words=END_REASON_WORDS,
            unreadable=unreadable,
        )
        return html, waiting or (filters.needs_index and stale)

    def _indexed_page(
        self, run_id: str, index: RunIndex, filters: RunFilters, offset: int, prices: PriceTable
    ) -> tuple[int, list[Any], list[str]]:
        """A page of the table filtered or sorted by the run's index: how many trials match,
        the page's views, what could not be read."""
        keys = self.reader.search(run_id, filters.q) if filters.q else None

        def chosen(offset: int) -> tuple[int, list[Row]]:
            return index.select(
                status=filters.status or None,
                scorer=filters.scorer or None,
                tag=filters.tag or None,
                flaky=filters.flaky,
                keys=keys,
                sort=filters.sort or None,
                descending=filters.dir == "desc",
                offset=offset,
                limit=PAGE_SIZE,
            )

        matching, rows = chosen(offset)
        if offset >= matching > 0:
            # A page past the end shows the last page, as its pager says.
            matching, rows = chosen(last_offset(matching))
        results, unreadable = self._readable(run_id, [row.key for row in rows])
        number_of = {row.key: row.index for row in rows}
        numbers = [number_of[r.case.id, r.trial.trial] for r in results]
        return matching, _numbered(results, numbers, prices, index), unreadable

    def _stored_page(
        self,
        run_id: str,
        info: RunInfo,
        index: RunIndex | None,
        stored: int,
        offset: int,
        prices: PriceTable,
    ) -> tuple[list[Any], list[str]]:
        """A page of the table in the run's own order, straight from the store as it is now
        (a run being written gains trials before its index is rebuilt): its views, what could
        not be read."""
        if offset >= stored > 0:
            offset = last_offset(stored)  # a page past the end: the last, as the pager says
        keys = self.reader.keys_in_order(run_id, offset, PAGE_SIZE)
        results, unreadable = self._readable(run_id, keys)
        at = {key: offset + 1 + n for n, key in enumerate(keys)}
        numbers = [at[r.case.id, r.trial.trial] for r in results]
        return _numbered(results, numbers, prices, index, info), unreadable

    def _prices(self, info: RunInfo) -> PriceTable:
        """The prices the run is reported with (`agenteval show`'s), else the shipped table."""
        return self.prices_for(info) or PriceTable.default()

    def _number(self, run_id: str, index: RunIndex | None, key: tuple[str, int]) -> int | None:
        """A trial's number in its whole run's table (its `#`): from the run's index when
        there is one, else counted in the store; None when it is not stored."""
        row = index.row(*key) if index is not None else None
        return row.index if row is not None else self.reader.position(run_id, *key)

    def _readable(
        self, run_id: str, keys: Sequence[tuple[str, int]]
    ) -> tuple[list[TrialResult], list[str]]:
        """The stored results of `keys`, and what is wrong with each that cannot be read (a
        damaged row), so one bad trial does not hide its page's others."""
        try:
            return self.reader.results(run_id, keys), []
        except StoreError:
            pass
        results: list[TrialResult] = []
        problems: list[str] = []
        for key in keys:
            try:
                results.extend(self.reader.results(run_id, [key]))
            except StoreError as exc:
                problems.append(exc.render())
        return results, problems

    def trial_page(self, run_id: str, case_id: str, trial: int) -> str | None:
        """One trial's trace, opened; None when the run has no such trial."""
        info = self.info(run_id)
        result = self.reader.result(run_id, case_id, trial)
        if result is None:
            return None
        state = self.cache.peek(run_id)
        prices = self._prices(info)
        number = self._number(run_id, state.index, (case_id, trial)) or 1
        view = _numbered([result], [number], prices, state.index, info)[0]
        return self._render(
            "trial.html.j2",
            info=info,
            case_id=case_id,
            trial=trial,
            view=view,
            references=scorer_references(info),
            end_words=END_REASON_WORDS,
        )

    # -- comparing -----------------------------------------------------------------------------

    def comparison(self, base: str, candidate: str) -> Future[Comparison]:
        """`agenteval compare` of the two runs, made in the background once and kept while
        neither run changes (`UnknownRun` at once for a run not stored)."""
        key = (base, candidate, self.reader.stamp(base), self.reader.stamp(candidate))
        with self._lock:
            known = self._comparisons.get(key)
            if known is None:
                known = self._comparing.submit(self._compare, base, candidate)
                self._comparisons[key] = known
                # A few at most: each holds both runs' summaries.
                while len(self._comparisons) > COMPARISONS_KEPT:
                    self._comparisons.pop(next(iter(self._comparisons)))
        return known

    def _compare(self, base: str, candidate: str) -> Comparison:
        candidate_info = self.reader.info(candidate)
        with RunStore(self.reader.path, read_only=True) as store:
            return compare_runs(store, base, candidate, prices=self.prices_for(candidate_info))

    def compare_progress(self, base: str, candidate: str) -> dict[str, Any]:
        """What a comparison's page polls while it is made."""
        job = self.comparison(base, candidate)
        error = job.exception() if job.done() else None
        return {"ready": job.done(), "error": None if error is None else str(error)}

    def compare_page(self, base: str, candidate: str) -> tuple[str, bool]:
        """The comparison's page, or a page saying it is being made (and whether it is)."""
        job = self.comparison(base, candidate)
        prefix = f"/compare/{quote(base, safe='')}/{quote(candidate, safe='')}"
        if not job.done():
            sizes = [self.reader.stamp(run_id).trials for run_id in (base, candidate)]
            page = self._render(
                "comparing.html.j2",
                base=self.info(base),
                candidate=self.info(candidate),
                sizes=sizes,
                poll=f"/api{prefix}",
            )
            return page, True
        comparison = job.result()  # a user's mistake (an AgentEvalError) is the app's to say

        def listed(changes: Sequence[CaseChange]) -> dict[str, Any]:
            return {
                "count": len(changes),
                "rows": [
                    {
                        "case_id": change.case_id,
                        "scorer": change.scorer,
                        "base": f"{change.base_failed} of {change.base_judged}"
                        if change.in_base
                        else "not in base",
                        "candidate": f"{change.candidate_failed} of {change.candidate_judged}",
                        "reason": change.reason,
                        "url": f"{prefix}/cases/{quote(change.case_id, safe='')}",
                    }
                    for change in changes[:CHANGES_SHOWN]
                ],
            }

        # The case tables are drawn here, each case linking to its traces side by side; the
        # rest of the report's baseline diff as the report draws it.
        diff = diff_from_comparison(comparison)
        diff = diff.model_copy(
            update={"tables": [t for t in diff.tables if t.title not in _CASE_TABLES]}
        )
        page = self._render(
            "compare.html.j2",
            base=comparison.base,
            candidate=comparison.candidate,
            diff=diff_view(diff),
            changes=[
                ("New failures", listed(comparison.new_failures)),
                ("New fixes", listed(comparison.new_fixes)),
            ],
        )
        return page, False

    def compare_case_page(self, base: str, candidate: str, case_id: str) -> str | None:
        """The case's trials in both runs side by side; None when neither run has it."""
        sides = []
        references: dict[str, str] = {}
        for label, run_id in (("base", base), ("candidate", candidate)):
            info = self.info(run_id)
            results = self.reader.case_results(run_id, case_id)
            state = self.cache.peek(run_id)
            prices = self._prices(info)
            numbers = [
                self._number(run_id, state.index, (r.case.id, r.trial.trial)) or n
                for n, r in enumerate(results, start=1)
            ]
            views = _numbered(results, numbers, prices, state.index, info)
            references.update(scorer_references(info))
            sides.append({"label": label, "run_id": run_id, "views": views})
        if not any(side["views"] for side in sides):
            return None
        return self._render(
            "compare_case.html.j2",
            case_id=case_id,
            sides=sides,
            compare_url=f"/compare/{quote(base, safe='')}/{quote(candidate, safe='')}",
            references=references,
            end_words=END_REASON_WORDS,
        )

    # -- live ----------------------------------------------------------------------------------

    def progress(self, run_id: str) -> dict[str, Any]:
        """What a run page polls: the run's status, trials stored and a token that changes
        whenever anything the page shows does."""
        stamp = self.reader.stamp(run_id)
        state = self.cache.get(run_id, inline=True)
        status = stamp.status
        if status == RunStatus.RUNNING.value:  # still going, or stopped / interrupted
            status = shown_status(
                RunStatus.RUNNING,
                self.reader.missing(run_id).count == 0,
                owner_gone=owner_gone(self.reader.info(run_id).settings.get("owner")),
            )
        return {
            "run_id": run_id,
            "status": status,
            "trials": stamp.trials,
            "stamp": str(hash(stamp)),
            "summarized": state.index is not None and state.index.stamp == stamp,
            "error": state.error,
            "read": state.read,
            "total": state.total,
        }


def _numbered(
    results: Sequence[TrialResult],
    numbers: Sequence[int] | range,
    prices: PriceTable,
    index: RunIndex | None,
    info: RunInfo | None = None,
) -> list[Any]:
    """The results as the report's trial views, each numbered as in the whole run's table."""
    if index is not None:
        views = trial_views(results, prices, index.summary)
    else:
        # No summary yet: the run's own `passing` decides a trial's status, as the summary's
        # would; a case is marked flaky only once every trial is read.
        passing = info.settings.get("passing") if info is not None else None
        views = trial_views(results, prices, None, passing=passing)
    for view, number in zip(views, numbers, strict=False):
        view.index = number
    return views
