"""CompositeCriterion (AND = minimum, OR = maximum) and WeightedCriterion (weighted mean)."""

from __future__ import annotations

from typing import Any

import pytest

from agenteval import (
    CompositeCriterion,
    CriterionConfig,
    CriterionResult,
    EvalCase,
    ExecutionResult,
    SyncCriterion,
    WeightedCriterion,
)
from agenteval.trace import Usage

CASE = EvalCase(input="q")
TRIAL = ExecutionResult(actual_response="a")


class Fixed(SyncCriterion):
    """Scores a fixed value."""

    def __init__(
        self,
        name: str,
        score: float | None,
        enabled: bool = True,
        tokens: int = 0,
    ) -> None:
        super().__init__(CriterionConfig(enabled=enabled))
        self.name = name
        self.value = score
        self.tokens = tokens

    def evaluate_sync(self, actual: Any, expected: Any) -> CriterionResult:
        usage = Usage(input_tokens=self.tokens) if self.tokens else None
        return self._result(self.value, {}, usage, reason="fixed")


class Broken(SyncCriterion):
    name = "broken"

    def evaluate_sync(self, actual: Any, expected: Any) -> CriterionResult:
        raise RuntimeError("oops")


@pytest.mark.parametrize(("require_all", "score"), [(True, 0.25), (False, 0.75)])
async def test_and_is_the_minimum_or_the_maximum(require_all: bool, score: float) -> None:
    criterion = CompositeCriterion(
        criteria=[Fixed("a", 0.75, tokens=5), Fixed("b", 0.25, tokens=7)],
        require_all=require_all,
        config=CriterionConfig(threshold=0.5),
    )
    result = await criterion.evaluate(TRIAL, CASE)
    assert (result.criterion, result.score) == ("composite_criterion", score)
    assert result.passed is (score >= 0.5)
    assert result.details["require_all"] is require_all
    assert [s["criterion"] for s in result.details["sub_results"]] == ["a", "b"]
    assert result.token_usage == Usage(input_tokens=12)


async def test_a_sub_criterion_that_raises_counts_as_a_failure() -> None:
    result = await CompositeCriterion([Fixed("a", 1.0), Broken()]).evaluate(TRIAL, CASE)
    assert result.score == 0.0
    broken = result.details["sub_results"][1]
    assert broken["error"] == "RuntimeError: oops"


async def test_a_sub_criterion_without_a_score_leaves_the_gate_without_one() -> None:
    result = await CompositeCriterion([Fixed("a", 1.0), Fixed("judge", None)]).evaluate(TRIAL, CASE)
    assert result.score is None and "judge" in (result.reason or "")


async def test_disabled_sub_criteria_are_left_out() -> None:
    criterion = CompositeCriterion([Fixed("a", 1.0), Fixed("off", 0.0, enabled=False)])
    result = await criterion.evaluate(TRIAL, CASE)
    assert result.score == 1.0 and len(result.details["sub_results"]) == 1


async def test_weighted_mean() -> None:
    criterion = WeightedCriterion(
        criteria_weights=[(Fixed("a", 1.0), 0.3), (Fixed("b", 0.5), 0.7)],
        config=CriterionConfig(threshold=0.8),
    )
    result = await criterion.evaluate(TRIAL, CASE)
    assert result.criterion == "weighted_criterion"
    assert result.score == pytest.approx((1.0 * 0.3 + 0.5 * 0.7) / 1.0)
    assert result.passed is False
    assert result.details["weights"] == [0.3, 0.7]


async def test_weights_need_not_sum_to_one() -> None:
    criterion = WeightedCriterion([(Fixed("a", 1.0), 2), (Fixed("b", 0.0), 6)])
    assert (await criterion.evaluate(TRIAL, CASE)).score == pytest.approx(0.25)


async def test_empty_or_weightless_scores_zero() -> None:
    assert (await WeightedCriterion([]).evaluate(TRIAL, CASE)).score == 0.0
    zero = WeightedCriterion([(Fixed("a", 1.0), 0.0)])
    assert (await zero.evaluate(TRIAL, CASE)).score == 0.0


async def test_weighted_without_a_sub_score_has_none() -> None:
    criterion = WeightedCriterion([(Fixed("a", 1.0), 0.3), (Fixed("judge", None), 0.7)])
    result = await criterion.evaluate(TRIAL, CASE)
    assert result.score is None and "judge" in (result.reason or "")


def test_config_problems_of_sub_criteria_are_reported() -> None:
    assert CompositeCriterion([]).validate_config() == ["no sub-criteria to combine"]
