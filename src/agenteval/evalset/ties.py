"""A judge tie is not a fail: `judge_tie`, `apply_tie_rule` and `TieRule`.

**What a tie is.** An LLM criterion asks its judge several samples and scores their mean. When
the samples that gave a verdict split evenly between passing ones (a sample score at or above
the criterion's threshold) and failing ones (below it), the judge has not decided: 2 of 4 say
pass and 2 say fail. That takes at least two samples, and happens with an even `num_samples`,
or an odd one after a sample failed (5 asked, 1 failed, 2 against 2).

**What ADK does.** Its `final_response_match_v2` takes a majority vote of the samples and
resolves a tie as invalid: the case fails.

**What agenteval does.** The criterion gives no score (`score` None, `passed` None) and says so:
`details["tie"]` is True, `details["tie_votes"]` holds the counts and `details["tie_mean"]` the
mean it would have scored. The run counts it as neither passed nor failed; `EvalSummary`
reports it under `ties` and the case as undecided, unless another criterion failed it. Ask an
odd number of samples to avoid ties, or read the samples' reasonings.
"""

from __future__ import annotations

import copy
from statistics import fmean
from typing import TYPE_CHECKING, Any

from agenteval.case import EvalCase
from agenteval.criteria.base import BaseCriterion, CriterionResult
from agenteval.trace import Trial

if TYPE_CHECKING:
    from agenteval.scorers.context import ScoringContext

__all__ = ["TieRule", "apply_tie_rule", "judge_tie", "sample_scores"]


def sample_scores(details: dict[str, Any]) -> list[float]:
    """The scores of the judge samples that gave a verdict, from a result's details."""
    scores = details.get("individual_scores")
    if not isinstance(scores, list):
        samples = details.get("samples")
        scores = (
            [s.get("score") for s in samples if isinstance(s, dict)]
            if isinstance(samples, list)
            else []
        )
    return [float(s) for s in scores if isinstance(s, int | float) and not isinstance(s, bool)]


def judge_tie(scores: list[float], threshold: float) -> tuple[int, int] | None:
    """`(passing, failing)` sample counts when they are equal (a tie), else None."""
    if len(scores) < 2:
        return None
    passing = sum(1 for score in scores if score >= threshold)
    failing = len(scores) - passing
    return (passing, failing) if passing == failing else None


def apply_tie_rule(result: CriterionResult, threshold: float) -> CriterionResult:
    """`result` as it stands, or, when its judge samples tie, the undecided result (no score,
    `details["tie"]`) with a reason that says so."""
    if result.score is None or result.error is not None:
        return result
    scores = sample_scores(result.details)
    tie = judge_tie(scores, threshold)
    if tie is None:
        return result
    passing, failing = tie
    mean = fmean(scores)
    reason = (
        f"judge tie: {passing} of {len(scores)} samples pass and {failing} fail (mean "
        f"{mean:.2f}, threshold {threshold:g}); not counted as a pass or a fail: ask an odd "
        "num_samples, or read the samples' reasonings"
    )
    details = {
        **result.details,
        "tie": True,
        "tie_votes": {"pass": passing, "fail": failing},
        "tie_mean": mean,
        "reason": reason,
    }
    return result.model_copy(
        update={"score": None, "passed": None, "reason": reason, "details": details}
    )


class TieRule(BaseCriterion):
    """An LLM criterion under the tie rule: the same name, config and verdicts, except that a
    tie of its judge samples gives an undecided result instead of a fail."""

    def __init__(self, inner: BaseCriterion) -> None:
        super().__init__(inner.config)
        self.inner = inner
        self.name = inner.name
        self.description = inner.description

    @property
    def reads(self) -> frozenset[str]:
        """What the wrapped criterion reads (`agenteval.scorers.recorded`)."""
        return self.inner.reads

    def validate_config(self) -> list[str]:
        """The wrapped criterion's checks."""
        return self.inner.validate_config()

    def for_run(self, context: ScoringContext) -> BaseCriterion:
        """The wrapped criterion bound to the run, still under the tie rule."""
        bound = copy.copy(self)
        bound.inner = self.inner.for_run(context)
        bound._context = context
        return bound

    async def evaluate(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """The wrapped criterion's result, with a tie made undecided."""
        return apply_tie_rule(await self.inner.evaluate(actual, expected), self.threshold)

    def __repr__(self) -> str:
        return f"TieRule({self.inner!r})"
