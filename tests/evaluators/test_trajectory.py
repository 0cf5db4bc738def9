"""`TrajectoryEfficiency`, `PlanQuality` and `StepFaithfulness` against a loopback judge."""

from __future__ import annotations

import pytest
from tests.evaluators.conftest import Script, block

from agenteval import (
    AgentStep,
    EvalCase,
    PlanQuality,
    StepFaithfulness,
    ToolCall,
    TrajectoryEfficiency,
    Trial,
)
from agenteval.engine.trials import trace_trial
from agenteval.evaluators.agent_trace import failure_of
from agenteval.judge.judge import Judge

REPEATED_404 = EvalCase(
    input="Get the current stock price of AAPL",
    agent_trace=[
        AgentStep(
            tool_calls=[
                ToolCall(name="get_price", arguments={"ticker": "AAPL"}, result="Error: 404")
            ]
        ),
        AgentStep(
            tool_calls=[
                ToolCall(name="get_price", arguments={"ticker": "AAPL"}, result="Error: 404")
            ]
        ),
        AgentStep(output="I was unable to retrieve the price."),
    ],
)

YES_YES_NO = {
    "trajectory_efficiency_detours": 1.0,
    "trajectory_efficiency_proportionate": 1.0,
    "trajectory_efficiency_repeats": 0.0,
}


def failing(result: object = None, error: str | None = None) -> EvalCase:
    return EvalCase(
        input="Get the current stock price of AAPL",
        agent_trace=[
            AgentStep(tool_calls=[ToolCall(name="get_price", result=result, error=error)]),
            AgentStep(output="AAPL is at $190."),
        ],
    )


async def test_a_repeated_failing_call_scores_two_thirds_less_the_recovery_penalty(
    script: Script, judge: Judge
) -> None:
    script.set(**YES_YES_NO, trajectory_efficiency_recovery=0.0)
    score = await TrajectoryEfficiency(judge=judge)(REPEATED_404, trace_trial(REPEATED_404, 0))
    assert score.value == pytest.approx(2 / 3 - 0.2)
    assert round(score.value or 0, 2) == 0.47 and score.passed is False
    assert score.details["base_score"] == pytest.approx(2 / 3)
    assert (score.details["failed_calls"], score.details["recovered"]) == (2, False)
    assert score.details["penalty"] == 0.2
    assert script.templates() == sorted([*YES_YES_NO, "trajectory_efficiency_recovery"])
    assert "did not handle it (-0.2)" in (score.reason or "")
    assert "no to repeats" in (score.reason or "")
    recovery = next(body for t, body in script.asked if t == "trajectory_efficiency_recovery")
    failures = block(recovery, "failures") or ""
    assert failures.splitlines() == [
        "[1] get_price: result reports an error: Error: 404",
        "[2] get_price: result reports an error: Error: 404",
    ]
    assert "returned (reporting an error): Error: 404" in (block(recovery, "trace") or "")


async def test_without_a_failed_call_the_recovery_question_is_not_asked(
    script: Script, judge: Judge
) -> None:
    script.set(**YES_YES_NO)
    case = failing(result={"price": 190.1})
    score = await TrajectoryEfficiency(judge=judge)(case, trace_trial(case, 0))
    assert score.value == pytest.approx(2 / 3)
    assert score.details["recovered"] is None and score.details["failed_calls"] == 0
    assert "trajectory_efficiency_recovery" not in script.templates()


@pytest.mark.parametrize(
    ("case", "recovered", "expected"),
    [
        (failing(error="timeout"), 1.0, 1 / 3),
        (failing(result={"isError": True}), 0.0, 1 / 3 - 0.2),
        (failing(result='{"error": "rate limited"}'), 0.0, 1 / 3 - 0.2),
        (failing(result="ERROR 500 upstream"), 0.0, 1 / 3 - 0.2),
        (failing(result="Traceback (most recent call last):\n  ..."), 1.0, 1 / 3),
    ],
)
async def test_recovery_is_asked_for_every_kind_of_failed_call(
    script: Script, judge: Judge, case: EvalCase, recovered: float, expected: float
) -> None:
    script.set(
        trajectory_efficiency_detours=1.0,
        trajectory_efficiency_proportionate=0.0,
        trajectory_efficiency_repeats=0.0,
        trajectory_efficiency_recovery=recovered,
    )
    score = await TrajectoryEfficiency(judge=judge)(case, trace_trial(case, 0))
    assert score.value == pytest.approx(expected)


async def test_the_penalty_never_goes_below_zero(script: Script, judge: Judge) -> None:
    script.set(
        trajectory_efficiency_detours=0.0,
        trajectory_efficiency_proportionate=0.0,
        trajectory_efficiency_repeats=0.0,
        trajectory_efficiency_recovery=0.0,
    )
    case = failing(error="boom")
    score = await TrajectoryEfficiency(judge=judge)(case, trace_trial(case, 0))
    assert score.value == 0.0 and score.details["penalty"] == 0.2


async def test_plan_quality_is_the_judge_s_graded_verdict_on_the_whole_trace(
    script: Script, judge: Judge
) -> None:
    case = EvalCase(
        input="Research competitors and draft a comparison table",
        agent_trace=[
            AgentStep(
                thought="I'll search for each competitor first",
                tool_calls=[ToolCall(name="search")],
            ),
            AgentStep(
                thought="Now I'll compile the results", tool_calls=[ToolCall(name="format_table")]
            ),
        ],
    )
    script.set(plan_quality=0.75)
    score = await PlanQuality(judge=judge)(case, trace_trial(case, 0))
    assert (score.value, score.passed) == (0.75, True)
    trace = block(script.asked[0][1], "trace") or ""
    assert "thought: I'll search for each competitor first" in trace
    assert "[2] format_table({})" in trace
    assert block(script.asked[0][1], "task") == case.input


async def test_step_faithfulness_judges_each_step_with_the_earlier_ones_in_view(
    script: Script, judge: Judge
) -> None:
    case = EvalCase(
        input="Find the cheapest flight to NYC and book it",
        agent_trace=[
            AgentStep(
                thought="Searching for flights",
                tool_calls=[ToolCall(name="search_flights", result=["UA 1: $300"])],
            ),
            AgentStep(
                thought="Booking the cheapest result found",
                tool_calls=[ToolCall(name="book_flight")],
            ),
        ],
    )
    script.set(
        step_faithfulness=lambda body: 0.5 if "Booking" in (block(body, "step") or "") else 1.0
    )
    score = await StepFaithfulness(judge=judge)(case, trace_trial(case, 0))
    assert score.value == 0.75
    assert "weakest, step 2" in (score.reason or "")
    second = next(b for _, b in script.asked if "Booking" in (block(b, "step") or ""))
    assert "UA 1: $300" in (block(second, "prior_steps") or "")
    assert "[2] book_flight" in (block(second, "step") or "")


async def test_step_faithfulness_judges_at_most_eight_steps(script: Script, judge: Judge) -> None:
    case = EvalCase(
        input="Count",
        agent_trace=[AgentStep(thought=f"step {i}") for i in range(10)],
    )
    script.set(step_faithfulness=1.0)
    score = await StepFaithfulness(judge=judge)(case, trace_trial(case, 0))
    assert score.value == 1.0 and (score.details["judged"], score.details["left_out"]) == (8, 2)
    assert len(script.asked) == 8


async def test_trace_evaluators_give_no_score_without_steps(judge: Judge) -> None:
    answered = Trial(output="42")  # a live agent that answered, with no steps recorded
    case = EvalCase(input="What is 6 x 7?")
    for evaluator in (
        PlanQuality(judge=judge),
        StepFaithfulness(judge=judge),
        TrajectoryEfficiency(judge=judge),
    ):
        score = await evaluator(case, answered)
        assert score.value is None and score.reason == "no steps in the trace to judge"


@pytest.mark.parametrize(
    ("result", "failed"),
    [
        ("Error: 404", True),
        ("error:timeout", True),
        ("  ERROR 500", True),
        ("Exception: boom", True),
        ("Error handling in Python is done with try/except.", False),
        ("Errors: none", False),
        ("No error", False),
        ({"error": "not found"}, True),
        ({"error": None, "price": 3}, False),
    ],
)
def test_which_results_report_a_failure(result: object, failed: bool) -> None:
    assert (failure_of(ToolCall(name="t", result=result)) is not None) is failed
