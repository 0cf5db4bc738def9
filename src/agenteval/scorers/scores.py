"""The two shapes of a score the built-in scorers give: a pass or a fail (`binary_score`), and
a value that passes at a threshold (`threshold_score`)."""

from __future__ import annotations

from typing import Any

from agenteval.score import Score

__all__ = ["binary_score", "threshold_score"]


def binary_score(name: str, passed: bool, reason: str, details: dict[str, Any]) -> Score:
    """A pass (1.0) or a fail (0.0)."""
    return Score(
        name=name, value=1.0 if passed else 0.0, passed=passed, reason=reason, details=details
    )


def threshold_score(
    name: str, value: float, threshold: float, reason: str, details: dict[str, Any]
) -> Score:
    """`value`, passing when it reaches `threshold`."""
    return Score(name=name, value=value, passed=value >= threshold, reason=reason, details=details)
