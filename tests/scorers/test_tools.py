"""The tool-use scorers: selection, arguments, execution, order, efficiency, redundancy."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agenteval.agents.tools import ToolSpec
from agenteval.case import EvalCase
from agenteval.errors import ScorerError
from agenteval.score import Score
from agenteval.scorers.tools import (
    RedundantCalls,
    StepEfficiency,
    ToolArgumentsValid,
    ToolExecution,
    ToolSelection,
    TrajectoryOrder,
    call_error,
    canonical_arguments,
)
from agenteval.trace import Failure, FailureCause, ToolCall, Trial

TOOLS = {
    "search": ToolSpec(
        name="search",
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
    "calculator": ToolSpec(
        name="calculator",
        parameters={
            "type": "object",
            "properties": {"expression": {"type": "string"}},
            "required": ["expression"],
        },
    ),
    "clock": ToolSpec(name="clock"),
}


def call(name: str, result: Any = "ok", error: str | None = None, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments, result=result, error=error)


def trial(*calls: ToolCall, output: str | None = "done") -> Trial:
    return Trial(output=output, tool_calls=list(calls))


def timed_out(*calls: ToolCall) -> Trial:
    return Trial(
        tool_calls=list(calls), failure=Failure(cause=FailureCause.TIMEOUT, message="ran past 30s")
    )


NOT_JUDGED = "not judged: the trial failed for an infrastructure reason (timeout: ran past 30s)"


def case(**fields: Any) -> EvalCase:
    return EvalCase(input="How many people live in Springfield?", **fields)


def assert_not_applied(score: Score, reason_part: str) -> None:
    assert score.value is None
    assert score.passed is None
    assert score.reason is not None
    assert reason_part in score.reason


def assert_json(score: Score) -> None:
    json.dumps(score.details)


# --- tool_selection ----------------------------------------------------------------------------

select = ToolSelection()


def test_selection_passes_when_every_needed_tool_was_called() -> None:
    score = select(
        case(expected_tools=["search", "calculator"]),
        trial(call("calculator", expression="1+1"), call("search", query="x")),
    )
    assert (score.value, score.passed) == (1.0, True)
    assert score.details["missing"] == {}


def test_selection_counts_a_tool_needed_twice() -> None:
    score = select(
        case(expected_tools=["search", "search"]),
        trial(call("search", query="a"), call("calculator", expression="1")),
    )
    assert (score.value, score.passed) == (0.0, False)
    assert score.reason == "search called 1 time, needed 2"
    assert score.details["needed"] == {"search": 2}
    assert score.details["called"] == {"search": 1, "calculator": 1}
    assert score.details["missing"] == {"search": 1}
    assert_json(score)


def test_selection_passes_with_extra_calls() -> None:
    score = select(
        case(expected_tools=["search"]),
        trial(call("search", query="a"), call("search", query="b"), call("clock")),
    )
    assert score.passed is True


def test_selection_fails_an_answer_from_memory_even_if_right() -> None:
    score = select(case(expected_tools=["search"]), trial(output="19,753"))
    assert (score.value, score.passed) == (0.0, False)
    assert score.reason is not None
    assert "without calling any tool" in score.reason


def test_selection_names_a_tool_never_called() -> None:
    score = select(case(expected_tools=["search", "calculator"]), trial(call("search", query="a")))
    assert score.reason == "calculator never called"


def test_selection_counts_calls_that_failed() -> None:
    # Whether the call worked is tool_execution's question, not this one's.
    score = select(case(expected_tools=["search"]), trial(call("search", error="Timeout")))
    assert score.passed is True


def test_selection_with_no_tools_needed_passes() -> None:
    score = select(case(expected_tools=[]), trial(output="hi"))
    assert (score.value, score.passed, score.reason) == (1.0, True, "no tools needed")


def test_selection_does_not_apply_without_expected_tools() -> None:
    assert_not_applied(select(case(), trial(call("search"))), "no expected_tools")


def test_selection_is_not_judged_after_an_infrastructure_failure() -> None:
    score = select(case(expected_tools=["search"]), timed_out())
    assert (score.value, score.reason) == (None, NOT_JUDGED)
    # Even the calls made before the timeout are not judged: the trial was cut short.
    score = select(case(expected_tools=["search", "search"]), timed_out(call("search")))
    assert (score.value, score.reason) == (None, NOT_JUDGED)


@pytest.mark.parametrize(
    "cause",
    [FailureCause.AGENT_ERROR, FailureCause.NO_RESPONSE, FailureCause.INVALID_OUTPUT],
)
def test_selection_judges_a_trial_the_agent_failed_without_calls(cause: FailureCause) -> None:
    failed = Trial(failure=Failure(cause=cause, message="boom"))
    score = select(case(expected_tools=["search"]), failed)
    assert (score.value, score.passed) == (0.0, False)
    assert score.reason == (
        f"called no tool; needed search (1 time); the trial gave no answer ({cause.value}: boom)"
    )


def test_selection_judges_a_trial_with_no_answer_and_no_failure() -> None:
    score = select(case(expected_tools=["search"]), trial(output=None))
    assert score.value == 0.0
    assert score.reason == "called no tool; needed search (1 time); the trial gave no answer"


def test_selection_judges_an_agent_that_crashed_after_calling() -> None:
    # The agent's own exception is not infrastructure: having made a call, it responded.
    crashed = Trial(
        tool_calls=[call("search", query="a")],
        failure=Failure(cause=FailureCause.AGENT_ERROR, message="boom"),
    )
    score = select(case(expected_tools=["search", "calculator"]), crashed)
    assert (score.value, score.reason) == (0.0, "calculator never called")


# --- tool_arguments_valid ----------------------------------------------------------------------

arguments_valid = ToolArgumentsValid(TOOLS)


def test_arguments_valid_when_every_call_fits_its_schema() -> None:
    score = arguments_valid(
        case(),
        trial(call("search", query="x", limit=3), call("calculator", expression="1+1")),
    )
    assert (score.value, score.passed) == (1.0, True)
    assert score.details["invalid"] == []


def test_arguments_invalid_lists_each_bad_call() -> None:
    score = arguments_valid(
        case(),
        trial(
            call("search", query="x"),
            call("search", limit=3),
            call("search", query="x", limit="three"),
            call("search", query="x", page=2),
        ),
    )
    assert (score.value, score.passed) == (0.0, False)
    invalid = score.details["invalid"]
    assert [item["index"] for item in invalid] == [1, 2, 3]
    assert "'query' is a required property" in invalid[0]["problem"]
    assert invalid[1]["problem"].startswith("limit: ")
    assert "'page'" in invalid[2]["problem"]
    assert score.reason is not None
    assert score.reason.startswith("3 of 4 calls invalid; call 2 (search): ")
    assert_json(score)


def test_an_unknown_tool_is_invalid_with_a_suggestion() -> None:
    score = arguments_valid(case(), trial(call("serch", query="x")))
    assert score.passed is False
    assert score.details["invalid"][0]["problem"] == "unknown tool 'serch' (did you mean 'search'?)"


def test_a_tool_without_a_schema_accepts_any_arguments() -> None:
    score = arguments_valid(case(), trial(call("clock", zone="UTC")))
    assert score.passed is True


def test_arguments_valid_does_not_apply_without_tool_schemas() -> None:
    for scorer in (ToolArgumentsValid(), ToolArgumentsValid({})):
        assert_not_applied(scorer(case(), trial(call("search"))), "no tool schemas known")


def test_arguments_valid_does_not_apply_without_calls() -> None:
    assert_not_applied(arguments_valid(case(), trial()), "no tool calls")


def test_an_invalid_tool_schema_is_a_scorer_error() -> None:
    broken = ToolArgumentsValid({"bad": ToolSpec(name="bad", parameters={"type": "nonsense"})})
    with pytest.raises(ScorerError, match="'bad' has an invalid JSON schema"):
        broken(case(), trial(call("bad")))


def test_validators_follow_a_tool_declared_again() -> None:
    tools = dict(TOOLS)
    scorer = ToolArgumentsValid(tools)
    assert scorer(case(), trial(call("clock", zone="UTC"))).passed is True
    tools["clock"] = ToolSpec(
        name="clock", parameters={"type": "object", "additionalProperties": False}
    )
    assert scorer(case(), trial(call("clock", zone="UTC"))).passed is False


# --- tool_execution ----------------------------------------------------------------------------

execution = ToolExecution(TOOLS)


def test_execution_passes_when_every_call_ran() -> None:
    score = execution(case(), trial(call("search", query="x"), call("calculator", expression="1")))
    assert (score.value, score.passed) == (1.0, True)
    assert score.details == {"checked": 2, "failed": []}


def test_execution_fails_on_a_raised_error() -> None:
    score = execution(
        case(),
        trial(
            call("search", query="x"),
            call("search", result=None, error="TimeoutError: slow", query="y"),
        ),
    )
    assert (score.value, score.passed) == (0.0, False)
    assert score.details["failed"] == [
        {"index": 1, "name": "search", "error": "TimeoutError: slow"}
    ]
    assert score.reason == "1 of 2 calls failed; call 2 (search): TimeoutError: slow"


@pytest.mark.parametrize(
    "result",
    [{"error": "no such city"}, {"isError": True, "content": []}],
)
def test_execution_fails_on_an_error_reported_in_the_result(result: dict[str, Any]) -> None:
    score = execution(case(), trial(call("search", result=result, query="x")))
    assert score.passed is False


@pytest.mark.parametrize(
    "result",
    [
        {"error": None, "rows": 3},
        {"error": "", "rows": 3},
        {"isError": False},
        "error: this is just text",
        ["error"],
    ],
)
def test_execution_passes_results_that_report_no_error(result: Any) -> None:
    score = execution(case(), trial(call("search", result=result, query="x")))
    assert score.passed is True


def test_execution_leaves_invalid_calls_to_the_arguments_rung() -> None:
    score = execution(
        case(),
        trial(call("search", query="x"), call("search", error="bad input", limit=1)),
    )
    assert score.passed is True
    assert score.details["checked"] == 1


def test_execution_does_not_apply_when_no_call_had_valid_arguments() -> None:
    score = execution(case(), trial(call("serch", error="unknown tool", query="x")))
    assert_not_applied(score, "no call had valid arguments")


def test_execution_without_known_tools_checks_every_call() -> None:
    score = ToolExecution()(case(), trial(call("anything", error="boom")))
    assert score.passed is False
    assert score.details["checked"] == 1


def test_execution_does_not_apply_without_calls() -> None:
    assert_not_applied(execution(case(), trial()), "no tool calls")


def test_call_error_rule() -> None:
    assert call_error(call("search")) is None
    assert call_error(call("search", error="boom")) == "boom"
    assert call_error(call("search", result={"error": "nope"})) == "result reports an error: nope"
    assert call_error(call("search", result={"isError": True})) == "result reports isError: true"


def test_call_error_reads_a_json_string_result_as_its_object() -> None:
    # Many tool wrappers return their result as JSON text: the same rule applies to it.
    assert call_error(call("s", result='{"error": "not found"}')) == (
        "result reports an error: not found"
    )
    assert call_error(call("s", result=' {"isError": true, "content": []}\n')) == (
        "result reports isError: true"
    )
    assert call_error(call("s", result='{"error": null, "rows": 3}')) is None
    assert call_error(call("s", result='{"isError": "true"}')) is None


@pytest.mark.parametrize(
    "result",
    ['{"error": "not found"}', '{"isError": true, "content": []}'],
)
def test_execution_fails_on_an_error_in_a_json_string_result(result: str) -> None:
    score = execution(case(), trial(call("search", result=result, query="x")))
    assert (score.value, score.passed) == (0.0, False)
    assert score.details["failed"][0]["error"].startswith("result reports ")


def test_execution_names_the_error_of_a_json_string_result() -> None:
    score = execution(case(), trial(call("search", result='{"error": "not found"}', query="x")))
    assert (
        score.reason == "1 of 1 calls failed; call 1 (search): result reports an error: not found"
    )


@pytest.mark.parametrize(
    "result",
    [
        '{"error": null, "rows": 3}',
        '{"error": ""}',
        '[{"error": "inside a list item, not the result"}]',
        '{"error": "not json',
        "{error}",
        '"error"',
    ],
)
def test_execution_passes_json_strings_that_report_no_error(result: str) -> None:
    score = execution(case(), trial(call("search", result=result, query="x")))
    assert score.passed is True


def test_retrying_a_call_whose_json_string_reported_an_error_is_fine() -> None:
    score = redundant(
        case(),
        trial(
            call("search", result='{"error": "rate limited"}', query="a"),
            call("search", result='{"rows": []}', query="a"),
        ),
    )
    assert score.passed is True


# --- trajectory_order --------------------------------------------------------------------------

order = TrajectoryOrder()


def test_trajectory_in_order_passes() -> None:
    score = order(
        case(expected_trajectory=["search", "calculator"]),
        trial(call("search", query="x"), call("calculator", expression="1")),
    )
    assert (score.value, score.passed) == (1.0, True)
    assert score.details["matched_calls"] == [0, 1]


def test_trajectory_allows_other_calls_in_between() -> None:
    score = order(
        case(expected_trajectory=["search", "calculator"]),
        trial(call("clock"), call("search"), call("clock"), call("search"), call("calculator")),
    )
    assert score.passed is True
    assert score.details["matched_calls"] == [1, 4]


def test_trajectory_out_of_order_fails() -> None:
    score = order(
        case(expected_trajectory=["search", "calculator"]),
        trial(call("calculator", expression="1"), call("search", query="x")),
    )
    assert (score.value, score.passed) == (0.0, False)
    assert score.details["matched"] == 1
    assert score.details["expected"] == 2
    assert score.details["first_unmatched"] == {
        "position": 1,
        "name": "calculator",
        "arguments": {},
    }
    assert score.reason == (
        "matched 1 of 2 expected calls; calculator was called, but not after call 2 "
        "in the expected order"
    )


def test_trajectory_with_a_missing_call_fails() -> None:
    score = order(
        case(expected_trajectory=["search", "calculator"]), trial(call("search", query="x"))
    )
    assert score.passed is False
    assert score.reason == "matched 1 of 2 expected calls; calculator was never called"


def test_trajectory_checks_expected_arguments() -> None:
    expected = case(
        expected_trajectory=[{"name": "search", "arguments": {"query": "springfield", "limit": 3}}]
    )
    # Extra arguments are fine; numbers compare by value.
    assert order(expected, trial(call("search", query="springfield", limit=3.0, page=1))).passed
    wrong = order(expected, trial(call("search", query="shelbyville", limit=3)))
    assert wrong.passed is False
    assert wrong.reason == (
        "matched 0 of 1 expected calls; search was called, "
        "but never as search(query='springfield', limit=3)"
    )
    assert order(expected, trial(call("search", query="springfield"))).passed is False


def test_trajectory_arguments_are_exact_for_strings_and_bools() -> None:
    expected = case(expected_trajectory=[{"name": "search", "arguments": {"query": "Springfield"}}])
    assert order(expected, trial(call("search", query="springfield"))).passed is False
    flagged = case(expected_trajectory=[{"name": "search", "arguments": {"exact": True}}])
    assert order(flagged, trial(call("search", exact=1))).passed is False
    assert order(flagged, trial(call("search", exact=True))).passed is True


def test_trajectory_matches_each_expected_call_to_a_different_actual_call() -> None:
    score = order(case(expected_trajectory=["search", "search"]), trial(call("search")))
    assert score.passed is False


def test_empty_trajectory_passes() -> None:
    score = order(case(expected_trajectory=[]), trial(output="hi"))
    assert (score.value, score.reason) == (1.0, "no calls expected")


def test_trajectory_does_not_apply_without_one() -> None:
    assert_not_applied(order(case(), trial(call("search"))), "no expected_trajectory")


def test_trajectory_is_not_judged_after_an_infrastructure_failure() -> None:
    score = order(case(expected_trajectory=["search"]), timed_out(call("calculator")))
    assert (score.value, score.reason) == (None, NOT_JUDGED)


def test_trajectory_judges_a_trial_the_agent_failed() -> None:
    crashed = Trial(
        tool_calls=[call("calculator")],
        failure=Failure(cause=FailureCause.INVALID_OUTPUT, message="not text"),
    )
    score = order(case(expected_trajectory=["search"]), crashed)
    assert (score.value, score.reason) == (
        0.0,
        "matched 0 of 1 expected calls; search was never called",
    )


# --- step_efficiency ---------------------------------------------------------------------------

efficiency = StepEfficiency()


def test_six_calls_for_a_three_call_task_score_a_half_and_just_pass() -> None:
    score = efficiency(
        case(max_tool_calls=3), trial(*[call("search", query=str(i)) for i in range(6)])
    )
    assert (score.value, score.passed) == (0.5, True)
    assert score.details == {"needed": 3, "made": 6, "needed_from": "max_tool_calls"}
    assert score.reason == "6 calls made, 3 needed (max_tool_calls)"


def test_seven_calls_for_a_three_call_task_fail() -> None:
    score = efficiency(case(max_tool_calls=3), trial(*[call("search") for _ in range(7)]))
    assert score.value == pytest.approx(3 / 7)
    assert score.passed is False


def test_efficiency_is_at_most_one() -> None:
    score = efficiency(case(max_tool_calls=5), trial(call("search")))
    assert (score.value, score.passed) == (1.0, True)


def test_needed_falls_back_to_trajectory_then_tools() -> None:
    four_calls = trial(*[call("search") for _ in range(4)])
    both = case(expected_trajectory=["search", "calculator"], expected_tools=["search"])
    assert efficiency(both, four_calls).details["needed_from"] == "expected_trajectory"
    assert efficiency(both, four_calls).value == 0.5
    tools_only = case(expected_tools=["search"])
    assert efficiency(tools_only, four_calls).value == 0.25


def test_max_tool_calls_wins_over_the_others() -> None:
    score = efficiency(
        case(max_tool_calls=4, expected_tools=["search"]), trial(*[call("search")] * 4)
    )
    assert score.value == 1.0


def test_no_calls_needed_and_none_made_is_efficient() -> None:
    score = efficiency(case(max_tool_calls=0), trial(output="hi"))
    assert (score.value, score.passed) == (1.0, True)


def test_calls_made_when_none_needed_score_zero() -> None:
    score = efficiency(case(expected_tools=[]), trial(call("search")))
    assert (score.value, score.passed) == (0.0, False)


def test_no_calls_made_when_some_needed_is_not_scored() -> None:
    score = efficiency(case(expected_tools=["search"]), trial(output="19,753"))
    assert_not_applied(score, "tool_selection reports the missing calls")


def test_efficiency_does_not_apply_without_a_count() -> None:
    assert_not_applied(efficiency(case(), trial(call("search"))), "no max_tool_calls")


def test_efficiency_is_not_judged_after_an_infrastructure_failure() -> None:
    score = efficiency(case(max_tool_calls=1), timed_out(call("search"), call("search")))
    assert (score.value, score.reason) == (None, NOT_JUDGED)


def test_efficiency_judges_a_trial_the_agent_failed() -> None:
    crashed = Trial(
        tool_calls=[call("search")] * 4,
        failure=Failure(cause=FailureCause.AGENT_ERROR, message="boom"),
    )
    score = efficiency(case(max_tool_calls=2), crashed)
    assert (score.value, score.passed) == (0.5, True)


def test_efficiency_threshold_is_configurable() -> None:
    strict = StepEfficiency(threshold=0.9)
    score = strict(case(max_tool_calls=3), trial(*[call("search")] * 4))
    assert (score.value, score.passed) == (0.75, False)


# --- redundant_calls ---------------------------------------------------------------------------

redundant = RedundantCalls()


def test_distinct_calls_are_not_redundant() -> None:
    score = redundant(case(), trial(call("search", query="a"), call("search", query="b")))
    assert (score.value, score.passed) == (1.0, True)


def test_repeating_a_call_that_worked_is_redundant() -> None:
    score = redundant(
        case(),
        trial(
            call("search", query="a", limit=3),
            call("calculator", expression="1"),
            call("search", limit=3.0, query="a"),  # other order, 3.0 for 3: the same call
        ),
    )
    assert (score.value, score.passed) == (0.0, False)
    assert score.details["redundant"] == [
        {"index": 2, "name": "search", "arguments": {"limit": 3, "query": "a"}, "earlier_index": 0}
    ]
    assert score.reason == (
        "1 redundant call; call 3 (search) repeats call 1, which had already worked"
    )
    assert_json(score)


def test_retrying_a_failed_call_is_fine() -> None:
    score = redundant(
        case(),
        trial(
            call("search", result=None, error="TimeoutError", query="a"),
            call("search", result={"error": "rate limited"}, query="a"),
            call("search", query="a"),
        ),
    )
    assert score.passed is True


def test_repeating_after_a_retry_that_worked_is_redundant() -> None:
    score = redundant(
        case(),
        trial(
            call("search", error="TimeoutError", query="a"),
            call("search", query="a"),
            call("search", query="a"),
        ),
    )
    assert score.passed is False
    assert score.details["redundant"][0]["earlier_index"] == 1


def test_same_arguments_for_another_tool_are_not_redundant() -> None:
    score = redundant(case(), trial(call("search", query="a"), call("lookup", query="a")))
    assert score.passed is True


def test_exempt_tools_may_repeat() -> None:
    scorer = RedundantCalls(exempt_tools=("clock",))
    assert scorer(case(), trial(call("clock"), call("clock"))).passed is True
    assert redundant(case(), trial(call("clock"), call("clock"))).passed is False


def test_redundant_calls_do_not_apply_without_calls() -> None:
    assert_not_applied(redundant(case(), trial()), "no tool calls")


def test_the_call_rungs_do_not_judge_an_infrastructure_failure() -> None:
    # Calls made before a timeout are not judged either: no score rather than a partial verdict.
    cut_short = timed_out(call("serch", query="x"), call("search", error="boom", query="x"))
    for scorer in (arguments_valid, execution, ToolExecution(), redundant):
        score = scorer(case(), cut_short)
        assert (score.value, score.passed, score.reason) == (None, None, NOT_JUDGED)
    assert execution(case(), timed_out()).reason == NOT_JUDGED


def test_the_call_rungs_judge_the_calls_of_a_trial_the_agent_failed() -> None:
    crashed = Trial(
        tool_calls=[call("serch", query="x"), call("search", error="boom", query="x")],
        failure=Failure(cause=FailureCause.AGENT_ERROR, message="boom"),
    )
    assert arguments_valid(case(), crashed).value == 0.0
    assert ToolExecution()(case(), crashed).value == 0.0
    assert redundant(case(), crashed).value == 1.0


def test_canonical_arguments() -> None:
    assert canonical_arguments({"b": 1, "a": 2.0}) == canonical_arguments({"a": 2, "b": 1.0})
    assert canonical_arguments({"a": True}) != canonical_arguments({"a": 1})
    assert canonical_arguments({"a": -0.0}) == canonical_arguments({"a": 0})
    assert canonical_arguments({"a": [1, {"c": 2.5}]}) == '{"a":[1,{"c":2.5}]}'
