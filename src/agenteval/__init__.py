"""agenteval: evaluate tool-using LLM agents.

Run an agent over cases and trials, record every trial, score it, store it, report it.
"""

from agenteval.agents.recorder import record_model_call, record_retry, record_wait
from agenteval.agents.tools import ToolSpec, known_tools, tool
from agenteval.case import EvalCase, ExpectedCall, Invocation, Message, Rubric
from agenteval.errors import AgentEvalError
from agenteval.score import Score
from agenteval.trace import AgentStep, Failure, FailureCause, ModelCall, ToolCall, Trial, Usage

__version__ = "0.1.0"

__all__ = [
    "AgentEvalError",
    "AgentStep",
    "EvalCase",
    "ExpectedCall",
    "Failure",
    "FailureCause",
    "Invocation",
    "Message",
    "ModelCall",
    "Rubric",
    "Score",
    "ToolCall",
    "ToolSpec",
    "Trial",
    "Usage",
    "__version__",
    "known_tools",
    "record_model_call",
    "record_retry",
    "record_wait",
    "tool",
]
