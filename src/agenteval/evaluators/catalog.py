"""Every agent evaluator by the name the scoring layer knows it by (`EVALUATORS`): the names
`agenteval.yaml` (`scorers:`) and `--scorer` use, and the names its scores carry by default."""

from __future__ import annotations

from agenteval.evaluators.base import Evaluator
from agenteval.evaluators.naming import snake_case
from agenteval.evaluators.outcome import AgentMemoryEval, TaskCompletion
from agenteval.evaluators.tool_calls import (
    ToolArgumentAccuracy,
    ToolCallAccuracy,
    ToolCallNecessity,
)
from agenteval.evaluators.trajectory import PlanQuality, StepFaithfulness, TrajectoryEfficiency

__all__ = ["EVALUATORS"]

EVALUATORS: dict[str, type[Evaluator]] = {
    snake_case(cls.__name__): cls
    for cls in (
        ToolCallAccuracy,
        ToolArgumentAccuracy,
        ToolCallNecessity,
        TrajectoryEfficiency,
        PlanQuality,
        TaskCompletion,
        StepFaithfulness,
        AgentMemoryEval,
    )
}
"""`tool_call_accuracy`, `tool_argument_accuracy`, `tool_call_necessity`,
`trajectory_efficiency`, `plan_quality`, `task_completion`, `step_faithfulness`,
`agent_memory_eval`: each evaluator class by its snake_case name."""
