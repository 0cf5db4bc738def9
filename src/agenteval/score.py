"""`Score`: what one scorer said of one trial."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agenteval.trace import Usage

__all__ = ["Score"]


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
    error: str | None = None

    @property
    def applied(self) -> bool:
        """Whether the scorer gave a score (it applied and did not fail)."""
        return self.value is not None and self.error is None
