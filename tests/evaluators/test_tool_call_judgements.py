"""`ToolCallNecessity` and `ToolArgumentAccuracy`: one verdict per tool call, with the calls
before it in view, at most 8 calls; against a loopback judge."""

from __future__ import annotations

from typing import Any

from tests.evaluators.conftest import Script, block

from agenteval import (
    AgentStep,
    EvalCase,
    ToolArgumentAccuracy,
    ToolCall,
    ToolCallNecessity,
    Trial,
)
from agenteval.agents.tools import ToolSpec
from agenteval.engine.trials import trace_trial
from agenteval.judge.judge import Judge
from agenteval.scorers.context import ScoringContext

REPEATED_SEARCH = EvalCase(
    input="Find the latest Python release",
    agent_trace=[
        AgentStep(
            tool_calls=[ToolCall(name="search", arguments={"query": "Python latest release"})]
        ),
        AgentStep(
            tool_calls=[ToolCall(name="search", arguments={"query": "Python latest release"})]
        ),
        AgentStep(output="Python 3.13 was released in October 2024."),
    ],
)


def first_call_only(body: dict[str, Any]) -> float:
    """Necessary when nothing was called before it; a repeat is not."""
    prior = block(body, "prior_calls") or ""
    return 1.0 if prior.startswith("(none") else 0.0


def many_calls(count: int) -> EvalCase:
    return EvalCase(
        input="Look up every city",
        agent_trace=[
            AgentStep(tool_calls=[ToolCall(name="lookup", arguments={"city": f"c{i}"})])
            for i in range(count)
        ],
    )


async def test_a_repeated_search_makes_necessity_one_half(script: Script, judge: Judge) -> None:
    script.set(tool_call_necessity=first_call_only)
    score = await ToolCallNecessity(judge=judge)(REPEATED_SEARCH, trace_trial(REPEATED_SEARCH, 0))
    assert (score.value, score.passed) == (0.5, False)
    assert score.name == "tool_call_necessity"
    assert score.details["necessary"] == 1 and score.details["judged"] == 2
    assert "call 2 (search) was not" in (score.reason or "")
    # One verdict per call; the second sees the first (with its arguments) as a prior call.
    assert script.templates() == ["tool_call_necessity"] * 2
    priors = sorted(block(body, "prior_calls") or "" for _, body in script.asked)
    assert priors[0].startswith("(none") and priors[1].startswith("[1] search(")
    system = script.asked[0][1]["messages"][0]["content"]
    assert "strictly necessary to make progress on the task" in system
    # Tokens and the judge are accounted for across both verdicts.
    assert score.usage is not None and score.usage.input_tokens == 24
    assert score.judge is not None and score.judge.samples == 2
    assert score.judge.template == "tool_call_necessity"


async def test_no_tool_calls_is_full_necessity_without_asking(script: Script, judge: Judge) -> None:
    case = EvalCase(input="Say hi", agent_trace=[AgentStep(output="Hi!")])
    score = await ToolCallNecessity(judge=judge)(case, trace_trial(case, 0))
    assert score.value == 1.0 and score.reason == "no tool calls made"
    assert script.asked == []


async def test_at_most_eight_calls_are_judged_and_details_say_how_many_were_not(
    script: Script, judge: Judge
) -> None:
    script.set(tool_call_necessity=1.0, tool_argument_accuracy=0.5)
    case = many_calls(11)
    necessity = await ToolCallNecessity(judge=judge)(case, trace_trial(case, 0))
    assert necessity.value == 1.0
    assert (necessity.details["judged"], necessity.details["left_out"]) == (8, 3)
    assert "3 of 11 left out" in (necessity.reason or "")
    arguments = await ToolArgumentAccuracy(judge=judge)(case, trace_trial(case, 0))
    assert arguments.value == 0.5 and arguments.details["left_out"] == 3
    assert len(script.asked) == 16


async def test_argument_accuracy_is_the_mean_of_per_call_verdicts(
    script: Script, judge: Judge
) -> None:
    case = EvalCase(
        input="Search for quarterly reports from 2024",
        agent_trace=[
            AgentStep(
                tool_calls=[
                    ToolCall(
                        name="search", arguments={"query": "quarterly reports 2024", "limit": 10}
                    ),
                    ToolCall(name="search", arguments={"q": 2023}),
                ]
            )
        ],
    )
    script.set(
        tool_argument_accuracy=lambda body: 1.0 if "2024" in (block(body, "call") or "") else 0.0
    )
    score = await ToolArgumentAccuracy(threshold=0.8, judge=judge)(case, trace_trial(case, 0))
    assert (score.value, score.passed) == (0.5, False)
    assert score.name == "tool_argument_accuracy[threshold=0.8]"
    assert [v["score"] for v in score.details["verdicts"]] == [1.0, 0.0]
    assert "lowest, call 2 (search)" in (score.reason or "")


async def test_the_run_s_tool_schema_is_shown_to_the_judge(script: Script, judge: Judge) -> None:
    script.set(tool_argument_accuracy=1.0)
    spec = ToolSpec(
        name="search",
        description="Search.",
        parameters={"type": "object", "properties": {"query": {"type": "string"}}},
    )
    bound = ToolArgumentAccuracy().for_run(ScoringContext(tools={"search": spec}, judge=judge))
    case = EvalCase(input="Search", agent_trace=[AgentStep(tool_calls=[ToolCall(name="search")])])
    assert (await bound(case, trace_trial(case, 0))).value == 1.0
    assert '"query"' in (block(script.asked[0][1], "tool_schema") or "")


async def test_a_failed_verdict_is_an_error_not_a_partial_count(
    script: Script, judge: Judge
) -> None:
    # The judge refuses the second call's question every time: no count over the first alone.
    script.set(tool_call_necessity=lambda body: 1.0 if first_call_only(body) else 7.0)
    score = await ToolCallNecessity(judge=judge)(REPEATED_SEARCH, trace_trial(REPEATED_SEARCH, 0))
    assert score.value is None and score.error is not None
    assert "failed" in score.error
    assert score.judge is not None and score.judge.failed_samples == 1


async def test_without_calls_to_judge_argument_accuracy_gives_no_score(judge: Judge) -> None:
    case = EvalCase(input="Say hi", agent_trace=[AgentStep(output="Hi!")])
    score = await ToolArgumentAccuracy(judge=judge)(case, trace_trial(case, 0))
    assert score.value is None and (score.reason or "").startswith("no tool calls to judge")


async def test_calls_a_live_agent_recorded_are_judged(script: Script, judge: Judge) -> None:
    script.set(tool_call_necessity=first_call_only)
    case = EvalCase(input="Find the latest Python release")
    trial = Trial(
        output="3.13",
        tool_calls=[ToolCall(name="search", arguments={"q": "python"})] * 2,
    )
    score = await ToolCallNecessity(judge=judge)(case, trial)
    assert score.value == 0.5 and score.details["trace_source"] == "trial"
