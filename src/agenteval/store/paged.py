"""The run store read a page at a time (the viewer's reads): a run's (case, trial) keys in
report order from an offset, the results of given keys, what the report's search reads of each
trial, the runs with their agents, and what a run's stamp is made of.

Each read is one short read transaction (`BEGIN` ... `COMMIT`): what it returns is one
snapshot, and a writer in another process is never held up (WAL). Nothing here writes.
"""

from __future__ import annotations

import hashlib
import sqlite3
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from agenteval.case import EvalCase
from agenteval.records import TrialResult
from agenteval.score import Score
from agenteval.store.base import StoreFile
from agenteval.store.progress import RunSummaryRow, summary_rows
from agenteval.trace import Trial

__all__ = ["KEYS_IN_ORDER", "PagedRecords"]

_CHUNK = 5_000
"""Score rows hashed per fetch when digesting a run's scores."""

# CROSS JOIN: SQLite never reorders it, so a page reads its cases in order from the offset and
# each one's trials from the key; newer SQLites (3.54) plan a small limit as a read of every
# trial of the run, sorted.
KEYS_IN_ORDER = (
    "SELECT c.case_id, t.trial FROM cases c CROSS JOIN trials t"
    " ON t.run_id = c.run_id AND t.case_id = c.case_id"
    " WHERE c.run_id = ? ORDER BY c.idx, t.trial LIMIT ? OFFSET ?"
)
"""A run's (case id, trial) pairs in report order (`keys_in_order`); parameters: the run id,
the limit, the offset."""


class PagedRecords(StoreFile):
    """Paged and point reads of a run's results, for the viewer (part of `RunStore`)."""

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """`_read` inside one read transaction: every statement sees the same snapshot."""
        with self._read() as conn:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")

    def run_rows(self) -> list[tuple[RunSummaryRow, str | None]]:
        """Every run newest first (`list_runs`), each with its agent as stored in its info."""
        with self._snapshot() as conn:
            rows = summary_rows(conn, None)
            agents = dict(conn.execute("SELECT run_id, json_extract(info, '$.agent') FROM runs"))
        return [(row, agents.get(row.run_id)) for row in rows]

    def has_run(self, run_id: str) -> bool:
        """Whether the run is stored."""
        with self._read() as conn:
            found = conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return found is not None

    def data_version(self) -> int:
        """SQLite's `PRAGMA data_version` on this store's connection: it changes when any
        other connection commits to the file (compare values read on the same store only)."""
        with self._read() as conn:
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

    def stamp_parts(self, run_id: str) -> tuple[Any, ...] | None:
        """(status, finished_at, a hash of the info text, trials stored, scores stored, the
        highest score rowid) of the run, from its row and two index ranges; None when no such
        run is stored."""
        with self._snapshot() as conn:
            row = conn.execute(
                "SELECT status, finished_at, info FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            if row is None:
                return None
            trials = conn.execute(
                "SELECT COUNT(*) FROM trials WHERE run_id = ?", (run_id,)
            ).fetchone()[0]
            scores, top = conn.execute(
                "SELECT COUNT(*), MAX(rowid) FROM scores WHERE run_id = ?", (run_id,)
            ).fetchone()
        status, finished_at, info = row
        digest = hashlib.blake2b(info.encode(), digest_size=8).hexdigest()
        return (status, finished_at, digest, int(trials), int(scores), int(top or 0))

    def content_digest(self, run_id: str) -> tuple[int, str | None]:
        """A CRC of every stored score's JSON of the run, and the latest time a trial of it
        was written: what changes when scores are rewritten in place (a rescore's merge keeps
        their rows, counts and rowids) or a trial is stored again. Reads every score row:
        about 0.3 s for 100,000 trials with three scores each."""
        crc = 0
        with self._snapshot() as conn:
            cursor = conn.execute(
                "SELECT CAST(data AS BLOB) FROM scores WHERE run_id = ?", (run_id,)
            )
            while rows := cursor.fetchmany(_CHUNK):
                crc = zlib.crc32(b"\x00".join(data for (data,) in rows), crc)
            written = conn.execute(
                "SELECT MAX(finished_at) FROM trials WHERE run_id = ?", (run_id,)
            ).fetchone()[0]
        return crc, written

    def keys_in_order(self, run_id: str, offset: int, limit: int) -> list[tuple[str, int]]:
        """The run's stored (case id, trial) pairs in report order (case order, then trial),
        `limit` of them from `offset`."""
        with self._read() as conn:
            rows = conn.execute(KEYS_IN_ORDER, (run_id, max(limit, 0), max(offset, 0))).fetchall()
        return [(str(case_id), int(trial)) for case_id, trial in rows]

    def position(self, run_id: str, case_id: str, trial: int) -> int | None:
        """The stored trial's number from 1 in report order (case order, then trial), as the
        report's `#` column numbers it; None when it is not stored."""
        with self._snapshot() as conn:
            found = conn.execute(
                "SELECT c.idx FROM cases c JOIN trials t"
                " ON t.run_id = c.run_id AND t.case_id = c.case_id"
                " WHERE c.run_id = ? AND c.case_id = ? AND t.trial = ?",
                (run_id, case_id, trial),
            ).fetchone()
            if found is None:
                return None
            before = conn.execute(
                "SELECT COUNT(*) FROM cases c JOIN trials t"
                " ON t.run_id = c.run_id AND t.case_id = c.case_id"
                " WHERE c.run_id = ? AND (c.idx < ? OR (c.idx = ? AND t.trial < ?))",
                (run_id, found[0], found[0], trial),
            ).fetchone()[0]
        return int(before) + 1

    def results_of(self, run_id: str, keys: Sequence[tuple[str, int]]) -> list[TrialResult]:
        """The stored results of `keys`, in their order (a key with no stored trial is left
        out); only these rows are read and parsed."""
        cases: dict[str, EvalCase] = {}
        found: list[tuple[str, int, str, str, list[tuple[str, str]]]] = []
        with self._snapshot() as conn:
            for case_id, trial in keys:
                row = conn.execute(
                    "SELECT c.data, t.data FROM trials t JOIN cases c"
                    " ON c.run_id = t.run_id AND c.case_id = t.case_id"
                    " WHERE t.run_id = ? AND t.case_id = ? AND t.trial = ?",
                    (run_id, case_id, trial),
                ).fetchone()
                if row is None:
                    continue
                scores = conn.execute(
                    "SELECT name, data FROM scores WHERE run_id = ? AND case_id = ? AND trial = ?"
                    " ORDER BY rowid",
                    (run_id, case_id, trial),
                ).fetchall()
                found.append((case_id, trial, row[0], row[1], scores))
        results = []
        for case_id, trial, case_data, trial_data, scores in found:
            case = cases.get(case_id)
            if case is None:
                where = f"case {case_id!r} of run {run_id!r}"
                case = cases[case_id] = self._parse(EvalCase, case_data, where)
            where = f"trial {trial} of case {case_id!r} in run {run_id!r}"
            results.append(
                TrialResult(
                    case=case,
                    trial=self._parse(Trial, trial_data, where),
                    scores={
                        name: self._parse(Score, data, f"score {name!r} of {where}")
                        for name, data in scores
                    },
                )
            )
        return results

    def case_keys(self, run_id: str, case_id: str) -> list[tuple[str, int]]:
        """The stored trials of one case of the run, by trial index."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT trial FROM trials WHERE run_id = ? AND case_id = ? ORDER BY trial",
                (run_id, case_id),
            ).fetchall()
        return [(case_id, int(trial)) for (trial,) in rows]

    def search_fields(self, run_id: str) -> Iterator[tuple[EvalCase, int, str | None]]:
        """Every stored trial of the run in report order as (its case, its trial number, its
        answer): what the report's case table searches (each case parsed once, only the
        answer read of a trial). One snapshot, read a chunk at a time."""
        with self._snapshot() as conn:
            cursor = conn.execute(
                "SELECT c.case_id, c.data, t.trial, json_extract(t.data, '$.output')"
                " FROM cases c JOIN trials t ON t.run_id = c.run_id AND t.case_id = c.case_id"
                " WHERE c.run_id = ? ORDER BY c.idx, t.trial",
                (run_id,),
            )
            case: EvalCase | None = None
            while rows := cursor.fetchmany(_CHUNK):
                for case_id, case_data, trial, output in rows:
                    if case is None or case.id != case_id:
                        where = f"case {case_id!r} of run {run_id!r}"
                        case = self._parse(EvalCase, case_data, where)
                    yield case, int(trial), output if isinstance(output, str) else None
