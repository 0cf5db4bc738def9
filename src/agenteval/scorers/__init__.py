"""The scoring layer: the scorer interface, the built-in deterministic scorers, and lookup by
name. Every front door (seed 000's scorers, the criteria, the evaluators) scores through it."""

from agenteval.scorers.answer import ExactMatch
from agenteval.scorers.base import Scorer, ScorerResult, run_scorer, scorer_name, to_score
from agenteval.scorers.builtin import BUILTIN_SCORERS, builtin_scorer, default_scorers
from agenteval.scorers.grounding import RetrievalRecall, ToolFaithfulness
from agenteval.scorers.registry import resolve_scorers
from agenteval.scorers.safety import AvoidsForbiddenText
from agenteval.scorers.tools import (
    RedundantCalls,
    StepEfficiency,
    ToolArgumentsValid,
    ToolExecution,
    ToolSelection,
    TrajectoryOrder,
)

__all__ = [
    "BUILTIN_SCORERS",
    "AvoidsForbiddenText",
    "ExactMatch",
    "RedundantCalls",
    "RetrievalRecall",
    "Scorer",
    "ScorerResult",
    "StepEfficiency",
    "ToolArgumentsValid",
    "ToolExecution",
    "ToolFaithfulness",
    "ToolSelection",
    "TrajectoryOrder",
    "builtin_scorer",
    "default_scorers",
    "resolve_scorers",
    "run_scorer",
    "scorer_name",
    "to_score",
]
