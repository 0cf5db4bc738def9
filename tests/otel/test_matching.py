"""Matching recorded trials to cases: by the case they name, else by order."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval import EvalCase, Trial
from agenteval.errors import DatasetError
from agenteval.otel import RecordedTrial, match_trials

CASES = [EvalCase(id=name, input=f"q {name}") for name in ("a", "b", "c")]


def recorded(key: str | None, output: str) -> RecordedTrial:
    return RecordedTrial(Trial(output=output), source=f"src {output}", key=key)


def test_traces_naming_their_case_are_its_trials_in_the_order_read() -> None:
    matched = match_trials(
        [recorded("b", "b1"), recorded("a", "a1"), recorded("b", "b2"), recorded("c", "c1")],
        CASES,
    )
    assert [c.id for c in matched.cases] == ["a", "b", "c"]
    assert matched.trials_per_case == 2
    assert matched.trials[("b", 0)].output == "b1"
    assert matched.trials[("b", 1)].output == "b2"
    assert matched.trials[("b", 1)].case_id == "b" and matched.trials[("b", 1)].trial == 1
    assert not matched.by_order and not matched.unmatched and not matched.missing


def test_unknown_and_unnamed_traces_are_left_out_and_cases_without_a_trace_are_listed() -> None:
    matched = match_trials([recorded("a", "a1"), recorded("zzz", "z"), recorded(None, "n")], CASES)
    assert matched.unmatched == ["src z", "src n"]
    assert matched.missing == ["b", "c"]
    assert [c.id for c in matched.cases] == ["a"]


def test_traces_naming_no_known_case_are_an_error_naming_what_they_name() -> None:
    with pytest.raises(DatasetError, match="they name 'x', 'y'") as info:
        match_trials([recorded("x", "1"), recorded("y", "2")], CASES, source="t.jsonl")
    assert info.value.field == "agenteval.case.id"
    assert info.value.hint is not None and "--match-attribute" in info.value.hint


def test_by_order_one_pass_or_several() -> None:
    one = match_trials([recorded(None, str(i)) for i in range(3)], CASES)
    assert one.by_order
    assert [one.trials[(c.id, 0)].output for c in CASES] == ["0", "1", "2"]
    two = match_trials([recorded(None, str(i)) for i in range(6)], CASES)
    assert two.trials_per_case == 2
    assert two.trials[("a", 1)].output == "3"
    fewer = match_trials([recorded(None, "0")], CASES)
    assert fewer.missing == ["b", "c"]


def test_by_order_with_a_count_that_fits_no_pass_is_an_error() -> None:
    with pytest.raises(DatasetError, match="4 traces for 3 cases"):
        match_trials([recorded(None, str(i)) for i in range(4)], CASES)


def test_nothing_recorded_is_an_error() -> None:
    with pytest.raises(DatasetError, match="no traces"):
        match_trials([], CASES)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=20), st.randoms())
def test_every_named_trace_goes_to_its_case_and_keeps_its_order(
    keys: list[str], rng: random.Random
) -> None:
    items = [recorded(key, f"{key}-{n}") for n, key in enumerate(keys)]
    rng.shuffle(items)
    matched = match_trials(items, CASES)
    for case in matched.cases:
        mine = [i.trial.output for i in items if i.key == case.id]
        assert [matched.trials[(case.id, n)].output for n in range(len(mine))] == mine
    assert len(matched.trials) == len(keys)
    assert matched.trials_per_case == max(keys.count(k) for k in "abc")
