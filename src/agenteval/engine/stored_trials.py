"""What a rescore does with each stored trial once it is scored, in the engine's loop
(`rescoring`) or in a worker process (`rescore_pool`): put back the stored scores the scorers
could not decide from the store, and the trial as the store holds it once its new scores are
merged in.
"""

from __future__ import annotations

from agenteval.records import TrialResult, trial_result
from agenteval.score import Score
from agenteval.scorers.redacted import KEPT, UNDECIDABLE_REASON, is_undecidable
from agenteval.store import RunStore, StoredTrial

__all__ = ["Keeper", "as_stored"]


class Keeper:
    """Puts back the stored score of each scorer that could not decide from the store."""

    def __init__(self, store: RunStore, run_id: str) -> None:
        self._store = store
        self._run_id = run_id

    def __call__(self, item: StoredTrial, scores: dict[str, Score]) -> None:
        for name, score in scores.items():
            data = item.scores.get(name)
            if data is None or not is_undecidable(score):
                continue  # decided; or a scorer new to this trial: its no-score says why
            where = f"score {name!r} of case {item.key[0]!r} in run {self._run_id!r}"
            stored = self._store.read_score(data, where)
            note = f"kept as stored: rescoring {UNDECIDABLE_REASON}"
            scores[name] = stored.model_copy(update={"details": {**stored.details, KEPT: note}})


def as_stored(
    store: RunStore, run_id: str, item: StoredTrial, scores: dict[str, Score], *, merge: bool
) -> TrialResult:
    """The trial with its scores as the store holds them once `scores` are written: in the
    order written, a score of the same name replaced in place (only the kept ones are read)."""
    # Built by `records.trial_result`, as the engine builds its own: without validating a case,
    # trial and scores valid already (the instance validation gives): 1.55 -> 0.92 us a W5
    # trial (timeit), within the noise of W5's loop (issue 21's fourth round).
    if not merge:
        return trial_result(item.case, item.trial, scores)
    if list(item.scores) == list(scores):
        # The usual trial: every stored score scored again, none new, so the merged set is
        # `scores` itself (the loop below gives the same names, order and scores): 3.0 us a
        # W5 trial against ~5 us (timeit), of its ~150.
        return trial_result(item.case, item.trial, scores)
    merged: dict[str, Score] = {}
    for name, data in item.scores.items():
        new = scores.get(name)
        if new is None:
            where = f"score {name!r} of case {item.key[0]!r} in run {run_id!r}"
            new = store.read_score(data, where)
        merged[name] = new
    for name, score in scores.items():
        merged.setdefault(name, score)
    return trial_result(item.case, item.trial, merged)
