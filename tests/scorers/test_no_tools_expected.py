"""An explicit empty expectation (`expected_tools: []`, `expected_trajectory: []`) is an
expectation, not an absent one: each tool-use scorer gives it a score by its own rule, and says
which scorer judges the calls made when its own rule does not."""

from __future__ import annotations

from agenteval.case import EvalCase
from agenteval.scorers.tools import StepEfficiency, ToolSelection, TrajectoryOrder
from agenteval.trace import ToolCall, Trial

NONE_EXPECTED = EvalCase(input="Say hello", expected_tools=[])
CALLED = Trial(output="hello", tool_calls=[ToolCall(name="search"), ToolCall(name="search")])
ANSWERED = Trial(output="hello")


def test_seed_000_step_efficiency_fails_any_call_when_none_are_needed() -> None:
    made = StepEfficiency()(NONE_EXPECTED, CALLED)
    assert (made.value, made.passed) == (0.0, False)
    none_made = StepEfficiency()(NONE_EXPECTED, ANSWERED)
    assert (none_made.value, none_made.passed) == (1.0, True)


def test_tool_selection_passes_and_says_the_calls_made_are_judged_elsewhere() -> None:
    # The rung asks whether every needed tool was called; none was needed. Its pass must not
    # read as "the agent did right to call search twice".
    made = ToolSelection()(NONE_EXPECTED, CALLED)
    assert (made.value, made.passed) == (1.0, True)
    assert "2 calls made" in (made.reason or "")
    assert "step_efficiency" in (made.reason or "")
    assert ToolSelection()(NONE_EXPECTED, ANSWERED).reason == "no tools needed"


def test_an_empty_trajectory_is_scored_not_skipped() -> None:
    case = EvalCase(input="Say hello", expected_trajectory=[])
    assert TrajectoryOrder()(case, CALLED).value == 1.0
    assert StepEfficiency()(case, CALLED).value == 0.0
