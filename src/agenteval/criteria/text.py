"""Criteria over the text of the final response, with no LLM call: `ExactMatchCriterion`,
`ContainsKeywordsCriterion` and `RougeMatchCriterion` (with `rouge1`, the ROUGE-1 it scores).

In a conversation, `exact_match` and `rouge_match` score each turn that has an expected final
response against that turn's answer, and average them: a turn whose reference is null or empty
is not scored (ADK scores it as a 0 and fails a perfect agent), and with no reference in any
turn there is no score.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import ClassVar

from agenteval.case import EvalCase
from agenteval.criteria.base import CriterionResult, SyncCriterion
from agenteval.criteria.config import CriterionConfig
from agenteval.criteria.expected import expected_turn_responses
from agenteval.scorers.answer import no_answer_reason
from agenteval.scorers.redacted import holds_redacted, undecided
from agenteval.trace import Trial

__all__ = [
    "ContainsKeywordsCriterion",
    "ExactMatchCriterion",
    "Rouge1",
    "RougeMatchCriterion",
    "TurnToScore",
    "rouge1",
    "turns_to_score",
    "unigrams",
]

_SHOWN_CHARS = 500
"""How much of each response ROUGE details keep."""


def _undecidable(criterion: SyncCriterion) -> CriterionResult:
    """No score: a rescore compared text holding a masked secret (`scorers.redacted`), which
    may read the same for different values; the rescore keeps the stored verdict."""
    score = undecided(criterion.name)
    return criterion._result(None, dict(score.details), reason=score.reason)


_NO_REFERENCE = "no expected final response in the case"


@dataclass(frozen=True)
class TurnToScore:
    """One turn a response criterion scores: its index, the expected final response and what
    the agent answered in that turn."""

    index: int
    want: str
    got: str
    own: bool = True
    """`got` is the answer of turn `index` itself; False when the trial could not be split into
    the case's turns and `got` is its last answer (a case-level expected response, a trace
    recorded elsewhere)."""

    @property
    def upto(self) -> int | None:
        """The user messages up to the judged answer (None: the whole conversation)."""
        return self.index + 1 if self.own else None


def turns_to_score(actual: Trial, expected: EvalCase) -> list[TurnToScore] | str:
    """The turns with an expected final response, each with that turn's answer; or why none
    can be scored.

    The answers of every turn come from the trial's `turn_outputs` (the engine records them for
    every conversation it plays; with a simulated user after the written turns, their answers
    are the first ones). A trial that cannot be split into the case's turns (a trace
    recorded elsewhere) has one answer, its last, scored against the last reference.
    """
    references = expected_turn_responses(expected)
    if not references:
        return _NO_REFERENCE
    count = len(expected.conversation or []) or 1
    outputs = actual.metadata.get("turn_outputs") if count > 1 else None
    if actual.simulation is not None and expected.conversation:
        # A simulated user spoke after the written turns: those are the first answers.
        outputs = actual.metadata.get("turn_outputs")
        outputs = outputs[:count] if isinstance(outputs, list) else None
    if isinstance(outputs, list) and len(outputs) == count:
        return [
            TurnToScore(index, want, answer if isinstance(answer := outputs[index], str) else "")
            for index, want in references
        ]
    index, want = references[-1]
    return [TurnToScore(index, want, actual.actual_response, own=False)]


def _quote(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


class ExactMatchCriterion(SyncCriterion):
    """The response, stripped, is exactly the expected final response, stripped: byte for
    byte, case and punctuation included. 1.0 or 0.0 for a turn; in a conversation, the share of
    the turns with an expected response whose answer matches (`details["turns"]`).

    No score when no turn has an expected response, nor in a rescore comparing a masked secret
    (`scorers.redacted`). (For answers that may be worded
    differently, use `ResponseMatchCriterion`; agenteval's `exact_match` scorer forgives case,
    accents and number formatting.)
    """

    name = "exact_match"
    description = "The response is byte-for-byte the expected response"
    reads: ClassVar[frozenset[str]] = frozenset({"output"})
    """The trial fields it reads (`agenteval.scorers.recorded`)."""

    def evaluate_sync(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Compare each stripped answer with its turn's stripped expected response."""
        turns = turns_to_score(actual, expected)
        got = actual.actual_response.strip()
        if isinstance(turns, str):
            return self._result(
                None,
                {"match": None, "expected": None, "actual": got[:_SHOWN_CHARS]},
                reason=turns,
            )
        if any(turn.got.strip() and holds_redacted(turn.got, turn.want) for turn in turns):
            return _undecidable(self)
        matches = [turn.got.strip() == turn.want.strip() for turn in turns]
        last = turns[-1]
        # Excerpts: the trial holds the whole response, and details are stored with every score.
        details: dict[str, object] = {
            "match": all(matches),
            "expected": last.want.strip()[:_SHOWN_CHARS],
            "actual": last.got.strip()[:_SHOWN_CHARS],
        }
        if len(turns) > 1:
            details["turns"] = [
                {"turn": turn.index + 1, "match": match}
                for turn, match in zip(turns, matches, strict=True)
            ]
            missed = [
                turn.index + 1 for turn, match in zip(turns, matches, strict=True) if not match
            ]
            reason = (
                f"all {len(turns)} turns with an expected response match"
                if not missed
                else f"{len(turns) - len(missed)} of {len(turns)} turns with an expected response "
                "match; not turn " + ", ".join(map(str, missed))
            )
        elif matches[0]:
            reason = "the response is exactly the expected response"
        elif not last.got.strip():
            reason = no_answer_reason(actual)
        else:
            reason = f"expected {_quote(last.want.strip())}, got {_quote(last.got.strip())}"
        return self._result(sum(matches) / len(matches), details, reason=reason)


class ContainsKeywordsCriterion(SyncCriterion):
    """The share of the keywords found in the response (case-insensitive substrings).

    The keywords are `config.keywords` when it has any, else the `keywords` argument, else the
    case's own `keywords`. With none from any of them the score is 1.0, with
    `details["note"] == "No keywords specified"`.
    """

    name = "contains_keywords"
    description = "Specific words appear in the response"
    reads: ClassVar[frozenset[str]] = frozenset({"output"})
    """The trial fields it reads (`agenteval.scorers.recorded`)."""

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
    (`expected_response`, `actual_response`). In a conversation, each turn with an expected
    response is scored against that turn's answer and the scores are averaged (`details["turns"]`
    has each). No score when no turn has an expected response.
    """

    name = "rouge_match"
    description = "Word overlap with the expected response (ROUGE-1 F1)"
    reads: ClassVar[frozenset[str]] = frozenset({"output"})
    """The trial fields it reads (`agenteval.scorers.recorded`)."""

    def evaluate_sync(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Score the word overlap, turn by turn."""
        turns = turns_to_score(actual, expected)
        if isinstance(turns, str):
            note = turns
            details = {"note": note, "actual_response": actual.actual_response[:_SHOWN_CHARS]}
            return self._result(None, details, reason=note)
        if any(holds_redacted(turn.got, turn.want) for turn in turns):
            return _undecidable(self)
        scores = [rouge1(turn.got, turn.want) for turn in turns]
        last = turns[-1]
        f1 = fmean(rouge.f1 for rouge in scores)
        precision = fmean(rouge.precision for rouge in scores)
        recall = fmean(rouge.recall for rouge in scores)
        shown: dict[str, object] = {
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "expected_response": last.want[:_SHOWN_CHARS],
            "actual_response": last.got[:_SHOWN_CHARS],
        }
        reason = f"ROUGE-1 F1 {f1:.2f} (precision {precision:.2f}, recall {recall:.2f})"
        if len(turns) > 1:
            shown["turns"] = [
                {"turn": turn.index + 1, "f1": rouge.f1}
                for turn, rouge in zip(turns, scores, strict=True)
            ]
            reason += f", the mean over the {len(turns)} turns with an expected response"
        return self._result(f1, shown, reason=reason)
