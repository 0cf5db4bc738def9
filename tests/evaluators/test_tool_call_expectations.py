"""`ToolCallAccuracy` as seed 004 and multivon-eval 0.20 define it: an empty expectation is an
expectation ("no calls"), the default is a set match, `penalize_unexpected` lowers the score
for tools nobody expected, and the reason names the missing and the unexpected tools.

The multivon cases below restate, with our own inputs and numbers, what multivon-eval 0.20's
own tests expect of its `ToolCallAccuracy` (`tests/test_agent_evaluators.py`,
`tests/test_multivon_eval.py`, `tests/test_audit_measurement_integrity.py`,
`tests/test_acceptance_policy.py`, `tests/test_agent_judgment_evidence.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenteval import AgentStep, EvalCase, ToolArgumentAccuracy, ToolCall, ToolCallAccuracy, Trial
from agenteval.engine.trials import trace_trial
from agenteval.score import Score


def steps(*calls: str | Sequence[str]) -> list[AgentStep]:
    """One step per item: a tool name, or the names of the calls made in that step."""
    return [
        AgentStep(tool_calls=[ToolCall(name=n) for n in ([c] if isinstance(c, str) else c)])
        for c in calls
    ]


def score(
    scorer: ToolCallAccuracy,
    expected: list[str] | None,
    trace: list[AgentStep] | None,
) -> Score:
    case = EvalCase(input="do it", agent_trace=trace, expected_tool_calls=expected)
    return scorer(case, trace_trial(case, 0))


# --- an empty expectation is an expectation ------------------------------------------------------


@pytest.mark.parametrize(
    "scorer",
    [
        ToolCallAccuracy(),
        ToolCallAccuracy(require_order=True),
        ToolCallAccuracy(penalize_unexpected=True),
        ToolCallAccuracy(count_repeats=True),
    ],
    ids=lambda s: s.name,
)
def test_no_calls_expected_passes_when_none_made_and_fails_on_any(
    scorer: ToolCallAccuracy,
) -> None:
    none_made = score(scorer, [], [])
    assert (none_made.value, none_made.passed) == (1.0, True)
    assert "no tools expected" in (none_made.reason or "")
    # A step that answered directly made no call either.
    direct = score(scorer, [], [AgentStep(thought="I know this", output="42")])
    assert (direct.value, direct.passed) == (1.0, True)

    called = score(scorer, [], steps("lookup_order", "refund_order", "refund_order"))
    assert (called.value, called.passed) == (0.0, False)
    reason = called.reason or ""
    assert "lookup_order" in reason and "refund_order" in reason
    assert called.details["unexpected"] == ["lookup_order", "refund_order"]


def test_no_calls_expected_reads_the_live_trial_first() -> None:
    case = EvalCase(input="What is 6 x 7?", expected_tool_calls=[])
    answered = ToolCallAccuracy()(case, Trial(output="42"))
    assert (answered.value, answered.details["trace_source"]) == (1.0, "trial")
    searched = ToolCallAccuracy()(case, Trial(output="42", tool_calls=[ToolCall(name="search")]))
    assert searched.value == 0.0 and "search" in (searched.reason or "")


def test_only_an_absent_expectation_or_a_missing_trace_gives_no_score() -> None:
    absent = score(ToolCallAccuracy(), None, steps("search"))
    assert absent.value is None and "expected_tool_calls" in (absent.reason or "")
    # With no trace at all nothing shows that no tool was called: no score, not a pass.
    unseen = score(ToolCallAccuracy(), [], None)
    assert unseen.value is None and "no agent trace" in (unseen.reason or "")


# --- the default is seed 004's set match ---------------------------------------------------------


def test_by_default_a_tool_listed_twice_is_met_by_one_call() -> None:
    one = score(ToolCallAccuracy(), ["search", "search"], steps("search"))
    assert (one.value, one.passed) == (1.0, True)
    assert one.details["missing"] == []
    # The seed's table: all, half and none of the (distinct) expected tools.
    assert score(ToolCallAccuracy(), ["a", "b", "a"], steps("b")).value == 0.5
    assert score(ToolCallAccuracy(), ["a", "b"], steps("c", "c")).value == 0.0


def test_count_repeats_makes_each_listing_need_its_own_call() -> None:
    scorer = ToolCallAccuracy(count_repeats=True)
    assert scorer.name == "tool_call_accuracy[count_repeats]"
    half = score(scorer, ["search", "search"], steps("search"))
    assert (half.value, half.passed) == (0.5, False)
    assert half.details["missing"] == ["search"]
    assert "missing: search" in (half.reason or "")
    assert score(scorer, ["search", "search"], steps("search", "search")).value == 1.0


def distinct(names: list[str]) -> set[str]:
    return set(names)


names = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=7)


@given(expected=names.filter(bool), called=names)
def test_the_default_score_is_the_share_of_distinct_expected_tools_called(
    expected: list[str], called: list[str]
) -> None:
    want, got = distinct(expected), distinct(called)
    assert score(ToolCallAccuracy(), expected, steps(*called)).value == len(want & got) / len(want)
    # Strict mode is the Jaccard index of the two sets (multivon's matched / |E ∪ U|).
    strict = score(ToolCallAccuracy(penalize_unexpected=True), expected, steps(*called))
    assert strict.value == len(want & got) / len(want | got)
    # Counting repeats: the listings met by a call of their own, over all the listings.
    left = list(called)
    met = 0
    for tool in expected:
        if tool in left:
            left.remove(tool)
            met += 1
    repeats = score(ToolCallAccuracy(count_repeats=True), expected, steps(*called))
    assert repeats.value == met / len(expected)


# --- multivon-eval 0.20's own expectations -------------------------------------------------------

WEATHER = ["fetch_forecast", "write_summary"]


def test_multivon_all_expected_tools_called_in_any_order_pass() -> None:
    passed = score(ToolCallAccuracy(), WEATHER, steps("write_summary", "fetch_forecast"))
    assert (passed.value, passed.passed) == (1.0, True)


def test_multivon_a_missing_and_an_unexpected_tool_are_both_named() -> None:
    result = score(ToolCallAccuracy(), WEATHER, steps(["fetch_forecast", "translate"]))
    assert (result.value, result.passed) == (0.5, False)
    reason = result.reason or ""
    assert "missing: write_summary" in reason
    assert "unexpected: translate" in reason
    assert result.details["unexpected"] == ["translate"]


def test_multivon_an_observed_trace_without_calls_scores_zero_not_skipped() -> None:
    for trace in ([], [AgentStep(thought="I can answer this myself")]):
        result = score(ToolCallAccuracy(), ["fetch_forecast"], trace)
        assert (result.value, result.passed) == (0.0, False)


def test_multivon_in_order_scoring() -> None:
    ordered = ToolCallAccuracy(require_order=True)
    swapped = score(ordered, WEATHER, steps("write_summary", "fetch_forecast"))
    assert (swapped.value, swapped.passed) == (0.5, False)
    # Extra calls around the expected ones, in order, cost nothing.
    around = steps("read_cache", "fetch_forecast", "log", "write_summary")
    assert score(ordered, WEATHER, around).value == 1.0
    assert score(ordered, ["x", "y", "z"], steps("x", "y", "z")).value == 1.0
    assert (score(ordered, ["x", "y", "z"], steps("y", "x", "z")).value or 1.0) < 1.0


def test_multivon_by_default_extra_tools_are_reported_not_penalized() -> None:
    result = score(ToolCallAccuracy(), ["get_invoice"], steps(["get_invoice", "void_invoice"]))
    assert (result.value, result.passed) == (1.0, True)
    assert "unexpected: void_invoice" in (result.reason or "")
    assert "not penalized" in (result.reason or "")


def test_multivon_strict_mode_divides_by_expected_and_unexpected_tools() -> None:
    strict = ToolCallAccuracy(penalize_unexpected=True)
    assert strict.name == "tool_call_accuracy[penalize_unexpected]"
    result = score(strict, ["get_invoice"], steps(["get_invoice", "void_invoice"]))
    assert (result.value, result.passed) == (0.5, False)
    reason = result.reason or ""
    assert "unexpected: void_invoice" in reason and "penalize_unexpected" in reason
    # No extras: the same as the default.
    alone = score(strict, ["get_invoice"], steps("get_invoice"))
    assert (alone.value, alone.passed) == (1.0, True)


def test_multivon_strict_in_order_counts_each_unexpected_call() -> None:
    scorer = ToolCallAccuracy(require_order=True, penalize_unexpected=True)
    assert scorer.name == "tool_call_accuracy[require_order,penalize_unexpected]"
    # 3 expected calls matched in order, 1 unexpected call: 3 / (3 + 1).
    repeated = score(scorer, ["p", "p", "p"], steps("p", "p", "p", "q"))
    assert repeated.value == 0.75
    # Ordered, repeats count: 1 matched / (1 expected + 2 calls of q).
    assert score(scorer, ["p"], steps("p", "q", "q")).value == pytest.approx(1 / 3)
    # A set match counts q once: 1 / |{p} ∪ {q}|.
    assert score(ToolCallAccuracy(penalize_unexpected=True), ["p"], steps("p", "q", "q")).value == (
        0.5
    )
    # An expected tool called out of order is missing, not unexpected.
    swapped = score(scorer, WEATHER, steps("write_summary", "fetch_forecast"))
    assert (swapped.value, swapped.details["unexpected"]) == (0.5, [])


def test_multivon_strict_with_count_repeats_counts_each_unexpected_call() -> None:
    scorer = ToolCallAccuracy(count_repeats=True, penalize_unexpected=True)
    assert scorer.name == "tool_call_accuracy[penalize_unexpected,count_repeats]"
    assert score(scorer, ["p", "p"], steps("p", "q", "q")).value == 0.25


def test_multivon_no_calls_expected_needs_a_trace_to_pass() -> None:
    assert score(ToolCallAccuracy(), [], None).value is None
    assert score(ToolCallAccuracy(), [], []).passed is True
    assert score(ToolCallAccuracy(), [], [AgentStep(output="direct answer")]).passed is True


@given(expected=names.filter(bool), called=names, order=st.booleans(), repeats=st.booleans())
def test_every_setting_scores_within_zero_and_one_and_strict_never_above_lenient(
    expected: list[str], called: list[str], order: bool, repeats: bool
) -> None:
    lenient = ToolCallAccuracy(require_order=order, count_repeats=repeats)
    strict = ToolCallAccuracy(require_order=order, count_repeats=repeats, penalize_unexpected=True)
    low = score(strict, expected, steps(*called)).value
    high = score(lenient, expected, steps(*called)).value
    assert low is not None and high is not None
    assert 0.0 <= low <= high <= 1.0


# --- the other evaluators: where "no tools expected" has no meaning, the reason says why -------


async def test_argument_accuracy_without_calls_says_why_it_has_no_score() -> None:
    # Arguments exist only on calls made; whether a call was expected is another question.
    case = EvalCase(input="Say hello", agent_trace=[AgentStep(output="hello")], expected_tools=[])
    result = await ToolArgumentAccuracy()(case, trace_trial(case, 0))
    assert result.value is None
    reason = result.reason or ""
    assert "no tool calls" in reason and "tool_call_accuracy" in reason
