"""`Score`: what one scorer said of one trial."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agenteval.trace import Usage

__all__ = ["JudgeRecord", "Score"]


class JudgeRecord(BaseModel):
    """Which judge gave a score, how, and at what cost."""

    model_config = ConfigDict(extra="forbid")

    judge: str
    """The judge's spec as it was chosen, `provider:model` (its `JudgeConfig.spec`)."""
    model: str | None = None
    """The model as the provider reported it (a dated snapshot, say)."""
    template: str
    template_version: int
    params: dict[str, Any] = Field(default_factory=dict)
    """The sampling parameters sent (temperature, max_tokens, ...)."""
    samples: int = 1
    failed_samples: int = 0
    cached_samples: int = 0
    """Samples answered from the cache: no provider call, no tokens, no cost."""
    retries: dict[str, int] = Field(default_factory=dict)
    """The judge's retries by reason (kept apart from the agent's)."""
    cost_usd: float | None = None
    """From the price table; None when the model has no price, or when `usage_recorded` is
    False."""
    usage_recorded: bool = True
    """False when some of the judge's answers for this score carried no token usage (a proxy
    that strips it): what the score cost is unknown, never $0
    (`CostStats.judge_models_without_usage`)."""


class Score(BaseModel):
    """One scorer's verdict on one trial.

    `value` is in 0..1, or `None` when the scorer did not apply (no score, never a misleading 0).
    `error` is set when the scorer itself failed; that is counted apart from a failing score.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    value: float | None = Field(default=None, ge=0.0, le=1.0)
    passed: bool | None = None
    reason: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    usage: Usage | None = None
    """Tokens the judge spent on this score (None for scorers that call no model)."""
    judge: JudgeRecord | None = None
    """Set on scores given by an LLM judge."""
    error: str | None = None

    @property
    def applied(self) -> bool:
        """Whether the scorer gave a score (it applied and did not fail)."""
        return self.value is not None and self.error is None
