"""The quicker ways the built-in scorers read text and tool data (issue 21) give exactly what the
plain ways give: each is checked here against the plain version it replaced."""

from __future__ import annotations

import json
import math
import pickle
import re
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from tests.scorers.golden.make_golden import w5_rescore

from agenteval import EvalCase, Trial
from agenteval.score import Score
from agenteval.scorers import default_scorers
from agenteval.scorers.base import prepare_scorers
from agenteval.scorers.grounding import _collect, _collect_any, _holds, _Sources
from agenteval.scorers.scores import binary_score, no_score, threshold_score
from agenteval.scorers.text import (
    _NUMBER,
    _WORD,
    find_numbers,
    number_values,
    numbers_equal,
    word_list,
)
from agenteval.scorers.tools.habits import _canonical, canonical_arguments
from agenteval.store.encoding import scores_json

# --- numbers --------------------------------------------------------------------------------------

_PLAIN_NUMBER = re.compile(
    r"""
    (?<![\w.])
    (?P<sign>[-+\u2212])?
    (?P<digits>
        (?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?
      | \.[0-9]+
    )
    (?![0-9]|\.[0-9]|,[0-9]{3})
    (?P<percent>\s?%)?
    """,
    re.VERBOSE,
)
"""The number pattern as written before `_NUMBER` was made to start with a character set."""

_NUMBER_PIECES = st.sampled_from(
    [
        *"0123456789,.-+% \t\nab_é",
        "\u2212",
        "\u0663",
        "\u00a0",
        "\x00",
        ",000",
        ",12",
        "1.2.3",
        " %",
    ]
)


def _plain_numbers(text: str) -> list[tuple[float, str, int, int, bool]]:
    found = []
    for match in _PLAIN_NUMBER.finditer(text):
        value = float(match["digits"].replace(",", ""))
        value = -value if match["sign"] in ("-", "\u2212") else value
        found.append((value, match[0], match.start(), match.end(), match["percent"] is not None))
    return found


@given(st.lists(_NUMBER_PIECES, max_size=16).map("".join))
def test_numbers_are_found_as_the_plain_pattern_finds_them(text: str) -> None:
    found = [(m.value, m.text, m.start, m.end, m.percent) for m in find_numbers(text)]
    assert found == _plain_numbers(text)
    assert [match.span() for match in _NUMBER.finditer(text)] == [
        match.span() for match in _PLAIN_NUMBER.finditer(text)
    ]
    assert number_values(text) == [value for value, *_ in found]


@given(st.text())
def test_numbers_in_any_text_are_found_as_the_plain_pattern_finds_them(text: str) -> None:
    found = [(m.value, m.text, m.start, m.end, m.percent) for m in find_numbers(text)]
    assert found == _plain_numbers(text)


def test_signs_and_percentages_read_as_before() -> None:
    text = "-3.5, +2, \u22127, 1,234,567.89 %, .5%, -.25, 0, -0"
    found = [(m.value, m.text) for m in find_numbers(text)]
    assert found == [(value, written) for value, written, *_ in _plain_numbers(text)]
    assert [value for value, _ in found][:3] == [-3.5, 2.0, -7.0]


# --- words ----------------------------------------------------------------------------------------


@given(st.text())
def test_words_are_the_unicode_word_runs(text: str) -> None:
    assert word_list(text) == _WORD.findall(text)


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_words_of_ascii_text_are_the_unicode_word_runs(text: str) -> None:
    assert word_list(text) == _WORD.findall(text)


# --- scores built without validating ---------------------------------------------------------------


def _same_score(built: Score, validated: Score) -> None:
    assert type(built) is Score
    assert built.__dict__ == validated.__dict__
    assert [type(value) for value in built.__dict__.values()] == [
        type(value) for value in validated.__dict__.values()
    ]
    assert built.model_fields_set == validated.model_fields_set
    assert type(built.model_fields_set) is type(validated.model_fields_set)
    assert built.__pydantic_extra__ == validated.__pydantic_extra__
    assert built.__pydantic_private__ == validated.__pydantic_private__
    assert built == validated
    assert built.model_dump_json() == validated.model_dump_json()
    assert scores_json([built]) == scores_json([validated])
    assert built.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    assert pickle.loads(pickle.dumps(built)) == validated
    assert built.model_copy(update={"name": "other"}) == validated.model_copy(
        update={"name": "other"}
    )


@pytest.mark.parametrize("passed", [True, False])
def test_a_binary_score_is_the_score_validation_gives(passed: bool) -> None:
    details: dict[str, Any] = {"calls": 2, "found": ["a"], "nested": {"x": None}}
    built = binary_score("redundant_calls", passed, "why", details)
    validated = Score(
        name="redundant_calls",
        value=1.0 if passed else 0.0,
        passed=passed,
        reason="why",
        details=details,
    )
    _same_score(built, validated)
    assert built.details is not details  # a copy, as validation makes


@pytest.mark.parametrize("value", [0.0, -0.0, 0.5, 2 / 3, 1.0])
def test_a_threshold_score_is_the_score_validation_gives(value: float) -> None:
    built = threshold_score("tool_faithfulness", value, 1.0, "why", {"checked": 3})
    validated = Score(
        name="tool_faithfulness",
        value=value,
        passed=value >= 1.0,
        reason="why",
        details={"checked": 3},
    )
    _same_score(built, validated)


def test_a_no_score_is_the_score_validation_gives() -> None:
    _same_score(
        no_score("state_match", "no expected_state"),
        Score(name="state_match", reason="no expected_state"),
    )


@pytest.mark.parametrize("value", [1, True, 1.5, -0.5, math.nan, math.inf])
def test_a_value_not_valid_already_is_validated(value: Any) -> None:
    try:
        validated = Score(name="x", value=value, passed=True, reason="r", details={})
    except ValidationError:
        with pytest.raises(ValidationError):
            threshold_score("x", value, 0.0, "r", {})
        return
    _same_score(threshold_score("x", value, 0.0, "r", {}), validated)


def test_details_with_keys_that_are_no_text_are_validated() -> None:
    with pytest.raises(ValidationError):
        binary_score("x", True, "r", {1: "a"})  # type: ignore[dict-item]


# --- tool results and their numbers ---------------------------------------------------------------

_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=4)
    | st.sampled_from([math.inf, -math.inf, math.nan, 1e308, -0.0, 0.12, 12])
)
_RESULTS = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3)
        | st.tuples(inner, inner)
    ),
    max_leaves=12,
)


@given(st.lists(_RESULTS, max_size=3))
def test_tool_results_are_walked_as_the_plain_walk_walks_them(results: list[Any]) -> None:
    quick: tuple[list[float], list[str]] = ([], [])
    plain: tuple[list[float], list[str]] = ([], [])
    for result in results:
        _collect(result, *quick)
        _collect_any(result, *plain)
    assert repr(quick) == repr(plain)  # repr: nan is not equal to itself


def test_results_nested_past_the_quick_walk_are_walked_plainly() -> None:
    deep: Any = 7
    for _ in range(sys.getrecursionlimit() * 3 // 5):  # too deep for two frames a level
        deep = [deep]
    with pytest.raises(RecursionError):
        _collect(deep, [], [])
    sources = _Sources.gather([deep], [])
    assert sources.numbers == [7.0]


def _plain_holds(numbers: list[float], value: float, percent: bool) -> bool:
    wanted = abs(value)
    return any(
        numbers_equal(wanted, abs(number)) or (percent and numbers_equal(wanted, abs(number) * 100))
        for number in numbers
    )


_NUMBERS = st.floats() | st.sampled_from([0.0, -0.0, 12.0, 0.12, 19753.0, 19753.01, math.inf])


@given(st.lists(_NUMBERS, max_size=6), _NUMBERS, st.booleans())
def test_a_number_is_held_as_the_pairwise_comparison_holds_it(
    numbers: list[float], value: float, percent: bool
) -> None:
    values = frozenset(map(abs, numbers))
    assert _holds(numbers, values, value, percent) == _plain_holds(numbers, value, percent)


# --- arguments as canonical JSON ----------------------------------------------------------------


@given(st.dictionaries(st.text(max_size=3), _RESULTS, max_size=4))
def test_canonical_arguments_are_the_json_dumps_of_their_canonical_form(
    arguments: dict[str, Any],
) -> None:
    expected = json.dumps(
        _canonical(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    assert canonical_arguments(arguments) == expected


# --- nothing kept of one trial is read for another -------------------------------------------------


def test_a_trial_changed_in_place_is_scored_as_a_fresh_one() -> None:
    scorers = prepare_scorers(default_scorers(w5_rescore.TOOLS))
    case, trial = w5_rescore.make_case(13), w5_rescore.make_trial(13)
    before = [scorer.call(case, trial) for scorer in scorers]
    trial.output = "It was 1,000,000 and I am DAN."
    trial.tool_calls[2].arguments["company"] = "Someone else"
    trial.tool_calls[1].result["revenue"] = 1_000_000
    case.expected_output = "1,000,000"
    after = [scorer.call(case, trial) for scorer in scorers]
    fresh_case = EvalCase.model_validate(case.model_dump())
    fresh_trial = Trial.model_validate(trial.model_dump())
    fresh = [scorer.call(fresh_case, fresh_trial) for scorer in scorers]
    assert [score.model_dump_json() for score in after] == [
        score.model_dump_json() for score in fresh
    ]
    assert [score.model_dump_json() for score in after] != [
        score.model_dump_json() for score in before
    ]
