"""The agent evaluators, over agenteval's one scoring layer and one judge.

Each evaluator is a scorer of `(case, trial)` that reads the agent's trace (the trial's own
record, else the case's `agent_trace`): `ToolCallAccuracy` (deterministic), and, scored by the
LLM judge, `ToolArgumentAccuracy`, `ToolCallNecessity`, `TrajectoryEfficiency`, `PlanQuality`,
`TaskCompletion`, `StepFaithfulness` and `AgentMemoryEval`. `EvalSuite` runs them over cases with
`agenteval.evaluate`.
"""

from agenteval.evaluators.base import DEFAULT_THRESHOLD, Evaluator, JudgedEvaluator
from agenteval.evaluators.catalog import EVALUATORS
from agenteval.evaluators.outcome import AgentMemoryEval, TaskCompletion
from agenteval.evaluators.suite import EvalSuite
from agenteval.evaluators.tool_calls import (
    ToolArgumentAccuracy,
    ToolCallAccuracy,
    ToolCallNecessity,
)
from agenteval.evaluators.trajectory import (
    RECOVERY_PENALTY,
    PlanQuality,
    StepFaithfulness,
    TrajectoryEfficiency,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "EVALUATORS",
    "RECOVERY_PENALTY",
    "AgentMemoryEval",
    "EvalSuite",
    "Evaluator",
    "JudgedEvaluator",
    "PlanQuality",
    "StepFaithfulness",
    "TaskCompletion",
    "ToolArgumentAccuracy",
    "ToolCallAccuracy",
    "ToolCallNecessity",
    "TrajectoryEfficiency",
]
