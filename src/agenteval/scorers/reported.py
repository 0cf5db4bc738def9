"""A reported score: a measurement that is shown, never a pass or a fail.

Some metrics measure rather than judge: how many tool calls or model calls a turn took, how
many tokens, how many seconds (ADK's efficiency metrics, `tool_call_count_v1` and its
siblings). Their value is a count or a duration, not a 0..1 score, and lower is better with no
line where it turns bad. A reported score carries it without pretending to be a verdict:

- `Score.value` is None and `passed` None, so no pass rate, trial verdict
  (`report.statistics.trial_passed`), gate rule or `EvalReport` status ever counts it;
- the measurement is under `details["agenteval.reported"]`: `value` (None when it could not be
  measured, with the score's `reason` saying why) and `unit`;
- the summaries count it apart from the skipped scores (`ScorerStats.reported`, `CriterionStats`
  in `evalset.report`) and show the mean of the values measured.
"""

from __future__ import annotations

from typing import Any

from agenteval.score import Score

__all__ = ["REPORTED", "is_reported", "reported_unit", "reported_value"]

REPORTED = "agenteval.reported"
"""The `Score.details` key of a reported measurement: `{"value": float | None, "unit": str}`."""


def is_reported(score: Score) -> bool:
    """Whether the score is a reported measurement (never a pass or a fail)."""
    return (
        score.value is None
        and score.error is None
        and isinstance(score.details.get(REPORTED), dict)
    )


def reported_value(score: Score) -> float | None:
    """The measured value of a reported score; None when it is no reported score, or when the
    measurement could not be made (the score's reason says why)."""
    entry: Any = score.details.get(REPORTED) if score.value is None else None
    if not isinstance(entry, dict):
        return None
    value = entry.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def reported_unit(score: Score) -> str | None:
    """The unit of a reported score's value (`tool calls per turn`), or None."""
    entry: Any = score.details.get(REPORTED)
    unit = entry.get("unit") if isinstance(entry, dict) else None
    return unit if isinstance(unit, str) else None
