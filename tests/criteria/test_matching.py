"""The alignments: optimal where greedy first-fit is not, checked against brute force."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval import ToolCall
from agenteval.criteria.matching import (
    Alignment,
    align_any_order,
    align_in_order,
    align_positions,
)
from agenteval.criteria.trajectory import call_fits

# Items for property tests: an expected item is (name, wanted argument or None for "any");
# an actual item is (name, argument). An expected item fits an actual one of the same name
# whose argument is the wanted one, or any argument when none is wanted: the rule that makes
# greedy matching go wrong.
Expected = tuple[str, int | None]
Actual = tuple[str, int]


def fits(e: Expected, a: Actual) -> bool:
    return e[0] == a[0] and (e[1] is None or e[1] == a[1])


names = st.sampled_from("abc")
expected_items = st.lists(st.tuples(names, st.one_of(st.none(), st.integers(0, 2))), max_size=6)
actual_items = st.lists(st.tuples(names, st.integers(0, 2)), max_size=6)


def greedy_any_order(
    expected: Sequence[Expected], actual: Sequence[Actual], fit: Callable[..., bool]
) -> int:
    used: set[int] = set()
    for e in expected:
        for j, a in enumerate(actual):
            if j not in used and fit(e, a):
                used.add(j)
                break
    return len(used)


def greedy_in_order(
    expected: Sequence[Expected], actual: Sequence[Actual], fit: Callable[..., bool]
) -> int:
    # First fit after the last match; an expected item not found is skipped.
    position = matched = 0
    for e in expected:
        for j in range(position, len(actual)):
            if fit(e, actual[j]):
                matched, position = matched + 1, j + 1
                break
    return matched


def brute_any_order(expected: Sequence[Expected], actual: Sequence[Actual]) -> int:
    best = 0
    for size in range(min(len(expected), len(actual)), 0, -1):
        for chosen in itertools.combinations(range(len(expected)), size):
            for targets in itertools.permutations(range(len(actual)), size):
                if all(fits(expected[i], actual[j]) for i, j in zip(chosen, targets, strict=True)):
                    return size
    return best


def brute_in_order(expected: Sequence[Expected], actual: Sequence[Actual]) -> int:
    for size in range(min(len(expected), len(actual)), 0, -1):
        for chosen in itertools.combinations(range(len(expected)), size):
            for targets in itertools.combinations(range(len(actual)), size):
                if all(fits(expected[i], actual[j]) for i, j in zip(chosen, targets, strict=True)):
                    return size
    return 0


def check_valid(
    alignment: Alignment, expected: Sequence[Expected], actual: Sequence[Actual]
) -> None:
    es = [e for e, _ in alignment.pairs]
    acts = [a for _, a in alignment.pairs]
    assert len(set(es)) == len(es) and len(set(acts)) == len(acts)
    assert all(fits(expected[e], actual[a]) for e, a in alignment.pairs)
    assert alignment.matched + len(alignment.missing) == len(expected)
    assert alignment.matched + len(alignment.extra) == len(actual)


# --- worked examples where greedy first-fit goes wrong -------------------------------------------

CHECK = call_fits(check_args=True)


def test_any_order_gives_the_any_args_call_the_call_nobody_else_wants() -> None:
    # Greedy gives search(q="x") to the expected call that accepts any arguments, and then the
    # expected search(q="x") finds nothing: 1 of 2. The right pairing matches both.
    expected = [ToolCall(name="search", args={}), ToolCall(name="search", args={"q": "x"})]
    actual = [ToolCall(name="search", args={"q": "x"}), ToolCall(name="search", args={"q": "y"})]
    assert greedy_any_order(expected, actual, CHECK) == 1  # type: ignore[arg-type]
    alignment = align_any_order(expected, actual, CHECK)
    assert alignment.matched == 2
    assert alignment.pairs == ((0, 1), (1, 0))


def test_any_order_with_duplicates_needs_an_augmenting_path() -> None:
    # First fit gives get(id=1) to the any-arguments call, so the expected get(id=1) finds
    # nothing: 2 of 3. Moving the any-arguments call to get(id=3) matches all three.
    expected = [
        ToolCall(name="get", args={}),
        ToolCall(name="get", args={"id": 1}),
        ToolCall(name="get", args={"id": 2}),
    ]
    actual = [
        ToolCall(name="get", args={"id": 1}),
        ToolCall(name="get", args={"id": 2}),
        ToolCall(name="get", args={"id": 3}),
    ]
    assert greedy_any_order(expected, actual, CHECK) == 2  # type: ignore[arg-type]
    assert align_any_order(expected, actual, CHECK).pairs == ((0, 2), (1, 0), (2, 1))


def test_in_order_does_not_let_an_early_match_block_a_longer_one() -> None:
    # Greedy takes the expected "c" at the end, and "a", "b" (which come before it) are lost.
    expected = [("c", None), ("a", None), ("b", None)]
    actual = [("a", 0), ("b", 0), ("c", 0)]
    assert greedy_in_order(expected, actual, fits) == 1
    alignment = align_in_order(expected, actual, fits)
    assert alignment.matched == 2
    assert alignment.pairs == ((1, 0), (2, 1))


def test_in_order_any_args_call_does_not_take_the_specific_calls_place() -> None:
    expected = [ToolCall(name="search", args={}), ToolCall(name="search", args={"q": "x"})]
    actual = [ToolCall(name="search", args={"q": "x"})]
    # Either expected call may take the one actual call: one of two, whichever.
    assert align_in_order(expected, actual, CHECK).matched == 1
    actual = [ToolCall(name="search", args={"q": "y"}), ToolCall(name="search", args={"q": "x"})]
    assert align_in_order(expected, actual, CHECK).matched == 2


def test_in_order_finds_a_match_after_a_missing_expected_item() -> None:
    # A prefix matcher stops at the first expected item it cannot find; LCS goes on.
    expected = [("x", None), ("a", None), ("b", None)]
    actual = [("a", 0), ("b", 0)]
    assert align_in_order(expected, actual, fits).matched == 2


def test_positions_compare_item_by_item() -> None:
    alignment = align_positions(["a", "b", "c"], ["a", "c", "b", "d"], str.__eq__)
    assert alignment.pairs == ((0, 0),)
    assert alignment.missing == [1, 2] and alignment.extra == [1, 2, 3]


def test_nothing_expected_is_full_recall() -> None:
    assert align_any_order([], ["a"], str.__eq__).recall == 1.0
    assert align_in_order([], [], str.__eq__).recall == 1.0


def test_a_long_augmenting_path_does_not_hit_the_recursion_limit() -> None:
    # Expected item i fits actual items i and i+1; the last one fits only actual 0, which first
    # fit already gave to item 0: the augmenting path runs through every item.
    size = 3000
    candidates = {i: {i, i + 1} for i in range(size - 1)}
    candidates[size - 1] = {0}
    alignment = align_any_order(
        list(range(size)), list(range(size)), lambda e, a: a in candidates[e]
    )
    assert alignment.matched == size


# --- properties ----------------------------------------------------------------------------------


@settings(deadline=None)  # brute force is slow on a loaded machine
@given(expected_items, actual_items)
def test_any_order_is_optimal(expected: list[Expected], actual: list[Actual]) -> None:
    alignment = align_any_order(expected, actual, fits)
    check_valid(alignment, expected, actual)
    assert alignment.matched == brute_any_order(expected, actual)
    assert alignment.matched >= greedy_any_order(expected, actual, fits)


@settings(deadline=None)  # brute force is slow on a loaded machine
@given(expected_items, actual_items)
def test_in_order_is_optimal(expected: list[Expected], actual: list[Actual]) -> None:
    alignment = align_in_order(expected, actual, fits)
    check_valid(alignment, expected, actual)
    assert [a for _, a in alignment.pairs] == sorted(a for _, a in alignment.pairs)
    assert alignment.matched == brute_in_order(expected, actual)
    assert alignment.matched >= greedy_in_order(expected, actual, fits)


@settings(deadline=None)
@given(expected_items, actual_items, st.randoms(use_true_random=False))
def test_any_order_ignores_order(
    expected: list[Expected], actual: list[Actual], rng: object
) -> None:
    import random

    assert isinstance(rng, random.Random)
    shuffled_expected, shuffled_actual = list(expected), list(actual)
    rng.shuffle(shuffled_expected)
    rng.shuffle(shuffled_actual)
    assert (
        align_any_order(shuffled_expected, shuffled_actual, fits).matched
        == align_any_order(expected, actual, fits).matched
    )


@settings(deadline=None)  # brute force is slow on a loaded machine
@given(expected_items, actual_items)
def test_order_and_positions_never_beat_any_order(
    expected: list[Expected], actual: list[Actual]
) -> None:
    any_order = align_any_order(expected, actual, fits).matched
    in_order = align_in_order(expected, actual, fits).matched
    positions = align_positions(expected, actual, fits)
    check_valid(positions, expected, actual)
    assert positions.matched <= in_order <= any_order
