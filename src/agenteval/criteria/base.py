"""The criterion interface: `BaseCriterion` (async `evaluate`), `SyncCriterion` (a pure rule in
`evaluate_sync`) and `CriterionResult`.

A criterion is also a scorer of agenteval's one scoring layer: calling it with `(case, trial)`
gives a `Score` named after it, so criteria go into `agenteval.evaluate(scorers=[...])` and
`--scorer module:object` like any other scorer.
"""

from __future__ import annotations

import asyncio
import copy
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agenteval.case import EvalCase
from agenteval.criteria.config import CriterionConfig
from agenteval.errors import ScorerError
from agenteval.score import JudgeRecord, Score
from agenteval.scorers.answer import not_judged
from agenteval.trace import Trial, Usage

if TYPE_CHECKING:
    from agenteval.scorers.context import ScoringContext

__all__ = ["BaseCriterion", "CriterionResult", "SyncCriterion"]


class CriterionResult(BaseModel):
    """What one criterion said of one execution.

    `score` is in 0..1, or None when there is no score to give (no judge could be reached, or
    the case lacks what the criterion compares against): `reason` then says why, and `passed`
    is None. A criterion that failed (every judge sample failed, say) has `error` set, score 0.0
    and `passed` False.
    """

    model_config = ConfigDict(extra="forbid")

    criterion: str
    """The criterion's `name`."""
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    passed: bool | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    token_usage: Usage | None = None
    """Tokens the judge spent (None for criteria that call no model)."""
    error: str | None = None
    reason: str | None = None
    """Why the score, in a line."""
    judge: JudgeRecord | None = None
    """Which judge gave the score, for the LLM criteria."""

    @property
    def scored(self) -> bool:
        """Whether the criterion gave a score (it applied, and did not fail)."""
        return self.score is not None and self.error is None

    def to_score(self) -> Score:
        """This result as an agenteval `Score` named after the criterion."""
        return Score(
            name=self.criterion,
            value=self.score,
            passed=self.passed,
            reason=self.reason or self.error,
            details=self.details,
            usage=self.token_usage,
            judge=self.judge,
            error=self.error,
        )


class BaseCriterion(ABC):
    """A rule that scores one execution of an agent against one case.

    Subclasses set `name` (the key results and reports carry) and `description`, and implement
    the async `evaluate(actual, expected)`. `config` (a `CriterionConfig`) holds the threshold
    and the criterion's settings. An instance is also a scorer: `await criterion(case, trial)`
    gives a `Score`.
    """

    name: str = "criterion"
    """The key written into `CriterionResult.criterion` and into reports."""
    description: str = ""
    """What the criterion checks, for people."""

    def __init__(self, config: CriterionConfig | None = None) -> None:
        self.config = config if config is not None else CriterionConfig()
        self._context: ScoringContext | None = None

    @property
    def reads(self) -> frozenset[str]:
        """The trial fields the criterion reads: a run gives it no score, with why, when the
        trial's trace does not record one of them (`agenteval.scorers.recorded`). None by
        default: a criterion of yours is called as it is unless it declares them (a class
        attribute, `reads = frozenset({"output"})`)."""
        return frozenset()

    @property
    def threshold(self) -> float:
        """The pass mark: `config.threshold`."""
        return self.config.threshold

    @property
    def is_enabled(self) -> bool:
        """Whether the criterion runs: `config.enabled`."""
        return self.config.enabled

    @abstractmethod
    async def evaluate(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Score one execution (`actual`, an `ExecutionResult`) against its case (`expected`)."""

    def validate_config(self) -> list[str]:
        """What is wrong with the config, one message each; an empty list means it is valid."""
        errors: list[str] = []
        if not 0.0 <= self.config.threshold <= 1.0:
            errors.append(f"threshold must be from 0 to 1, got {self.config.threshold}")
        return errors

    def _result(
        self,
        score: float | None,
        details: dict[str, Any] | None = None,
        token_usage: Usage | None = None,
        *,
        reason: str | None = None,
        judge: JudgeRecord | None = None,
    ) -> CriterionResult:
        """A result passing when `score` reaches `threshold`; with no score, `passed` is None."""
        return CriterionResult(
            criterion=self.name,
            score=score,
            passed=None if score is None else score >= self.threshold,
            details=details or {},
            token_usage=token_usage,
            reason=reason,
            judge=judge,
        )

    def _failure(
        self,
        error: str,
        *,
        details: dict[str, Any] | None = None,
        token_usage: Usage | None = None,
        judge: JudgeRecord | None = None,
    ) -> CriterionResult:
        """An error result: score 0.0, not passed, `error` set."""
        return CriterionResult(
            criterion=self.name,
            score=0.0,
            passed=False,
            details=details or {},
            token_usage=token_usage,
            error=error,
            judge=judge,
        )

    # --- the scorer interface ------------------------------------------------------------------

    async def __call__(self, case: EvalCase, trial: Trial) -> Score:
        """Score a trial of agenteval's run: a disabled criterion gives no score, and so does a
        trial that failed for an infrastructure reason (the agent never got to answer)."""
        if not self.is_enabled:
            return Score(name=self.name, reason="criterion disabled (config.enabled is false)")
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        result = await self.evaluate(trial, case)
        return result.to_score()

    def for_run(self, context: ScoringContext) -> BaseCriterion:
        """This criterion as a run applies it, with the run's context (its judge); raises
        `ScorerError` when the config is not valid. The criterion itself is left as it is."""
        errors = self.validate_config()
        if errors:
            raise ScorerError(
                f"criterion {self.name!r} is not configured right: {'; '.join(errors)}",
                field="scorers",
            )
        bound = copy.copy(self)
        bound._context = context
        return bound

    def __repr__(self) -> str:
        return f"{type(self).__name__}(config={self.config!r})"


class SyncCriterion(BaseCriterion):
    """A criterion whose rule is pure computation: implement `evaluate_sync`; the inherited
    async `evaluate` runs it (a rule of your own runs in a worker thread, so a slow one never
    holds up the event loop)."""

    @abstractmethod
    def evaluate_sync(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Score one execution against its case."""

    async def evaluate(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """`evaluate_sync`, awaited."""
        if type(self).__module__.startswith("agenteval."):
            return self.evaluate_sync(actual, expected)
        return await asyncio.to_thread(self.evaluate_sync, actual, expected)
