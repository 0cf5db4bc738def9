"""The run store's results: each (case, trial) with its scores, written in batches as trials
finish (each batch one transaction), counted, and read back a chunk at a time in case order.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agenteval.case import EvalCase
from agenteval.records import MissingTrials, TrialResult
from agenteval.score import Score
from agenteval.store.base import StoreFile
from agenteval.store.encoding import stored_time, to_json
from agenteval.store.layout import (
    CHUNK,
    ROWS_PER_STATEMENT,
    delete_scores_of,
    upsert_scores,
    upsert_trials,
)
from agenteval.store.progress import count_missing
from agenteval.trace import ToolCall, Trial, utc_now

__all__ = ["STORED_RANGES", "EncodedResults", "ResultRecords", "StoredTrial"]

_LAST = 2**62  # past any case's position: "to the run's last case"

# CROSS JOIN: SQLite never reorders it, so the cases are read in order and each one's trials
# counted from the key; newer SQLites (3.54) read the run's trials first, then sort the counts.
STORED_RANGES = (
    "SELECT c.idx, COUNT(*) FROM cases c CROSS JOIN trials t"
    " ON t.run_id = c.run_id AND t.case_id = c.case_id"
    " WHERE c.run_id = ? GROUP BY c.idx ORDER BY c.idx"
)
"""Each case's position and stored trials, in case order (`stored_ranges`); one parameter,
the run id."""


@dataclass(frozen=True, slots=True)
class StoredTrial:
    """A stored trial as a rescore reads it (`RunStore.iter_stored`): its case, the trial, and
    its scores as their stored JSON text, by name in the order written."""

    key: tuple[str, int]
    """(case id, trial index), as the trial is stored."""
    case: EvalCase
    trial: Trial
    scores: dict[str, str]


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


class ResultRecords(StoreFile):
    """The trials and their scores (part of `RunStore`)."""

    def add_result(self, run_id: str, result: TrialResult) -> None:
        """Store one trial with all its scores, atomically; writing the same pair again
        replaces it (trial and score set) instead of adding a second copy."""
        self.add_results(run_id, (result,))

    def add_results(self, run_id: str, results: Iterable[TrialResult]) -> None:
        """Store a batch of trials with their scores in one transaction: all or none.

        A result whose case the run does not list yet adds that case after the others.
        """
        self.write_results(run_id, self.encode_results(results))

    def encode_results(
        self, results: Iterable[TrialResult], into: EncodedResults | None = None
    ) -> EncodedResults:
        """A batch of results as the rows `write_results` stores: JSON, secrets redacted.

        `add_results` is both; the engine encodes in its event loop and writes in a thread,
        so that the thread, which waits on SQLite, holds the interpreter lock only briefly.
        `into`: a batch encoded so far, to which these results are added (the engine encodes
        a batch a few results at a time, letting other tasks run in between); it is returned.
        """
        batch = list(results)
        texts: list[str] = []
        for result in batch:
            texts.append(to_json(result.trial))
            texts.extend(to_json(score) for score in result.scores.values())
        texts = self._redacted(texts)
        encoded = into if into is not None else EncodedResults(stored_time(utc_now()) or "")
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
        # Many rows a statement (`layout.ROWS_PER_STATEMENT`): see there why.
        step = ROWS_PER_STATEMENT
        written_at = encoded.written_at
        with self._write() as conn:
            self._require_run(conn, run_id)
            self._add_missing_cases(conn, run_id, encoded.cases)
            for start in range(0, len(encoded.keys), step):
                keys = encoded.keys[start : start + step]
                conn.execute(delete_scores_of(len(keys)), [*itertools.chain(*keys), run_id])
            for start in range(0, len(encoded.trials), step):
                trials = encoded.trials[start : start + step]
                conn.execute(
                    upsert_trials(len(trials)),
                    [v for c, t, data in trials for v in (run_id, c, t, data, written_at)],
                )
            for start in range(0, len(encoded.scores), step):
                scores = encoded.scores[start : start + step]
                conn.execute(
                    upsert_scores(len(scores)),
                    [v for c, t, name, data in scores for v in (run_id, c, t, name, data)],
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

    def replay_trial(self, run_id: str, case_id: str, trial: int) -> Trial | None:
        """One stored trial of a case, to replay its tool calls: trial `trial` when the run
        stored it, else the case's first stored trial; None when the run has no trial of the
        case. One row read (never the whole run), so a replay costs each trial one lookup."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT trial, data FROM trials WHERE run_id = ? AND case_id = ?"
                " ORDER BY trial = ? DESC, trial LIMIT 1",
                (run_id, case_id, trial),
            ).fetchone()
        if row is None:
            return None
        where = f"trial {row[0]} of case {case_id!r} in run {run_id!r}"
        return self._parse(Trial, row[1], where)

    def stored_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A tool call's arguments as the store writes them (JSON: lists for tuples; secrets
        redacted; deep data cut), to compare a live call with a stored one."""
        text = self._json(Trial(tool_calls=[ToolCall(name=name, arguments=arguments)]))
        stored: dict[str, Any] = json.loads(text)["tool_calls"][0]["arguments"]
        return stored

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
            missing = count_missing(conn, run_id, examples)
        if missing is None:
            raise self._unknown_run(run_id)
        return missing

    def iter_results(self, run_id: str) -> Iterator[TrialResult]:
        """Every stored result of the run with its scores, by case order then trial index.

        Results are read a chunk at a time, so a large run is never held in memory at once.
        """
        with self._read() as conn:
            self._require_run(conn, run_id)
        return self._iter_results(run_id)

    def _iter_results(self, run_id: str) -> Iterator[TrialResult]:
        for stored in self._iter_stored(run_id, 0, _LAST):
            where = f"case {stored.case.id!r} in run {run_id!r}"
            scores = {
                name: self._parse(Score, data, f"score {name!r} of {where}")
                for name, data in stored.scores.items()
            }
            yield TrialResult(case=stored.case, trial=stored.trial, scores=scores)

    def iter_stored(
        self, run_id: str, cases: tuple[int, int] | None = None
    ) -> Iterator[StoredTrial]:
        """`iter_results` for a rescore: every stored trial with its case, and its scores left
        as their stored JSON text, by name in the order written.

        A rescore replaces most scores, so it parses only those it keeps (`read_score`), and
        `merge_scores` compares the new ones with the stored text. `cases` (first, last), from
        `stored_ranges`, reads only the trials of those cases (by position, both included).
        """
        with self._read() as conn:
            self._require_run(conn, run_id)
        first, last = (0, _LAST) if cases is None else cases
        return self._iter_stored(run_id, first, last)

    def stored_ranges(self, run_id: str, size: int) -> list[tuple[int, int, int]]:
        """The run's cases cut into ranges of about `size` stored trials, in case order:
        (first case, last case, trials), by the cases' positions; a case is never cut in two.
        Cases with no stored trial fall in a range but add nothing to it."""
        ranges: list[tuple[int, int, int]] = []
        with self._read() as conn:
            self._require_run(conn, run_id)
            first, trials = 0, 0
            for idx, count in conn.execute(STORED_RANGES, (run_id,)):
                trials += count
                if trials >= size:
                    ranges.append((first, idx, trials))
                    first, trials = idx + 1, 0
            if trials:
                ranges.append((first, _LAST, trials))
        return ranges

    def _iter_stored(self, run_id: str, first: int, last: int) -> Iterator[StoredTrial]:
        # Results come case by case, so one parsed case is reused by all of its trials.
        case: EvalCase | None = None
        after = (first, -1)  # from the first trial of case `first`
        # Looked up here, not at import: the model is complete (its validator built) by now.
        validate_case = EvalCase.__pydantic_validator__.validate_json
        validate_trial = Trial.__pydantic_validator__.validate_json
        while True:
            with self._read() as conn:
                rows = conn.execute(
                    "SELECT c.idx, t.trial, t.case_id, c.data, t.data"
                    " FROM cases c JOIN trials t ON t.run_id = c.run_id AND t.case_id = c.case_id"
                    # `c.idx >= ?` lets the index start at the last chunk's case.
                    " WHERE c.run_id = ? AND c.idx >= ? AND c.idx <= ?"
                    " AND (c.idx > ? OR (c.idx = ? AND t.trial > ?))"
                    " ORDER BY c.idx, t.trial LIMIT ?",
                    (run_id, after[0], last, after[0], after[0], after[1], CHUNK),
                ).fetchall()
                if not rows:
                    return
                # Each trial of the chunk, its scores by name in the order written (a trial
                # with none: none). A trial's rows come one after the other, so its dict is
                # looked up when the trial changes, not per row: ~3 us of a W5 trial's ~150.
                scores: dict[tuple[str, int], dict[str, str]] = {
                    (row[2], row[1]): {} for row in rows
                }
                at: tuple[str, int] | None = None
                into: dict[str, str] | None = None
                for case_id, trial, name, data in conn.execute(
                    "SELECT s.case_id, s.trial, s.name, s.data FROM scores s JOIN cases c"
                    " ON c.run_id = s.run_id AND c.case_id = s.case_id"
                    " WHERE s.run_id = ? AND c.idx BETWEEN ? AND ? ORDER BY s.rowid",
                    (run_id, rows[0][0], rows[-1][0]),
                ):
                    if at is None or at[1] != trial or at[0] != case_id:
                        at = (case_id, trial)
                        into = scores.get(at)  # None: a trial of another chunk
                    if into is not None:
                        # Interned: a summary keeps the names of every case's scores.
                        into[sys.intern(name)] = data
            for _idx, trial, case_id, case_data, trial_data in rows:
                try:
                    # The validators themselves (what `model_validate_json` calls), and where
                    # the record is only worked out when it cannot be read (`_parse` then
                    # fails it again, as before): ~1 us of a W5 trial (a case and a trial).
                    if case is None or case.id != case_id:
                        case = validate_case(case_data)
                    parsed = validate_trial(trial_data)
                except ValidationError:
                    if case is None or case.id != case_id:
                        where = f"case {case_id!r} of run {run_id!r}"
                        case = self._parse(EvalCase, case_data, where)
                    where = f"trial {trial} of case {case_id!r} in run {run_id!r}"
                    parsed = self._parse(Trial, trial_data, where)
                yield StoredTrial(
                    key=(case_id, trial), case=case, trial=parsed, scores=scores[(case_id, trial)]
                )
            after = (rows[-1][0], rows[-1][1])

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
