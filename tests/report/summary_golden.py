"""The summaries `test_summary_golden.py` compares with main's: the varied runs of
`tests.engine.rescore_runs` (failures, retries, gaps, judge scores, flaky cases, priced and
unpriced calls, simulated users, several trials a case), each summarised whole by one
`SummaryBuilder` under several settings, including one trial a case (the single-trial path).

`python -m tests.report.summary_golden tests/report/golden` writes `summaries.json`; it was made
by main (78b92ec) before the summary's fast path of issue 21's third session.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from pathlib import Path

from tests.engine.rescore_runs import RUN_ID, SEEDS, build

from agenteval.records import TrialResult
from agenteval.report.summary import SummaryBuilder
from agenteval.score import Score
from agenteval.scorers import BUILTIN_SCORERS
from agenteval.scorers.recorded import NOT_RECORDED
from agenteval.store import RunStore

SETTINGS: dict[str, tuple[int | None, list[str] | None, bool]] = {
    # name: (trials_per_case, passing, first trial of each case only)
    "per-case-3": (3, None, False),
    "per-case-none": (None, None, False),
    "passing-two": (3, ["exact_match", "tool_execution"], False),
    "single": (1, None, True),
    "single-passing": (1, ["exact_match", "tool_faithfulness"], True),
    "single-unknown": (None, None, True),
    "passing-exact": (3, ["exact_match"], False),
    "single-passing-exact": (1, ["exact_match"], True),
}


def perturbed(every: list[TrialResult], seed: int) -> list[TrialResult]:
    """The results with some scores made errors, not-recorded no-scores, or scores with a
    value and no pass/fail: what the varied runs' built-ins never give."""
    rng = random.Random(seed)
    out = []
    for result in every:
        scores = dict(result.scores)
        for name in list(scores):
            roll = rng.random()
            if roll < 0.04:
                scores[name] = Score(name=name, error="ValueError: boom")
            elif roll < 0.08:
                scores[name] = Score(name=name, details={NOT_RECORDED: "tool_calls"})
            elif roll < 0.10:
                scores[name] = Score(name=name, value=0.5)
        out.append(result.model_copy(update={"scores": scores}))
    return out


def results(path: Path, seed: int) -> list[TrialResult]:
    build(path, seed)
    with RunStore(path) as store:
        return list(store.iter_results(RUN_ID))


def summaries() -> dict[str, str]:
    """Every (seed, setting)'s summary as JSON text."""
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in SEEDS:
            plain = results(Path(tmp) / f"runs-{seed}.db", seed)
            for kind, every in (("plain", plain), ("perturbed", perturbed(plain, seed))):
                for name, (per_case, passing, first_only) in SETTINGS.items():
                    builder = SummaryBuilder(
                        BUILTIN_SCORERS, passing=passing, trials_per_case=per_case
                    )
                    for result in every:
                        if not first_only or result.trial.trial == 0:
                            builder.add(result)
                    out[f"{seed}/{kind}/{name}"] = builder.build().model_dump_json()
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1]) / "summaries.json"
    target.write_text(json.dumps(summaries(), indent=0, sort_keys=True) + "\n")
    print(f"wrote {target}")
