"""What a W5 rescore worker spends a trial: with the ten built-ins, and with ten free scorers.

    python bench/w5_worker.py [--trials 20000] [--store bench/results/w5/built-v2-100000-2000.db]

The store is one `bench/w5_rescore.py` built (run that first); it is copied, never changed.
One rescore worker's loop (`rescore_pool._score_range`, what each of the pool's processes runs
over its ranges of cases) is timed in this process over the first `--trials` stored trials, in
CPU time, best of three, twice:
1. with the ten deterministic built-ins, as W5 scores;
2. with ten "free" scorers of the same names, each handing back the score its built-in gave
   that trial (made beforehand, looked up during the timing): what reading the stored trials,
   comparing their new scores with the stored text and summarising cost without any scoring.
The second is the floor that the machinery around the scorers sets: two workers at `f` us a
trial rescore at most 2 / f million trials a second, whatever the scorers cost (issue 21's
seventh look, docs/performance-history.md). The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import pickle
import shutil
import tempfile
import time
from pathlib import Path

from w5_rescore import _RUN_ID, TOOLS

from agenteval import EvalCase, Score, Trial
from agenteval.engine import rescore_pool
from agenteval.report.summary import SummaryBuilder
from agenteval.scorers import default_scorers
from agenteval.store import RunStore

_ROOT = Path(__file__).resolve().parent.parent


class _Free:
    """A scorer that costs nothing: the score its built-in gave the trial's case, looked up."""

    def __init__(self, name: str, known: dict[tuple[str, str], Score]) -> None:
        self.name = name
        self._known = known

    def call(self, case: EvalCase, trial: Trial) -> Score:
        return self._known[case.id, self.name]


def _best_us(first: int, last: int, trials: int, names: list[str]) -> float:
    """One worker's CPU per trial over cases `first`..`last`, best of three (after a warm-up)."""
    summary = SummaryBuilder(names, None, None, trials_per_case=1)
    rescore_pool._score_range(first, min(first + 200, last), summary.partial())
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        rows, _ = rescore_pool._score_range(first, last, summary.partial())
        best = min(best, time.process_time() - start)
        assert not rows, "the store was scored by this agenteval: no score may change"
    return best / trials * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=20_000)
    parser.add_argument(
        "--store", type=Path, default=_ROOT / "bench/results/w5/built-v2-100000-2000.db"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "w5.db"
        shutil.copyfile(args.store, path)
        store = RunStore(path)
        first, last, trials = store.stored_ranges(_RUN_ID, args.trials)[0]
        shipped = pickle.dumps((list(default_scorers(TOOLS)), store.redactor))
        rescore_pool._start(str(path), _RUN_ID, shipped, True)
        worker = rescore_pool._WORKER[0]
        builtins = worker.scorers
        names = [scorer.name for scorer in builtins]
        scored = _best_us(first, last, trials, names)

        known = {
            (item.case.id, scorer.name): scorer.call(item.case, item.trial)
            for item in store.iter_stored(_RUN_ID, (first, last))
            for scorer in builtins
        }
        worker.scorers = [_Free(name, known) for name in names]  # type: ignore[misc]
        free = _best_us(first, last, trials, names)
    print(
        json.dumps(
            {
                "workload": "W5 worker",
                "trials": trials,
                "builtins_us_per_trial": round(scored, 1),
                "free_scorers_us_per_trial": round(free, 1),
                "two_workers_at_most_per_second": round(2e6 / free),
            }
        )
    )


if __name__ == "__main__":
    main()
