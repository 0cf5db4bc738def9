"""exact_match: the answer equals the expected one, forgiving what a reader would forgive."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenteval.case import EvalCase
from agenteval.scorers.answer import ExactMatch, answers_match
from agenteval.trace import Failure, FailureCause, Trial

exact_match = ExactMatch()


def case(expected: str | None) -> EvalCase:
    return EvalCase(input="What is the population of Springfield?", expected_output=expected)


def answered(output: str | None) -> Trial:
    return Trial(output=output)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Paris", "Paris"),
        ("paris", "Paris"),
        ("  Paris  ", "Paris"),
        ("Paris.", "Paris"),
        ("Paris", "Paris."),
        ("Sao Paulo", "São Paulo"),
        ("19,753", "19753"),
        ("19753.0", "19,753"),
        ("19753.004", "19753"),
        ("-3.5", "-3.50"),
        ("1,234,567.89", "1234567.89"),
        ("$19,753", "$19753.00"),
        ("19,753 km", "19753 KM"),
        ("12%", "12.0 %"),
    ],
)
def test_matches(answer: str, expected: str) -> None:
    score = exact_match(case(expected), answered(answer))
    assert (score.value, score.passed) == (1.0, True)
    assert score.name == "exact_match"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Lyon", "Paris"),
        ("Paris..", "Paris"),
        ("The answer is 19,753", "19,753"),
        ("19,753 km", "19,753"),
        ("19,700", "19,753"),
        ("19753.02", "19753"),
        ("12", "12%"),
        ("-3.5", "3.5"),
        ("Paris, France", "Paris"),
        ("3 and 4", "3 and 5"),
    ],
)
def test_does_not_match(answer: str, expected: str) -> None:
    score = exact_match(case(expected), answered(answer))
    assert (score.value, score.passed) == (0.0, False)


def test_a_mismatch_says_what_was_expected_and_what_came() -> None:
    score = exact_match(case("19,753"), answered("19,700"))
    assert score.reason == "expected '19,753', got '19,700'"
    assert score.details["expected"] == "19,753"
    assert score.details["answer"] == "19,700"


def test_a_match_by_value_says_so() -> None:
    score = exact_match(case("19,753"), answered("19753.0"))
    assert score.details["compared"] == "number"
    assert score.reason is not None
    assert "by value" in score.reason


def test_does_not_apply_without_an_expected_output() -> None:
    score = exact_match(case(None), answered("Paris"))
    assert score.value is None
    assert score.passed is None
    assert score.reason == "no expected_output in the case"


def test_does_not_apply_with_a_blank_expected_output() -> None:
    score = exact_match(case("  "), answered("Paris"))
    assert score.value is None
    assert score.reason is not None


def test_a_number_read_from_yaml_is_compared_by_value() -> None:
    # YAML reads `expected_output: 19753` as a number; the case keeps it as text.
    yaml_case = EvalCase.model_validate({"input": "?", "expected_output": 19753})
    score = exact_match(yaml_case, answered("19,753"))
    assert score.passed is True


@pytest.mark.parametrize("output", [None, "", "   "])
def test_no_answer_scores_zero(output: str | None) -> None:
    score = exact_match(case("Paris"), answered(output))
    assert (score.value, score.passed) == (0.0, False)
    assert score.reason == "the trial gave no answer"


@pytest.mark.parametrize(
    "cause",
    [FailureCause.AGENT_ERROR, FailureCause.NO_RESPONSE, FailureCause.INVALID_OUTPUT],
)
def test_no_answer_through_the_agents_fault_scores_zero_with_the_cause(
    cause: FailureCause,
) -> None:
    trial = Trial(failure=Failure(cause=cause, message="boom"))
    score = exact_match(case("Paris"), trial)
    assert (score.value, score.passed) == (0.0, False)
    assert score.reason == f"the trial gave no answer ({cause.value}: boom)"


@pytest.mark.parametrize(
    "cause",
    [
        FailureCause.TIMEOUT,
        FailureCause.RATE_LIMITED,
        FailureCause.PROVIDER_ERROR,
        FailureCause.CONNECTION_ERROR,
    ],
)
def test_an_infrastructure_failure_is_not_judged(cause: FailureCause) -> None:
    # A timeout is not the agent's wrong answer: no score, rather than a misleading 0.
    trial = Trial(failure=Failure(cause=cause, message="ran past 30s"))
    score = exact_match(case("Paris"), trial)
    assert (score.value, score.passed) == (None, None)
    assert score.reason == (
        f"not judged: the trial failed for an infrastructure reason ({cause.value}: ran past 30s)"
    )


def test_an_infrastructure_failure_is_not_judged_even_with_a_partial_answer() -> None:
    trial = Trial(output="Paris", failure=Failure(cause=FailureCause.TIMEOUT))
    score = exact_match(case("Paris"), trial)
    assert score.value is None
    assert score.reason == "not judged: the trial failed for an infrastructure reason (timeout)"


def test_a_wrong_answer_before_the_agent_crashed_is_judged() -> None:
    trial = Trial(output="Lyon", failure=Failure(cause=FailureCause.AGENT_ERROR, message="boom"))
    score = exact_match(case("Paris"), trial)
    assert (score.value, score.reason) == (0.0, "expected 'Paris', got 'Lyon'")


def test_details_are_json() -> None:
    score = exact_match(case("Paris"), answered("Lyon"))
    json.dumps(score.details)


def test_answers_match_names_how() -> None:
    assert answers_match("PARIS.", "paris") == "text"
    assert answers_match("19,753", "19753.0") == "number"
    assert answers_match("19,700", "19,753") is None


@given(st.text().filter(lambda text: text.strip() != ""))
def test_any_non_blank_answer_matches_itself(text: str) -> None:
    score = exact_match(case(text), answered(text))
    assert score.passed is True


@given(st.floats(min_value=-1e9, max_value=1e9, allow_nan=False))
def test_a_number_matches_however_it_is_formatted(number: float) -> None:
    score = exact_match(case(f"{number:,.2f}"), answered(f"{number:.3f}"))
    assert score.passed is True
