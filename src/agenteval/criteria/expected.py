"""What a case expects, as the criteria read it: from the `Invocation`s of its `conversation`,
concatenated across turns, else from the single-turn fields of `EvalCase`.

- the final response: the last non-empty `expected_final_response` of the turns, else
  `expected_output`; and per turn (`expected_turn_responses`), the turns that have one, which
  the text criteria score one by one (a turn without a reference is not scored);
- the tool calls: every turn's `expected_tool_trajectory`, in turn order, else
  `expected_trajectory`;
- the tool names: those of the tool calls, else `expected_tools`;
- the graph nodes: every turn's `expected_node_order`, in turn order;
- the rubrics: the case's `rubrics`, then every turn's (none dropped).

A turn states an expectation when its field was given (an explicit empty list says "no tool
calls"); when no turn states one, the single-turn field is read.
"""

from __future__ import annotations

from agenteval.case import EvalCase, Invocation, Rubric
from agenteval.trace import ToolCall

__all__ = [
    "expected_final_response",
    "expected_node_order",
    "expected_rubrics",
    "expected_tool_names",
    "expected_trajectory_calls",
    "expected_turn_responses",
]


def _stated(case: EvalCase, field: str) -> list[Invocation]:
    return [turn for turn in case.conversation or [] if field in turn.model_fields_set]


def expected_final_response(case: EvalCase) -> str | None:
    """The last non-empty expected final response of the case, or None."""
    for turn in reversed(case.conversation or []):
        if turn.expected_final_response and turn.expected_final_response.strip():
            return turn.expected_final_response
    if case.expected_output and case.expected_output.strip():
        return case.expected_output
    return None


def expected_turn_responses(case: EvalCase) -> list[tuple[int, str]]:
    """(turn index, expected final response) of every turn that has a non-empty one; for a case
    without a conversation, `(0, expected_output)` when it has one. A turn whose reference is
    null or empty states nothing to compare its answer with, so it is left out."""
    if case.conversation:
        return [
            (index, turn.expected_final_response)
            for index, turn in enumerate(case.conversation)
            if turn.expected_final_response and turn.expected_final_response.strip()
        ]
    if case.expected_output and case.expected_output.strip():
        return [(0, case.expected_output)]
    return []


def expected_trajectory_calls(case: EvalCase) -> list[ToolCall] | None:
    """The expected tool calls, concatenated across turns; None when the case states none."""
    turns = _stated(case, "expected_tool_trajectory")
    if turns:
        return [call for turn in turns for call in turn.expected_tool_trajectory]
    if case.expected_trajectory is not None:
        return [
            ToolCall(name=call.name, arguments=call.arguments) for call in case.expected_trajectory
        ]
    return None


def expected_tool_names(case: EvalCase) -> list[str] | None:
    """The names of the expected tool calls (a multiset); None when the case states none."""
    calls = expected_trajectory_calls(case)
    if calls is not None:
        return [call.name for call in calls]
    return list(case.expected_tools) if case.expected_tools is not None else None


def expected_node_order(case: EvalCase) -> list[str] | None:
    """The expected graph nodes, concatenated across turns; None when the case states none."""
    turns = _stated(case, "expected_node_order")
    if turns:
        return [node for turn in turns for node in turn.expected_node_order]
    return None


def expected_rubrics(case: EvalCase) -> list[Rubric]:
    """The case's own rubrics and every turn's, in that order."""
    rubrics = list(case.rubrics or [])
    for turn in case.conversation or []:
        rubrics.extend(turn.rubrics)
    return rubrics
