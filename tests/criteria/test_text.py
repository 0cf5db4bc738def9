"""ExactMatchCriterion, ContainsKeywordsCriterion and RougeMatchCriterion."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenteval import (
    ContainsKeywordsCriterion,
    CriterionConfig,
    EvalCase,
    ExactMatchCriterion,
    ExecutionResult,
    Failure,
    FailureCause,
    Invocation,
    RougeMatchCriterion,
)
from agenteval.criteria.text import rouge1, unigrams


def case(*responses: str | None, **fields: object) -> EvalCase:
    return EvalCase(
        conversation=[Invocation(expected_final_response=r) for r in responses] or None,
        input=None if responses else "q",
        **fields,  # type: ignore[arg-type]
    )


def said(text: str) -> ExecutionResult:
    return ExecutionResult(actual_response=text)


# --- exact_match ---------------------------------------------------------------------------------


async def test_exact_match_compares_stripped_text_byte_for_byte() -> None:
    criterion = ExactMatchCriterion()
    result = await criterion.evaluate(said("  Paris\n"), case("Paris"))
    assert (result.criterion, result.score, result.passed) == ("exact_match", 1.0, True)
    assert result.details["match"] is True
    for other in ("paris", "Paris.", "The capital is Paris"):
        result = await criterion.evaluate(said(other), case("Paris"))
        assert (result.score, result.details["match"]) == (0.0, False), other


async def test_exact_match_uses_the_last_non_empty_expected_response() -> None:
    criterion = ExactMatchCriterion()
    expected = case("Hello", "Goodbye", "", None)
    assert (await criterion.evaluate(said("Goodbye"), expected)).score == 1.0
    assert (await criterion.evaluate(said("Hello"), expected)).score == 0.0


async def test_exact_match_falls_back_on_expected_output() -> None:
    expected = EvalCase(input="q", expected_output="19,753")
    assert (await ExactMatchCriterion().evaluate(said("19,753"), expected)).score == 1.0


async def test_exact_match_without_an_expected_response_gives_no_score() -> None:
    result = await ExactMatchCriterion().evaluate(said("anything"), case())
    assert (result.score, result.passed) == (None, None)
    assert result.reason == "no expected final response in the case"


async def test_exact_match_names_the_failure_of_a_trial_without_an_answer() -> None:
    trial = ExecutionResult(failure=Failure(cause=FailureCause.AGENT_ERROR, message="boom"))
    result = await ExactMatchCriterion().evaluate(trial, case("Paris"))
    assert result.score == 0.0
    assert result.reason == "the trial gave no answer (agent_error: boom)"


# --- contains_keywords ---------------------------------------------------------------------------


async def test_keywords_score_the_share_found_case_insensitively() -> None:
    criterion = ContainsKeywordsCriterion(keywords=["Refund", "7 days", "receipt"])
    result = await criterion.evaluate(said("Your REFUND arrives in 7 days."), case("x"))
    assert result.score == pytest.approx(2 / 3)
    assert result.details == {
        "keywords": ["Refund", "7 days", "receipt"],
        "found": ["Refund", "7 days"],
        "missing": ["receipt"],
    }


async def test_config_keywords_take_precedence_over_the_argument() -> None:
    criterion = ContainsKeywordsCriterion(
        keywords=["absent"], config=CriterionConfig.contains_keywords(keywords=["refund"])
    )
    assert (await criterion.evaluate(said("refund"), case("x"))).score == 1.0


async def test_the_case_keywords_are_used_when_no_other_keywords_are_given() -> None:
    criterion = ContainsKeywordsCriterion()
    expected = EvalCase(input="q", keywords=["refund", "policy"])
    assert (await criterion.evaluate(said("refund"), expected)).score == 0.5


async def test_no_keywords_scores_one_with_a_note() -> None:
    result = await ContainsKeywordsCriterion().evaluate(said("anything"), case("x"))
    assert result.score == 1.0
    assert result.details == {"note": "No keywords specified"}


def test_a_blank_keyword_is_a_config_error() -> None:
    assert ContainsKeywordsCriterion(keywords=[" "]).validate_config()
    assert ContainsKeywordsCriterion(keywords=["a"]).validate_config() == []


# --- rouge_match ---------------------------------------------------------------------------------


def test_unigrams_are_lowercased_punctuation_stripped_sets() -> None:
    assert unigrams("Don't STOP, stop!  «now»") == {"dont", "stop", "now"}


def test_rouge1_is_the_f1_of_unigram_set_overlap() -> None:
    rouge = rouge1("the cat sat", "the cat sat on the mat")
    # Sets: {the, cat, sat} against {the, cat, sat, on, mat}.
    assert rouge.precision == 1.0
    assert rouge.recall == pytest.approx(3 / 5)
    assert rouge.f1 == pytest.approx(2 * 1.0 * 0.6 / 1.6)
    assert rouge1("", "") == rouge1("...", "!")
    assert rouge1("", "word").f1 == 0.0


@given(st.text(max_size=40), st.text(max_size=40))
def test_rouge1_is_symmetric_in_f1_and_bounded(a: str, b: str) -> None:
    forward, backward = rouge1(a, b), rouge1(b, a)
    assert forward.f1 == pytest.approx(backward.f1)
    assert 0.0 <= forward.f1 <= 1.0
    assert rouge1(a, a).f1 == 1.0


async def test_rouge_match_details_keep_scores_and_the_first_500_characters() -> None:
    long = "word " * 200
    result = await RougeMatchCriterion().evaluate(said(long), case("word"))
    assert result.criterion == "rouge_match"
    assert result.score == 1.0
    assert set(result.details) == {
        "precision",
        "recall",
        "f1",
        "expected_response",
        "actual_response",
    }
    assert len(result.details["actual_response"]) == 500


async def test_rouge_match_with_no_expected_response_gives_no_score() -> None:
    """Nothing to compare with is no evidence either way (it was 1.0 or 0.5)."""
    criterion = RougeMatchCriterion()
    for answer in ("", "  ", "something"):
        result = await criterion.evaluate(said(answer), case())
        assert (result.score, result.passed) == (None, None)
        assert result.reason == "no expected final response in the case"
