"""The run store's runs and their cases: storing a new run, reading and changing its settings
and status, listing the runs, finding a run by id prefix, and reading a run's cases in order.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

from agenteval.case import EvalCase
from agenteval.errors import StoreError
from agenteval.records import RunInfo, RunStatus
from agenteval.store.base import StoreFile, run_exists
from agenteval.store.encoding import stored_time, to_json
from agenteval.store.layout import (
    CHUNK,
    OTHER_FILE_HINT,
    ROWS_PER_STATEMENT,
    RUNS_HINT,
    insert_cases,
)
from agenteval.store.progress import RunSummaryRow, summary_rows
from agenteval.trace import utc_now

__all__ = ["RunRecords"]


class RunRecords(StoreFile):
    """The runs and their cases (part of `RunStore`)."""

    def create_run(self, info: RunInfo, cases: Iterable[EvalCase]) -> int:
        """Store a new run and its cases, in order, in one transaction; return how many cases.

        `cases` is read once, as it comes: a generator of any length is stored without ever
        being held in memory.
        """
        seen: set[str] = set()

        def case_rows() -> Iterator[tuple[str, int, str, str]]:
            numbered = enumerate(cases)
            while chunk := list(itertools.islice(numbered, CHUNK)):
                for _, case in chunk:
                    if case.id in seen:
                        raise StoreError(
                            f"run {info.run_id!r} lists case id {case.id!r} twice",
                            file=self._path,
                            case=case.id,
                            hint="give every case a unique `id`",
                        )
                    seen.add(case.id)
                texts = self._redacted([to_json(case) for _, case in chunk])
                for (idx, case), text in zip(chunk, texts, strict=True):
                    yield (info.run_id, idx, case.id, text)

        with self._write() as conn:
            if run_exists(conn, info.run_id):
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
            rows = case_rows()  # many a statement (`layout.ROWS_PER_STATEMENT`: see there why)
            while chunk := list(itertools.islice(rows, ROWS_PER_STATEMENT)):
                conn.execute(insert_cases(len(chunk)), list(itertools.chain(*chunk)))
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
                (status.value, stored_time(finished_at), self._json(info), run_id),
            )

    def list_runs(self, limit: int | None = None) -> list[RunSummaryRow]:
        """The stored runs, newest first, with how many of their trials are done."""
        with self._read() as conn:
            return summary_rows(conn, limit)

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

    def latest_finished(self, target: str) -> str | None:
        """The most recent finished run on `target`, if any (`--replay-tools latest`)."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT run_id FROM runs WHERE target = ? AND status = ?"
                " ORDER BY created_at DESC, run_id DESC LIMIT 1",
                (target, RunStatus.FINISHED.value),
            ).fetchone()
        return None if row is None else str(row[0])

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
                        "no runs are stored yet", file=self._path, hint=OTHER_FILE_HINT
                    )
                return str(row[0])
            if wanted and run_exists(conn, wanted):
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
            hint=f"give more of the id; {RUNS_HINT}",
        )

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
                    (run_id, after, CHUNK),
                ).fetchall()
            if not rows:
                return
            for _idx, case_id, data in rows:
                yield self._parse(EvalCase, data, f"case {case_id!r} of run {run_id!r}")
            after = rows[-1][0]
