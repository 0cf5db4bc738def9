"""Eval sets, Google ADK compatibility, and `AgentEvaluator` (seed 003's evaluation layer)."""

from agenteval.evalset.adk import (
    ADK_METADATA,
    FINAL_SESSION_STATE,
    SESSION_INPUT,
    is_adk_file,
    read_adk_file,
)
from agenteval.evalset.evalset import EvalSet

__all__ = [
    "ADK_METADATA",
    "FINAL_SESSION_STATE",
    "SESSION_INPUT",
    "EvalSet",
    "is_adk_file",
    "read_adk_file",
]
