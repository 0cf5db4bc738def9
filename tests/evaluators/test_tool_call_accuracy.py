"""`ToolCallAccuracy`: expected tools called, as a set or in order (an optimal alignment)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from agenteval import AgentStep, EvalCase, ToolCall, ToolCallAccuracy, Trial
from agenteval.engine.trials import trace_trial
from agenteval.trace import Failure, FailureCause


def traced(expected: list[str] | None, called: list[str]) -> tuple[EvalCase, Trial]:
    case = EvalCase(
        input="do it",
        agent_trace=[AgentStep(tool_calls=[ToolCall(name=name)]) for name in called],
        expected_tool_calls=expected,
    )
    return case, trace_trial(case, 0)


def test_the_share_of_expected_tools_called_in_any_order() -> None:
    scorer = ToolCallAccuracy()
    assert scorer(*traced(["search", "summarize"], ["summarize", "search"])).value == 1.0
    half = scorer(*traced(["search", "summarize"], ["search", "weather"]))
    assert (half.value, half.passed) == (0.5, False)
    assert half.details["missing"] == ["summarize"]
    assert "missing: summarize" in (half.reason or "")
    assert scorer(*traced(["search", "summarize"], ["weather"])).value == 0.0


def test_in_order_partial_credit_is_the_longest_common_subsequence() -> None:
    # Not a greedy scan that stops at the first missing tool (which would give 0).
    score = ToolCallAccuracy(require_order=True)(
        *traced(["send_email", "search", "book"], ["search", "weather", "book"])
    )
    assert score.value == 2 / 3
    assert score.details["missing"] == ["send_email"]
    assert score.name == "tool_call_accuracy[require_order]"
    wrong_order = ToolCallAccuracy(require_order=True)(*traced(["a", "b"], ["b", "a"]))
    assert wrong_order.value == 0.5
    assert ToolCallAccuracy()(*traced(["a", "b"], ["b", "a"])).value == 1.0


def test_a_tool_listed_twice_needs_two_calls_only_when_repeats_count() -> None:
    # Seed 004's set match by default; `count_repeats=True` counts each listing.
    assert ToolCallAccuracy()(*traced(["search", "search"], ["search"])).value == 1.0
    repeats = ToolCallAccuracy(count_repeats=True)
    assert repeats(*traced(["search", "search"], ["search"])).value == 0.5


def test_without_expected_tools_or_a_trace_there_is_no_score() -> None:
    scorer = ToolCallAccuracy()
    none = scorer(*traced(None, ["search"]))
    assert none.value is None and "expected_tool_calls" in (none.reason or "")
    # An empty expectation is one: no tool call (see test_tool_call_expectations.py).
    empty = scorer(*traced([], ["search"]))
    assert (empty.value, empty.passed) == (0.0, False)
    case = EvalCase(input="do it", expected_tool_calls=["search"])
    no_trace = scorer(case, trace_trial(case, 0))
    assert no_trace.value is None and "no agent trace" in (no_trace.reason or "")


def test_an_infrastructure_failure_is_not_judged() -> None:
    case = EvalCase(input="do it", expected_tool_calls=["search"])
    trial = Trial(failure=Failure(cause=FailureCause.TIMEOUT, message="no answer within 1 s"))
    assert ToolCallAccuracy()(case, trial).value is None


def test_the_trial_record_comes_before_the_case_trace() -> None:
    case, _ = traced(["search"], ["weather"])
    live = Trial(output="done", tool_calls=[ToolCall(name="search")])
    score = ToolCallAccuracy()(case, live)
    assert score.value == 1.0 and score.details["trace_source"] == "trial"
    # An agent that only answered: the case's trace is what it did.
    answered = ToolCallAccuracy()(case, Trial(output="done"))
    assert answered.value == 0.0 and answered.details["trace_source"] == "case"


def _best_in_order(expected: list[str], called: list[str]) -> int:
    """The most expected tools matched in order, by brute force over subsequences."""
    for size in range(len(expected), 0, -1):
        for picked in itertools.combinations(expected, size):
            position = 0
            for tool in picked:
                while position < len(called) and called[position] != tool:
                    position += 1
                if position == len(called):
                    break
                position += 1
            else:
                return size
    return 0


names = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=7)


@given(expected=names.filter(bool), called=names)
def test_in_order_score_is_optimal_and_never_above_the_any_order_score(
    expected: list[str], called: list[str]
) -> None:
    ordered = ToolCallAccuracy(require_order=True)(*traced(expected, called)).value
    # Both count repeats: an order is a sequence of listings.
    unordered = ToolCallAccuracy(count_repeats=True)(*traced(expected, called)).value
    assert ordered == _best_in_order(expected, called) / len(expected)
    assert ordered is not None and unordered is not None and ordered <= unordered
    assert 0.0 <= ordered <= 1.0
