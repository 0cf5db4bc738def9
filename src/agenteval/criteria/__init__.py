"""The criterion API: criterion classes as a front door to agenteval's one scoring layer and one
judge.

A criterion scores one execution (`ExecutionResult`, which is agenteval's `Trial`) against one
case: `await criterion.evaluate(actual, expected)` gives a `CriterionResult`. Every criterion is
also a scorer: `agenteval.evaluate(agent, cases, scorers=[TrajectoryMatchCriterion(...)])`.
"""

from agenteval.case import Rubric
from agenteval.criteria.base import BaseCriterion, CriterionResult, SyncCriterion
from agenteval.criteria.composite import CompositeCriterion, WeightedCriterion
from agenteval.criteria.config import CriterionConfig, MatchType
from agenteval.criteria.efficiency import (
    EfficiencyCriterion,
    InferenceCallCountCriterion,
    InvocationDurationCriterion,
    TokenUsageCriterion,
    ToolCallCountCriterion,
)
from agenteval.criteria.hallucination import HallucinationCriterion
from agenteval.criteria.llm import TemplatedLLMCriterion
from agenteval.criteria.multi_turn import (
    MultiTurnTaskSuccessCriterion,
    MultiTurnToolUseQualityCriterion,
    MultiTurnTrajectoryQualityCriterion,
    RubricBasedMultiTurnTrajectoryCriterion,
)
from agenteval.criteria.registry import CRITERIA_REGISTRY
from agenteval.criteria.response import (
    FactualAccuracyCriterion,
    LLMJudgeCriterion,
    ResponseMatchCriterion,
    RubricBasedCriterion,
)
from agenteval.criteria.safety import SafetyCriterion
from agenteval.criteria.text import (
    ContainsKeywordsCriterion,
    ExactMatchCriterion,
    RougeMatchCriterion,
)
from agenteval.criteria.tool_use import RubricBasedToolUseCriterion
from agenteval.criteria.trajectory import (
    NodeOrderMatchCriterion,
    ToolNameMatchCriterion,
    TrajectoryMatchCriterion,
)
from agenteval.criteria.user_simulator_quality import PerTurnUserSimulatorQualityCriterion

__all__ = [
    "CRITERIA_REGISTRY",
    "BaseCriterion",
    "CompositeCriterion",
    "ContainsKeywordsCriterion",
    "CriterionConfig",
    "CriterionResult",
    "EfficiencyCriterion",
    "ExactMatchCriterion",
    "FactualAccuracyCriterion",
    "HallucinationCriterion",
    "InferenceCallCountCriterion",
    "InvocationDurationCriterion",
    "LLMJudgeCriterion",
    "MatchType",
    "MultiTurnTaskSuccessCriterion",
    "MultiTurnToolUseQualityCriterion",
    "MultiTurnTrajectoryQualityCriterion",
    "NodeOrderMatchCriterion",
    "PerTurnUserSimulatorQualityCriterion",
    "ResponseMatchCriterion",
    "RougeMatchCriterion",
    "Rubric",
    "RubricBasedCriterion",
    "RubricBasedMultiTurnTrajectoryCriterion",
    "RubricBasedToolUseCriterion",
    "SafetyCriterion",
    "SyncCriterion",
    "TemplatedLLMCriterion",
    "TokenUsageCriterion",
    "ToolCallCountCriterion",
    "ToolNameMatchCriterion",
    "TrajectoryMatchCriterion",
    "WeightedCriterion",
]
