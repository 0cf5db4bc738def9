"""A summary built in parts (`SummaryBuilder.partial`, each a run of whole cases) and merged
in order is exactly the summary of one builder given every trial: the first reasons, names in
order of first appearance, flaky cases' order, and float sums to the last bit."""

from __future__ import annotations

import random
from itertools import groupby
from pathlib import Path

import pytest
from tests.engine.rescore_runs import RUN_ID, SEEDS, build

from agenteval.records import TrialResult
from agenteval.report.summary import SummaryBuilder
from agenteval.scorers import BUILTIN_SCORERS
from agenteval.store import RunStore


def _results(path: Path, seed: int) -> list[TrialResult]:
    build(path, seed)
    with RunStore(path) as store:
        return list(store.iter_results(RUN_ID))


def _merged(results: list[TrialResult], whole: SummaryBuilder, rng: random.Random) -> str:
    cases = [list(group) for _, group in groupby(results, key=lambda r: r.case.id)]
    at = 0
    while at < len(cases):
        size = rng.choice([1, 2, 3, 7, 20])
        part = whole.partial()
        for case in cases[at : at + size]:
            for result in case:
                part.add(result)
        whole.merge(part)
        at += size
    return whole.build().model_dump_json()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("per_case", [3, None])
def test_parts_merged_in_order_give_the_whole_summary(
    tmp_path: Path, seed: int, per_case: int | None
) -> None:
    results = _results(tmp_path / "runs.db", seed)
    rng = random.Random(seed)
    # Some trials left out, so that some cases stay open (fewer trials than the run's).
    results = [r for r in results if rng.random() > 0.05]

    def builder() -> SummaryBuilder:
        return SummaryBuilder(BUILTIN_SCORERS, passing=None, trials_per_case=per_case)

    one = builder()
    for result in results:
        one.add(result)
    expected = one.build().model_dump_json()
    assert _merged(results, builder(), rng) == expected
    # and with a part first (the engine's loop merges every part into an empty builder)
    assert _merged(results, builder(), random.Random(seed + 1)) == expected


def test_only_a_partial_builder_merges() -> None:
    with pytest.raises(ValueError, match="partial"):
        SummaryBuilder().merge(SummaryBuilder())
