"""Criteria over the text of the final response, with no LLM call: `ExactMatchCriterion`,
`ContainsKeywordsCriterion` and `RougeMatchCriterion` (with `rouge1`, the ROUGE-1 it scores)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from agenteval.case import EvalCase
from agenteval.criteria.base import CriterionResult, SyncCriterion
from agenteval.criteria.config import CriterionConfig
from agenteval.criteria.expected import expected_final_response
from agenteval.scorers.answer import no_answer_reason
from agenteval.scorers.redacted import holds_redacted, undecided
from agenteval.trace import Trial

__all__ = [
    "ContainsKeywordsCriterion",
    "ExactMatchCriterion",
    "Rouge1",
    "RougeMatchCriterion",
    "rouge1",
    "unigrams",
]

_SHOWN_CHARS = 500
"""How much of each response ROUGE details keep."""


def _undecidable(criterion: SyncCriterion) -> CriterionResult:
    """No score: a rescore compared text holding a masked secret (`scorers.redacted`), which
    may read the same for different values; the rescore keeps the stored verdict."""
    score = undecided(criterion.name)
    return criterion._result(None, dict(score.details), reason=score.reason)


def _quote(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


class ExactMatchCriterion(SyncCriterion):
    """The response, stripped, is exactly the last non-empty expected final response, stripped:
    byte for byte, case and punctuation included. 1.0 or 0.0, no partial credit.

    No score when the case has no expected response, nor in a rescore comparing a masked secret
    (`scorers.redacted`). (For answers that may be worded
    differently, use `ResponseMatchCriterion`; agenteval's `exact_match` scorer forgives case,
    accents and number formatting.)
    """

    name = "exact_match"
    description = "The response is byte-for-byte the expected response"

    def evaluate_sync(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Compare the stripped response with the stripped expected response."""
        want = expected_final_response(expected)
        got = actual.actual_response.strip()
        if want is None:
            return self._result(
                None,
                {"match": None, "expected": None, "actual": got[:_SHOWN_CHARS]},
                reason="no expected final response in the case",
            )
        if got and holds_redacted(got, want):
            return _undecidable(self)
        match = got == want.strip()
        # Excerpts: the trial holds the whole response, and details are stored with every score.
        details = {
            "match": match,
            "expected": want.strip()[:_SHOWN_CHARS],
            "actual": got[:_SHOWN_CHARS],
        }
        if match:
            reason = "the response is exactly the expected response"
        elif not got:
            reason = no_answer_reason(actual)
        else:
            reason = f"expected {_quote(want.strip())}, got {_quote(got)}"
        return self._result(1.0 if match else 0.0, details, reason=reason)


class ContainsKeywordsCriterion(SyncCriterion):
    """The share of the keywords found in the response (case-insensitive substrings).

    The keywords are `config.keywords` when it has any, else the `keywords` argument, else the
    case's own `keywords`. With none from any of them the score is 1.0, with
    `details["note"] == "No keywords specified"`.
    """

    name = "contains_keywords"
    description = "Specific words appear in the response"

    def __init__(
        self, keywords: Sequence[str] | None = None, config: CriterionConfig | None = None
    ) -> None:
        super().__init__(config)
        self.keywords = list(keywords or [])

    def validate_config(self) -> list[str]:
        """The base checks, and no blank keyword."""
        errors = super().validate_config()
        if any(not keyword.strip() for keyword in [*self.config.keywords, *self.keywords]):
            errors.append("a keyword is blank (it would be found in every response)")
        return errors

    def keywords_for(self, case: EvalCase) -> list[str]:
        """The keywords looked for in this case's response."""
        return list(self.config.keywords or self.keywords or case.keywords or [])

    def evaluate_sync(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Count the keywords found in the response."""
        keywords = self.keywords_for(expected)
        if not keywords:
            return self._result(
                1.0, {"note": "No keywords specified"}, reason="no keywords specified"
            )
        if holds_redacted(actual.actual_response, *keywords):
            return _undecidable(self)
        response = actual.actual_response.casefold()
        found = [keyword for keyword in keywords if keyword.casefold() in response]
        missing = [keyword for keyword in keywords if keyword.casefold() not in response]
        details = {"keywords": keywords, "found": found, "missing": missing}
        if not missing:
            reason = f"all {len(keywords)} keywords found"
        else:
            reason = f"{len(found)} of {len(keywords)} keywords found; missing: " + ", ".join(
                map(repr, missing)
            )
        return self._result(len(found) / len(keywords), details, reason=reason)


# --- ROUGE-1 -------------------------------------------------------------------------------------


def unigrams(text: str) -> set[str]:
    """The set of words of `text`, lowercased, with every punctuation character (Unicode
    category P: `.`, `'`, `-`, `«`, ...) removed: `"Don't stop."` gives `{"dont", "stop"}`."""
    kept = "".join(char for char in text.lower() if not unicodedata.category(char).startswith("P"))
    return set(kept.split())


@dataclass(frozen=True)
class Rouge1:
    """ROUGE-1 over unigram sets: precision, recall and their F1."""

    precision: float
    recall: float
    f1: float


def rouge1(candidate: str, reference: str) -> Rouge1:
    """ROUGE-1 of `candidate` against `reference`, over lowercased, punctuation-stripped unigram
    sets. Two texts without words match fully; one without words matches nothing."""
    got, want = unigrams(candidate), unigrams(reference)
    if not got and not want:
        return Rouge1(1.0, 1.0, 1.0)
    overlap = len(got & want)
    precision = overlap / len(got) if got else 0.0
    recall = overlap / len(want) if want else 0.0
    f1 = 2 * precision * recall / (precision + recall) if overlap else 0.0
    return Rouge1(precision, recall, f1)


class RougeMatchCriterion(SyncCriterion):
    """ROUGE-1 F1 between the response and the expected final response; no LLM call.

    `details` holds `precision`, `recall`, `f1`, and the first 500 characters of each response
    (`expected_response`, `actual_response`). When the case has no expected response the score
    is 1.0 if the agent said nothing either, else 0.5.
    """

    name = "rouge_match"
    description = "Word overlap with the expected response (ROUGE-1 F1)"

    def evaluate_sync(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Score the word overlap."""
        want = expected_final_response(expected)
        got = actual.actual_response
        if want is None:
            said_nothing = not got.strip()
            return self._result(
                1.0 if said_nothing else 0.5,
                {"note": "No expected response", "actual_response": got[:_SHOWN_CHARS]},
                reason="no expected response, and "
                + ("no response either" if said_nothing else "the agent responded"),
            )
        if holds_redacted(got, want):
            return _undecidable(self)
        rouge = rouge1(got, want)
        details = {
            "precision": rouge.precision,
            "recall": rouge.recall,
            "f1": rouge.f1,
            "expected_response": want[:_SHOWN_CHARS],
            "actual_response": got[:_SHOWN_CHARS],
        }
        reason = f"ROUGE-1 F1 {rouge.f1:.2f} (precision {rouge.precision:.2f}, recall {rouge.recall:.2f})"
        return self._result(rouge.f1, details, reason=reason)
