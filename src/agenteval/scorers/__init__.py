"""The scoring layer: the scorer interface, the built-in deterministic scorers, and what a run
gives the scorers that ask for it (`ScoringContext`). Every front door (these scorers and the
judge rubrics, the criteria, the agent evaluators) scores through it; turning names into
scorers is `agenteval.catalog`'s job, above all three. A scorer declares the trial fields it
reads (`reads`), so a trial whose trace does not record one gets no score from it
(`scorers.recorded`)."""

from agenteval.scorers.answer import ExactMatch
from agenteval.scorers.base import Scorer, ScorerResult, run_scorer, scorer_name, to_score
from agenteval.scorers.builtin import BUILTIN_SCORERS, builtin_scorer, default_scorers
from agenteval.scorers.context import ScoringContext
from agenteval.scorers.grounding import RetrievalRecall, ToolFaithfulness
from agenteval.scorers.recorded import reads
from agenteval.scorers.safety import AvoidsForbiddenText
from agenteval.scorers.state import StateMatch
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
    "ScoringContext",
    "StateMatch",
    "StepEfficiency",
    "ToolArgumentsValid",
    "ToolExecution",
    "ToolFaithfulness",
    "ToolSelection",
    "TrajectoryOrder",
    "builtin_scorer",
    "default_scorers",
    "reads",
    "run_scorer",
    "scorer_name",
    "to_score",
]
