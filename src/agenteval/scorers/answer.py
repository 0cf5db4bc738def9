"""Whether the answer is the expected one: `ExactMatch`; and the rule every answer and tool
scorer applies to a trial that failed (`not_judged`, `no_answer_reason`).

For open-ended answers, where wording varies, use the LLM judge's correctness rubric instead.

A trial that failed for an infrastructure reason (timeout, rate limit, provider or connection
error: `Trial.responded` is False) was never the agent's choice, so no built-in scorer judges it:
each gives no score, with the cause. A trial the agent itself failed (`agent_error`,
`no_response`, `invalid_output`) is judged like any other: no answer scores 0 here, and the tool
scorers judge the calls it made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from agenteval.case import EvalCase
from agenteval.score import Score
from agenteval.scorers.redacted import undecidable
from agenteval.scorers.scores import binary_score, no_score
from agenteval.scorers.text import (
    excerpt,
    normalise,
    number_matches,
    number_value,
    numbers_equal,
)
from agenteval.trace import Trial

__all__ = ["ExactMatch", "answers_match", "failure_text", "no_answer_reason", "not_judged"]


@dataclass(frozen=True)
class ExactMatch:
    """The answer equals the case's `expected_output`, forgiving case, accents, whitespace and
    one final period (see `answers_match`).

    Applies when the case has a non-blank `expected_output`. Not judged when the trial failed for
    an infrastructure reason (see `not_judged`), nor in a rescore when the stored answer or
    expected answer holds a masked secret (`scorers.redacted`: the rescore keeps the stored
    verdict). A trial that gave no answer otherwise (the agent
    failed, or answered nothing) scores 0. Binary: 1.0 or 0.0. `details` quote the first 200
    characters of the expected and given answers, with the answer's length.
    """

    name: str = "exact_match"
    threshold: float = 1.0
    reads: ClassVar[frozenset[str]] = frozenset({"output"})
    """The trial fields it reads (`scorers.recorded`)."""

    def declines(self, case: EvalCase) -> str | None:
        """Why it does not apply to `case`, whatever the trial did (`scorers.recorded`)."""
        if case.expected_output is None:
            return "no expected_output in the case"
        if not case.expected_output.strip():
            return "the case's expected_output is blank"
        return None

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        declined = self.declines(case)
        if declined is not None:
            return no_score(self.name, declined)
        expected = case.expected_output or ""
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        answer = trial.output or ""
        # Excerpts: the trial already holds the answer, and a 10 MB answer stored twice is 20.
        details: dict[str, Any] = {
            "expected": excerpt(expected),
            "answer": None if trial.output is None else excerpt(answer),
            "answer_chars": len(answer),
        }
        if not answer.strip():
            return binary_score(self.name, False, no_answer_reason(trial), details)
        # A rescore reads masked secrets: `sk-proj-[REDACTED]` matches whatever key it was.
        unsure = undecidable(self.name, answer, expected)
        if unsure is not None:
            return unsure
        how = answers_match(answer, expected)
        details["compared"] = how or "text"
        if how is None:
            reason = f"expected {_quote(expected)}, got {_quote(answer)}"
            return binary_score(self.name, False, reason, details)
        reason = (
            f"matches the expected {_quote(expected)}"
            if how == "text"
            else f"{_quote(answer)} equals the expected {_quote(expected)} by value"
        )
        return binary_score(self.name, True, reason, details)


def answers_match(answer: str, expected: str) -> str | None:
    """How `answer` matches `expected`: `"text"`, `"number"`, or None when it does not.

    - `"text"`: equal after `normalise` (case, accents, whitespace runs, one final period).
    - `"number"`: both are the same text around exactly one number each (`19,753` and
      `19753.0`; `$19,753` and `$19753.00`; `12%` and `12.0 %`), and the numbers are equal
      within 0.01. The text around the number must match, so `"The answer is 19,753"` does not
      match `"19,753"`, nor does `"19,753 km"`, nor `"12%"` match `"12"`.
    """
    left, right = normalise(answer), normalise(expected)
    if left == right:
        return "text"
    left_parts, right_parts = _around_number(left), _around_number(right)
    if left_parts is None or right_parts is None:
        return None
    (left_before, left_value, left_percent, left_after) = left_parts
    (right_before, right_value, right_percent, right_after) = right_parts
    if (
        left_before == right_before
        and left_after == right_after
        and left_percent == right_percent
        and numbers_equal(left_value, right_value)
    ):
        return "number"
    return None


def _around_number(text: str) -> tuple[str, float, bool, str] | None:
    # The text before and after the one number in `text`, with the spaces next to it dropped,
    # and the number's value and whether it is a percentage (what `find_numbers` reads, up to a
    # second number, and without making a `NumberMention`: `answers_match` 9.5 -> 5.9 us on a W5
    # answer, with `folded`).
    found = number_matches(text)
    number = next(found, None)
    if number is None or next(found, None) is not None:
        return None
    before, after = text[: number.start()].rstrip(), text[number.end() :].lstrip()
    return before, number_value(number), number["percent"] is not None, after


def not_judged(name: str, trial: Trial) -> Score | None:
    """The no-score every answer and tool scorer gives a trial that failed for an infrastructure
    reason, or None when the trial is to be judged (`Trial.responded`).

    The reason names the cause: `"not judged: the trial failed for an infrastructure reason
    (timeout: ran past 30s)"`.
    """
    if trial.failure is None or trial.responded:  # the usual trial, without the property
        return None
    return Score(
        name=name,
        reason=f"not judged: the trial failed for an infrastructure reason ({failure_text(trial)})",
    )


def no_answer_reason(trial: Trial) -> str:
    """Why a trial has no answer, for a score's reason: its failure's cause and message if any,
    as in `"the trial gave no answer (agent_error: boom)"`."""
    if trial.failure is None:
        return "the trial gave no answer"
    return f"the trial gave no answer ({failure_text(trial)})"


def failure_text(trial: Trial) -> str:
    """A trial's failure as `cause: message` (just the cause when there is no message), or an
    empty string when it did not fail."""
    if trial.failure is None:
        return ""
    text = trial.failure.cause.value
    if trial.failure.message:
        text += f": {_shorten(trial.failure.message)}"
    return text


def _quote(text: str) -> str:
    return repr(_shorten(text.strip()))


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
