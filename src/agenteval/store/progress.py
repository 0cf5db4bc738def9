"""How complete the stored runs are: each run's stored trials counted against the trials it
asked for, in one query, and which (case, trial) pairs are missing.

`show`, `report`, `compare` and `gate` read completeness from here, never from the stored status
alone. Each function runs its queries on a connection the store holds (`RunStore.list_runs`,
`RunStore.missing_trials`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime

from agenteval.owners import owner_gone
from agenteval.records import MissingTrials, RunStatus
from agenteval.records import shown_status as status_shown

__all__ = ["SUMMARY_ROWS", "RunSummaryRow", "count_missing", "summary_rows"]

SUMMARY_ROWS = (
    "SELECT r.run_id, r.created_at, r.finished_at, r.status, r.target, r.trials,"
    " (SELECT COUNT(*) FROM cases c WHERE c.run_id = r.run_id),"
    " (SELECT COUNT(*) FROM trials t WHERE t.run_id = r.run_id AND t.trial < r.trials),"
    " json_extract(r.info, '$.settings.expected_trials'),"
    " json_extract(r.info, '$.settings.owner.pid'), json_extract(r.info, '$.settings.owner.host')"
    # INDEXED BY: newer SQLites (3.54) plan a small limit as a scan of every run, sorted,
    # counting the trials of every run in the store before keeping the newest few.
    " FROM runs r INDEXED BY runs_by_created ORDER BY r.created_at DESC, r.run_id DESC LIMIT ?"
)
"""The stored runs newest first, each with its cases and stored trials counted; one parameter,
the limit (-1: all)."""


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

    owner_pid: int | None = None
    """The process the run records as running it (`RunInfo.settings["owner"]`), and its host."""
    owner_host: str | None = None

    @property
    def shown_status(self) -> str:
        """Where the run stands, as `agenteval runs` and the viewer say it (`shown_status`):
        `interrupted` when its trials are missing and its process is gone from this machine."""
        gone = owner_gone({"pid": self.owner_pid, "host": self.owner_host})
        return status_shown(self.status, self.complete, owner_gone=gone)


def summary_rows(conn: sqlite3.Connection, limit: int | None) -> list[RunSummaryRow]:
    """The stored runs, newest first (at most `limit`), with how many of their trials are done."""
    rows = conn.execute(SUMMARY_ROWS, (-1 if limit is None else max(limit, 0),)).fetchall()
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
            owner_pid=pid if isinstance(pid, int) else None,
            owner_host=host if isinstance(host, str) else None,
        )
        for (
            run_id,
            created_at,
            finished_at,
            status,
            target,
            trials,
            n_cases,
            done,
            recorded,
            pid,
            host,
        ) in rows
    ]


def count_missing(conn: sqlite3.Connection, run_id: str, examples: int) -> MissingTrials | None:
    """How many of the run's (case, trial) pairs have no stored trial, naming up to `examples`
    of them in case order; None when no such run is stored."""
    row = conn.execute(
        "SELECT r.trials, json_extract(r.info, '$.settings.expected_trials'),"
        " (SELECT COUNT(*) FROM cases c WHERE c.run_id = r.run_id),"
        " (SELECT COUNT(*) FROM trials t WHERE t.run_id = r.run_id AND t.trial < r.trials)"
        " FROM runs r WHERE r.run_id = ?",
        (run_id,),
    ).fetchone()
    if row is None:
        return None
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
