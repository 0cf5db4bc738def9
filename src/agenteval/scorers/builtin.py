"""The built-in scorers by name, in the order reports list them: `BUILTIN_SCORERS`,
`default_scorers` and `builtin_scorer`."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TypeAlias

from agenteval.errors import ScorerError
from agenteval.scorers import answer, grounding, safety, state
from agenteval.scorers import tools as tool_scorers
from agenteval.scorers.base import Scorer
from agenteval.trace import ToolSpec

__all__ = ["BUILTIN_SCORERS", "BuiltinScorer", "builtin_scorer", "default_scorers"]

BuiltinScorer: TypeAlias = (
    answer.ExactMatch
    | tool_scorers.ToolSelection
    | tool_scorers.ToolArgumentsValid
    | tool_scorers.ToolExecution
    | tool_scorers.TrajectoryOrder
    | tool_scorers.StepEfficiency
    | tool_scorers.RedundantCalls
    | grounding.ToolFaithfulness
    | grounding.RetrievalRecall
    | safety.AvoidsForbiddenText
    | state.StateMatch
)
"""Any one of the built-in scorer classes' instances."""

BUILTIN_SCORERS: dict[str, type[BuiltinScorer]] = {
    "exact_match": answer.ExactMatch,
    "tool_selection": tool_scorers.ToolSelection,
    "tool_arguments_valid": tool_scorers.ToolArgumentsValid,
    "tool_execution": tool_scorers.ToolExecution,
    "trajectory_order": tool_scorers.TrajectoryOrder,
    "step_efficiency": tool_scorers.StepEfficiency,
    "redundant_calls": tool_scorers.RedundantCalls,
    "tool_faithfulness": grounding.ToolFaithfulness,
    "retrieval_recall": grounding.RetrievalRecall,
    "avoids_forbidden_text": safety.AvoidsForbiddenText,
    "state_match": state.StateMatch,
}
"""Every built-in scorer class by the name its scores carry, in the order reports list them."""


def builtin_scorer(name: str, tools: Mapping[str, ToolSpec] | None = None) -> Scorer:
    """The built-in scorer called `name`, with its defaults.

    `tools` (the run's tools by name) go to the scorers that check calls against tool schemas.
    An unknown name raises `ScorerError`, suggesting the closest built-in name.
    """
    cls = BUILTIN_SCORERS.get(name)
    if cls is None:
        close = difflib.get_close_matches(name, list(BUILTIN_SCORERS), n=1)
        hint = (
            f"did you mean {close[0]!r}?"
            if close
            else "built-in scorers: " + ", ".join(BUILTIN_SCORERS)
        )
        raise ScorerError(f"no built-in scorer named {name!r}", hint=hint)
    scorer: BuiltinScorer = (
        cls(tools=tools)
        if issubclass(cls, tool_scorers.ToolArgumentsValid | tool_scorers.ToolExecution)
        else cls()
    )
    return scorer


def default_scorers(tools: Mapping[str, ToolSpec] | None = None) -> list[Scorer]:
    """One of each built-in scorer, in `BUILTIN_SCORERS` order, given the run's `tools`."""
    return [builtin_scorer(name, tools) for name in BUILTIN_SCORERS]
