"""`as_stored`'s quick way (every stored score scored again, in the same order: the scores
themselves) gives the trial main's loop gave, whatever the stored and new names and orders."""

from __future__ import annotations

import itertools
from pathlib import Path

from agenteval import EvalCase, RunStore, Score, Trial
from agenteval.engine.stored_trials import as_stored
from agenteval.records import TrialResult
from agenteval.store import StoredTrial
from agenteval.store.encoding import to_json


def _mains(store: RunStore, item: StoredTrial, scores: dict[str, Score]) -> TrialResult:
    """main's (78b92ec) `as_stored` with `merge`, as it was."""
    merged: dict[str, Score] = {}
    for name, data in item.scores.items():
        new = scores.get(name)
        if new is None:
            new = store.read_score(data, "here")
        merged[name] = new
    for name, score in scores.items():
        merged.setdefault(name, score)
    return TrialResult(case=item.case, trial=item.trial, scores=merged)


def test_same_trial_as_mains_loop_for_every_order(tmp_path: Path) -> None:
    names = ["a", "b", "c"]
    stored_score = {n: to_json(Score(name=n, value=0.25, passed=False)) for n in names}
    case = EvalCase(id="c1", input="hi")
    trial = Trial(case_id="c1", trial=0, output="x")
    checked = 0
    with RunStore(tmp_path / "s.db") as store:
        for k_old, k_new in itertools.product(range(4), range(1, 4)):
            for old in itertools.permutations(names, k_old):
                for new in itertools.permutations(names, k_new):
                    item = StoredTrial(
                        key=("c1", 0),
                        case=case,
                        trial=trial,
                        scores={n: stored_score[n] for n in old},
                    )
                    scores = {n: Score(name=n, value=1.0, passed=True) for n in new}
                    got = as_stored(store, "r", item, scores, merge=True)
                    want = _mains(store, item, scores)
                    assert list(got.scores) == list(want.scores), (old, new)
                    assert got.model_dump_json() == want.model_dump_json(), (old, new)
                    checked += 1
    assert checked > 50
