"""Criteria made of criteria: `CompositeCriterion` (an AND / OR gate: the minimum or the maximum
of the sub-scores) and `WeightedCriterion` (their weighted mean)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agenteval.case import EvalCase
from agenteval.criteria.base import BaseCriterion, CriterionResult
from agenteval.criteria.config import CriterionConfig
from agenteval.trace import Trial, Usage

if TYPE_CHECKING:
    from agenteval.scorers.context import ScoringContext

__all__ = ["CompositeCriterion", "WeightedCriterion"]


async def _run_all(
    criteria: Sequence[BaseCriterion], actual: Trial, expected: EvalCase
) -> list[CriterionResult]:
    """Every enabled criterion's result, in order; one that raises gives a failure result."""

    async def one(criterion: BaseCriterion) -> CriterionResult:
        try:
            return await criterion.evaluate(actual, expected)
        except Exception as exc:  # a sub-criterion of the user's may raise anything
            return criterion._failure(f"{type(exc).__name__}: {exc}")

    return list(await asyncio.gather(*(one(c) for c in criteria if c.is_enabled)))


def _usage(results: Sequence[CriterionResult]) -> Usage | None:
    usages = [r.token_usage for r in results if r.token_usage is not None]
    if not usages:
        return None
    total = Usage()
    for usage in usages:
        total = total + usage
    return total


def _unscored(results: Sequence[CriterionResult]) -> str | None:
    """Why the combination cannot be scored: the sub-criteria that gave no score, or None."""
    missing = [r for r in results if r.score is None]
    if not missing:
        return None
    return "no score from " + "; ".join(
        f"{r.criterion} ({r.reason or 'no reason'})" for r in missing
    )


def _sub_problems(criteria: Sequence[BaseCriterion]) -> list[str]:
    return [f"{c.name}: {error}" for c in criteria for error in c.validate_config()]


class CompositeCriterion(BaseCriterion):
    """Runs every sub-criterion and combines their scores: `require_all=True` (AND) takes the
    minimum, `False` (OR) the maximum; `config.threshold` applies to the combined score.

    A disabled sub-criterion is left out. When a sub-criterion gives no score (no judge, nothing
    to compare against) the combination has none either, and the reason names it; a
    sub-criterion that fails counts with its 0.0. `details`: `sub_results` (each sub-result
    serialised) and `require_all`.
    """

    name = "composite_criterion"
    description = "Several criteria as one AND / OR gate"

    def __init__(
        self,
        criteria: Sequence[BaseCriterion],
        require_all: bool = True,
        config: CriterionConfig | None = None,
    ) -> None:
        super().__init__(config)
        self.criteria = list(criteria)
        self.require_all = require_all

    @property
    def reads(self) -> frozenset[str]:
        """What its sub-criteria read: one that cannot be scored leaves the gate unscored."""
        return frozenset().union(*(c.reads for c in self.criteria if c.is_enabled))

    def validate_config(self) -> list[str]:
        """The base checks, and every sub-criterion's."""
        errors = super().validate_config()
        if not self.criteria:
            errors.append("no sub-criteria to combine")
        return errors + _sub_problems(self.criteria)

    def for_run(self, context: ScoringContext) -> BaseCriterion:
        """This criterion, and each sub-criterion, with the run's context."""
        bound = super().for_run(context)
        assert isinstance(bound, CompositeCriterion)
        bound.criteria = [c.for_run(context) for c in self.criteria]
        return bound

    async def evaluate(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Run the sub-criteria and take the minimum (AND) or maximum (OR) of their scores."""
        results = await _run_all(self.criteria, actual, expected)
        details: dict[str, Any] = {
            "sub_results": [r.model_dump(mode="json") for r in results],
            "require_all": self.require_all,
        }
        usage = _usage(results)
        gate = "AND (minimum)" if self.require_all else "OR (maximum)"
        if not results:
            return self._result(None, details, usage, reason=f"{gate}: no sub-criteria to run")
        unscored = _unscored(results)
        if unscored is not None:
            return self._result(None, details, usage, reason=f"{gate}: {unscored}")
        pick = min if self.require_all else max
        deciding = pick(results, key=lambda r: r.score or 0.0)
        score = deciding.score or 0.0
        return self._result(
            score,
            details,
            usage,
            reason=f"{gate} of {len(results)} sub-criteria: {deciding.criterion} scored {score:.2f}",
        )


class WeightedCriterion(BaseCriterion):
    """The weighted mean of the sub-scores, `sum(score * weight) / sum(weight)` (weights need
    not sum to 1); `config.threshold` applies to it. No sub-criteria, or a total weight of 0,
    scores 0.0.

    A disabled sub-criterion is left out, with its weight. When a sub-criterion gives no score
    the weighted mean has none either, and the reason names it. `details`: `sub_results` and
    `weights`.
    """

    name = "weighted_criterion"
    description = "Several criteria averaged by importance"

    def __init__(
        self,
        criteria_weights: Sequence[tuple[BaseCriterion, float]],
        config: CriterionConfig | None = None,
    ) -> None:
        super().__init__(config)
        self.criteria_weights = [
            (criterion, float(weight)) for criterion, weight in criteria_weights
        ]

    @property
    def reads(self) -> frozenset[str]:
        """What its sub-criteria read: one that cannot be scored leaves the mean unscored."""
        return frozenset().union(*(c.reads for c, _ in self.criteria_weights if c.is_enabled))

    def validate_config(self) -> list[str]:
        """The base checks, weights that are not negative, and every sub-criterion's."""
        errors = super().validate_config()
        errors.extend(
            f"{criterion.name} has a negative weight ({weight})"
            for criterion, weight in self.criteria_weights
            if weight < 0
        )
        return errors + _sub_problems([c for c, _ in self.criteria_weights])

    def for_run(self, context: ScoringContext) -> BaseCriterion:
        """This criterion, and each sub-criterion, with the run's context."""
        bound = super().for_run(context)
        assert isinstance(bound, WeightedCriterion)
        bound.criteria_weights = [(c.for_run(context), w) for c, w in self.criteria_weights]
        return bound

    async def evaluate(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Run the sub-criteria and average their scores by weight."""
        enabled = [(c, w) for c, w in self.criteria_weights if c.is_enabled]
        results = await _run_all([c for c, _ in enabled], actual, expected)
        weights = [w for _, w in enabled]
        details: dict[str, Any] = {
            "sub_results": [r.model_dump(mode="json") for r in results],
            "weights": weights,
        }
        usage = _usage(results)
        total = sum(weights)
        if not results or total == 0:
            return self._result(0.0, details, usage, reason="no weighted criteria (total weight 0)")
        unscored = _unscored(results)
        if unscored is not None:
            return self._result(None, details, usage, reason=unscored)
        pairs = list(zip(results, weights, strict=True))
        score = sum((r.score or 0.0) * w for r, w in pairs) / total
        parts = ", ".join(f"{r.criterion} {r.score or 0.0:.2f}×{w:g}" for r, w in pairs)
        return self._result(score, details, usage, reason=f"weighted mean of {parts}")
