"""agenteval: evaluate tool-using LLM agents.

Run an agent over cases and trials, record every trial, score it, store it, report it.

One engine, one data model, one scoring layer, three doors onto it (`__all__` lists them in
this order):

- the primary door: `evaluate` an agent over cases with the built-in scorers (`ExactMatch`,
  `ToolSelection`, ... or their names, `"exact_match"`), the judge rubrics and your own
  functions; a `Run` in the store comes back;
- the agent evaluators: `EvalSuite.run` with `ToolCallAccuracy`, `TaskCompletion`, ...;
- the criterion API (`ExactMatchCriterion`, `TrajectoryMatchCriterion`, ...) and, over it, the
  ADK-compatible API: `AgentEvaluator` over an `EvalSet` with an `EvalConfig`.

The criterion API's and the agent evaluators' names are aliases of the model's, not copies:
`ExecutionResult` is `Trial`, `actual_response` reads `Trial.output`, `ToolCall.args` is
`ToolCall.arguments`, `expected_tool_calls` is `EvalCase.expected_tools`.
"""

from agenteval.agents.recorder import record_model_call, record_retry, record_wait
from agenteval.agents.tools import ToolSpec, known_tools, tool
from agenteval.agents.trial_state import state
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
from agenteval.scorers import (
    AvoidsForbiddenText,
    ExactMatch,
    RedundantCalls,
    RetrievalRecall,
    Scorer,
    StateMatch,
    StepEfficiency,
    ToolArgumentsValid,
    ToolExecution,
    ToolFaithfulness,
    ToolSelection,
    TrajectoryOrder,
)
from agenteval.store import RunStore
from agenteval.tool_mocks import ToolMock
from agenteval.trace import (
    AgentStep,
    EndReason,
    Failure,
    FailureCause,
    ModelCall,
    SimulatedConversation,
    ToolCall,
    Trial,
    Usage,
    UserTurn,
)
from agenteval.user_simulation import UserReply, UserRequest, UserSimulation
from agenteval.version import __version__

ExecutionResult = Trial
"""The criterion API's name for what a criterion scores: the same class as `Trial` (an alias,
not a copy); its `actual_response` is the trial's `output`."""

# `__all__` is grouped by door, each group sorted: read it top to bottom to see the surface.

# The primary door: run an agent over cases, score every trial, store and report the run.
__all__ = [
    "Run",
    "evaluate",
    "evaluate_async",
    "judge_run",
    "judge_run_async",
    "rescore",
    "rescore_async",
]
# The built-in scorers (also named by string, `"exact_match"`), your own (`Scorer`), the judge.
__all__ += [
    "AvoidsForbiddenText",
    "ExactMatch",
    "Judge",
    "JudgeConfig",
    "RedundantCalls",
    "RetrievalRecall",
    "Scorer",
    "StateMatch",
    "StepEfficiency",
    "ToolArgumentsValid",
    "ToolExecution",
    "ToolFaithfulness",
    "ToolSelection",
    "TrajectoryOrder",
]
# The agent evaluators: `EvalSuite.run` with evaluators that read an agent's trace.
__all__ += [
    "AgentMemoryEval",
    "EvalSuite",
    "PlanQuality",
    "StepFaithfulness",
    "TaskCompletion",
    "ToolArgumentAccuracy",
    "ToolCallAccuracy",
    "ToolCallNecessity",
    "TrajectoryEfficiency",
]
# The criterion API: criteria scoring one `ExecutionResult` (a `Trial`) against one case.
__all__ += [
    "CRITERIA_REGISTRY",
    "BaseCriterion",
    "CompositeCriterion",
    "ContainsKeywordsCriterion",
    "CriterionConfig",
    "CriterionResult",
    "ExactMatchCriterion",
    "ExecutionResult",
    "FactualAccuracyCriterion",
    "HallucinationCriterion",
    "LLMJudgeCriterion",
    "MatchType",
    "NodeOrderMatchCriterion",
    "ResponseMatchCriterion",
    "RougeMatchCriterion",
    "RubricBasedCriterion",
    "SafetyCriterion",
    "SyncCriterion",
    "TemplatedLLMCriterion",
    "ToolNameMatchCriterion",
    "TrajectoryMatchCriterion",
    "WeightedCriterion",
]
# The ADK-compatible API: `AgentEvaluator` over an `EvalSet`, with the criteria of an `EvalConfig`.
__all__ += [
    "AgentEvaluator",
    "CriteriaConfig",
    "CriterionStats",
    "EvalCaseResult",
    "EvalConfig",
    "EvalReport",
    "EvalSet",
    "EvalSummary",
]
# The model: what a case asks, what a trial did, what a score says.
__all__ += [
    "AgentStep",
    "EndReason",
    "EvalCase",
    "ExpectedCall",
    "Failure",
    "FailureCause",
    "Invocation",
    "JudgeRecord",
    "Message",
    "ModelCall",
    "Rubric",
    "Score",
    "SimulatedConversation",
    "ToolCall",
    "ToolMock",
    "ToolSpec",
    "Trial",
    "Usage",
    "UserReply",
    "UserRequest",
    "UserSimulation",
    "UserTurn",
]
# Recording an agent: its tools, its model calls, its waits and retries; the trial's state.
__all__ += [
    "known_tools",
    "record_model_call",
    "record_retry",
    "record_wait",
    "state",
    "tool",
]
# Case files, the run store and its records, summaries, prices.
__all__ += [
    "CostStats",
    "PriceTable",
    "RunInfo",
    "RunStore",
    "ScorerStats",
    "Summary",
    "TrialResult",
    "case_file_schema",
    "dump_cases",
    "load_cases",
]
# Errors: every one agenteval raises is an `AgentEvalError`.
__all__ += [
    "AgentEvalError",
    "AgentLoadError",
    "ConfigError",
    "DatasetError",
    "InfrastructureError",
    "ScorerError",
    "StoreError",
]
__all__ += ["__version__"]
