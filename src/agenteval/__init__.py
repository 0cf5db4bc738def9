"""agenteval: evaluate tool-using LLM agents.

Run an agent over cases and trials, record every trial, score it, store it, report it.
"""

from agenteval.agents.recorder import record_model_call, record_retry, record_wait
from agenteval.agents.tools import ToolSpec, known_tools, tool
from agenteval.case import EvalCase, ExpectedCall, Invocation, Message, Rubric
from agenteval.criteria import (
    CRITERIA_REGISTRY,
    BaseCriterion,
    CompositeCriterion,
    ContainsKeywordsCriterion,
    CriterionConfig,
    CriterionResult,
    ExactMatchCriterion,
    FactualAccuracyCriterion,
    HallucinationCriterion,
    LLMJudgeCriterion,
    MatchType,
    NodeOrderMatchCriterion,
    ResponseMatchCriterion,
    RougeMatchCriterion,
    RubricBasedCriterion,
    SafetyCriterion,
    SyncCriterion,
    TemplatedLLMCriterion,
    ToolNameMatchCriterion,
    TrajectoryMatchCriterion,
    WeightedCriterion,
)
from agenteval.datasets import case_file_schema, dump_cases, load_cases
from agenteval.engine.evaluate import (
    evaluate,
    evaluate_async,
    judge_run,
    judge_run_async,
    rescore,
    rescore_async,
)
from agenteval.errors import (
    AgentEvalError,
    AgentLoadError,
    ConfigError,
    DatasetError,
    InfrastructureError,
    ScorerError,
    StoreError,
)
from agenteval.evalset import (
    AgentEvaluator,
    CriteriaConfig,
    CriterionStats,
    EvalCaseResult,
    EvalConfig,
    EvalReport,
    EvalSet,
    EvalSummary,
)
from agenteval.evaluators import (
    AgentMemoryEval,
    EvalSuite,
    PlanQuality,
    StepFaithfulness,
    TaskCompletion,
    ToolArgumentAccuracy,
    ToolCallAccuracy,
    ToolCallNecessity,
    TrajectoryEfficiency,
)
from agenteval.judge.judge import Judge, JudgeConfig
from agenteval.pricing import PriceTable
from agenteval.records import RunInfo, TrialResult
from agenteval.report.summary import CostStats, ScorerStats, Summary
from agenteval.run import Run
from agenteval.score import JudgeRecord, Score
from agenteval.scorers.base import Scorer
from agenteval.store import RunStore
from agenteval.trace import AgentStep, Failure, FailureCause, ModelCall, ToolCall, Trial, Usage
from agenteval.version import __version__

ExecutionResult = Trial
"""Seed 003's name for what criteria read: a `Trial` (`actual_response` is its `output`)."""

__all__ = [
    "CRITERIA_REGISTRY",
    "AgentEvalError",
    "AgentEvaluator",
    "AgentLoadError",
    "AgentMemoryEval",
    "AgentStep",
    "BaseCriterion",
    "CompositeCriterion",
    "ConfigError",
    "ContainsKeywordsCriterion",
    "CostStats",
    "CriteriaConfig",
    "CriterionConfig",
    "CriterionResult",
    "CriterionStats",
    "DatasetError",
    "EvalCase",
    "EvalCaseResult",
    "EvalConfig",
    "EvalReport",
    "EvalSet",
    "EvalSuite",
    "EvalSummary",
    "ExactMatchCriterion",
    "ExecutionResult",
    "ExpectedCall",
    "FactualAccuracyCriterion",
    "Failure",
    "FailureCause",
    "HallucinationCriterion",
    "InfrastructureError",
    "Invocation",
    "Judge",
    "JudgeConfig",
    "JudgeRecord",
    "LLMJudgeCriterion",
    "MatchType",
    "Message",
    "ModelCall",
    "NodeOrderMatchCriterion",
    "PlanQuality",
    "PriceTable",
    "ResponseMatchCriterion",
    "RougeMatchCriterion",
    "Rubric",
    "RubricBasedCriterion",
    "Run",
    "RunInfo",
    "RunStore",
    "SafetyCriterion",
    "Score",
    "Scorer",
    "ScorerError",
    "ScorerStats",
    "StepFaithfulness",
    "StoreError",
    "Summary",
    "SyncCriterion",
    "TaskCompletion",
    "TemplatedLLMCriterion",
    "ToolArgumentAccuracy",
    "ToolCall",
    "ToolCallAccuracy",
    "ToolCallNecessity",
    "ToolNameMatchCriterion",
    "ToolSpec",
    "TrajectoryEfficiency",
    "TrajectoryMatchCriterion",
    "Trial",
    "TrialResult",
    "Usage",
    "WeightedCriterion",
    "__version__",
    "case_file_schema",
    "dump_cases",
    "evaluate",
    "evaluate_async",
    "judge_run",
    "judge_run_async",
    "known_tools",
    "load_cases",
    "record_model_call",
    "record_retry",
    "record_wait",
    "rescore",
    "rescore_async",
    "tool",
]
