"""The ADK-compatible API: `AgentEvaluator` over agenteval's one engine, and Google ADK eval sets.

- `EvalSet`: a named set of cases, read from ADK eval sets (`*.evalset.json`), ADK test files
  (`*.test.json`, current and legacy formats), folders of them, or any agenteval case file.
- `EvalConfig` / `CriteriaConfig`: which criteria run, in agenteval's names or ADK's
  (`test_config.json`).
- `AgentEvaluator`: runs an agent over an `EvalSet` on `agenteval.evaluate_async` and returns an
  `EvalReport` (`EvalCaseResult` per case and trial; `EvalSummary` with `criterion_stats`).
  Called on the class, it is a drop-in for ADK's: `await AgentEvaluator.evaluate(agent_module=
  "my_agent", eval_dataset_file_path_or_dir="tests/fixture/", num_runs=2)` and
  `AgentEvaluator.evaluate_eval_set(...)` raise `AssertionError` naming the failing metrics, and
  store each run (`agenteval.evalset.dropin`).
- `final_session_state_match`: ADK's `final_session_state`, compared.
"""

from agenteval.evalset.adk import (
    ADK_METADATA,
    FINAL_SESSION_STATE,
    SESSION_INPUT,
    is_adk_file,
    read_adk_file,
)
from agenteval.evalset.config import ADK_METRICS, CriteriaConfig, EvalConfig
from agenteval.evalset.evalset import EvalSet
from agenteval.evalset.evaluator import AgentEvaluator
from agenteval.evalset.report import (
    CaseStatus,
    CriterionStats,
    EvalCaseResult,
    EvalReport,
    EvalSummary,
)
from agenteval.evalset.rubrics import PerTurnRubricCriterion
from agenteval.evalset.session import (
    SESSION_STATE,
    FinalSessionStateMatch,
    final_session_state_match,
)
from agenteval.evalset.ties import TieRule, apply_tie_rule, judge_tie

__all__ = [
    "ADK_METADATA",
    "ADK_METRICS",
    "FINAL_SESSION_STATE",
    "SESSION_INPUT",
    "SESSION_STATE",
    "AgentEvaluator",
    "CaseStatus",
    "CriteriaConfig",
    "CriterionStats",
    "EvalCaseResult",
    "EvalConfig",
    "EvalReport",
    "EvalSet",
    "EvalSummary",
    "FinalSessionStateMatch",
    "PerTurnRubricCriterion",
    "TieRule",
    "apply_tie_rule",
    "final_session_state_match",
    "is_adk_file",
    "judge_tie",
    "read_adk_file",
]
