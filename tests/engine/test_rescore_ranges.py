"""The pool's ranges (`rescoring.tapered`): the stored ranges joined into ranges of about
`RANGE_TRIALS` trials but for the run's last ones, so the workers finish together. However
they are cut, they cover every case once, in order (the store and the summary are compared
with main's by tests/engine/test_rescore_pool.py)."""

from __future__ import annotations

import itertools
import random

import pytest

from agenteval.engine.rescoring import tapered

_LAST = 2**62


def _fine(rng: random.Random, cases: int) -> list[tuple[int, int, int]]:
    """Stored ranges as `stored_ranges` cuts them: consecutive, the last to `_LAST`."""
    ranges, first = [], 0
    while first < cases:
        last = min(cases - 1, first + rng.randrange(3))
        ranges.append((first, last, rng.randrange(1, 40)))
        first = last + 1
    return [*ranges[:-1], (ranges[-1][0], _LAST, ranges[-1][2])]


@pytest.mark.parametrize("seed", range(200))
def test_tapered_ranges_cover_every_case_once_in_order(seed: int) -> None:
    rng = random.Random(seed)
    fine = _fine(rng, rng.randrange(1, 300))
    size, workers = rng.randrange(1, 200), rng.randrange(0, 4)
    got = tapered(fine, size, workers)
    assert got[0][0] == 0 and got[-1][1] == _LAST
    assert all(a[1] + 1 == b[0] for a, b in itertools.pairwise(got))
    assert sum(t for *_, t in got) == sum(t for *_, t in fine)
    # Joined ones reach `size` (but the one the ranges ran out in); the tail is left fine.
    tail = workers * size
    left = sum(t for *_, t in fine)
    for *_, trials in got[:-1]:
        if left - trials >= tail:
            assert trials >= size
        left -= trials


def test_w5_is_cut_into_2000s_then_500s() -> None:
    fine = [(i, i, 500) for i in range(199)] + [(199, _LAST, 500)]
    got = tapered(fine, 2_000, 2)
    assert [t for *_, t in got] == [2_000] * 48 + [500] * 8
