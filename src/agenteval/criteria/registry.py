"""`CRITERIA_REGISTRY`: every criterion that can be built from a `CriterionConfig` alone, by the
name its results carry; and the two ways the scoring layer names criteria
(`criterion_from_settings`, `criterion_reference`).

Register a criterion of your own with `CRITERIA_REGISTRY["max_length"] = MaxLengthCriterion`.
`CompositeCriterion` and `WeightedCriterion` are not in it: they are built from other
criteria, by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from agenteval.criteria import (
    efficiency,
    hallucination,
    multi_turn,
    response,
    safety,
    text,
    tool_use,
    trajectory,
    user_simulator_quality,
)
from agenteval.criteria.base import BaseCriterion
from agenteval.criteria.config import CriterionConfig
from agenteval.errors import ScorerError
from agenteval.validation import first_problem

__all__ = [
    "BUILTIN_CRITERIA",
    "CRITERIA_REGISTRY",
    "criterion_from_settings",
    "criterion_reference",
]

_BUILTIN_CLASSES: tuple[type[BaseCriterion], ...] = (
    text.ExactMatchCriterion,
    text.ContainsKeywordsCriterion,
    text.RougeMatchCriterion,
    response.ResponseMatchCriterion,
    response.LLMJudgeCriterion,
    response.RubricBasedCriterion,
    response.FactualAccuracyCriterion,
    hallucination.HallucinationCriterion,
    safety.SafetyCriterion,
    trajectory.TrajectoryMatchCriterion,
    trajectory.NodeOrderMatchCriterion,
    trajectory.ToolNameMatchCriterion,
    tool_use.RubricBasedToolUseCriterion,
    multi_turn.MultiTurnTaskSuccessCriterion,
    multi_turn.MultiTurnTrajectoryQualityCriterion,
    multi_turn.MultiTurnToolUseQualityCriterion,
    multi_turn.RubricBasedMultiTurnTrajectoryCriterion,
    user_simulator_quality.PerTurnUserSimulatorQualityCriterion,
    *efficiency.EFFICIENCY_CRITERIA,
)

BUILTIN_CRITERIA: dict[str, type[BaseCriterion]] = {cls.name: cls for cls in _BUILTIN_CLASSES}
"""agenteval's own criteria by name."""

CRITERIA_REGISTRY: dict[str, type[BaseCriterion]] = dict(BUILTIN_CRITERIA)
"""Every criterion by the name its results carry: agenteval's own, and any registered since.
Each is built as `cls(config=CriterionConfig(...))`."""


def criterion_from_settings(name: str, settings: Mapping[str, Any]) -> BaseCriterion:
    """The registered criterion `name`, with `settings` as its `CriterionConfig` fields.

    Raises `ScorerError` for an unknown setting or a bad value, naming the setting.
    """
    cls = CRITERIA_REGISTRY[name]
    try:
        config = CriterionConfig.model_validate(dict(settings))
    except ValidationError as exc:
        message, where = first_problem(exc)
        raise ScorerError(
            f"{name} has a bad setting {(where or 'settings')!r}: {message}",
            field="scorers",
            hint="its settings are CriterionConfig fields: "
            + ", ".join(CriterionConfig.model_fields),
        ) from exc
    return cls(config=config)


def criterion_reference(criterion: BaseCriterion) -> dict[str, Any] | str | None:
    """A reference that builds `criterion` again by name (its settings, when they differ from
    the defaults), or None when it cannot be: a criterion of the user's own, or one whose
    arguments are not all in its config."""
    if BUILTIN_CRITERIA.get(criterion.name) is not type(criterion):
        return None
    # Fields set explicitly are kept even at their default: an explicit judge_model is not
    # the same as the default one (the run's judge replaces only the latter).
    settings = criterion.config.model_dump(mode="json", exclude_unset=True)
    if isinstance(criterion, text.ContainsKeywordsCriterion) and not criterion.config.keywords:
        settings.update({"keywords": list(criterion.keywords)} if criterion.keywords else {})
    return {"name": criterion.name, **settings} if settings else criterion.name
