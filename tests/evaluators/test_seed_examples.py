"""Every code example of seed 004 ("Agent Evaluators"), as written there with only its import
changed from `multivon_eval` to `agenteval`, and the numbers the seed gives for them.

Where an example uses a name an earlier example defined (`EvalCase` without importing it,
`suite`, `cases`), the test defines it first, as a reader following the page would have. The
full example's import also names the two evaluators it uses without importing
(`ToolCallNecessity`, `TrajectoryEfficiency`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.evaluators.conftest import Script, block
from tests.judge.fakes import FakeOpenAI

import agenteval
from agenteval.engine.trials import trace_trial
from agenteval.judge.judge import Judge


def setting_up_an_agent_trace() -> Any:
    from agenteval import AgentStep, EvalCase, ToolCall

    case = EvalCase(
        input="Search for recent AI papers and write a summary",
        agent_trace=[
            AgentStep(
                thought="I need to search for recent papers first",
                tool_calls=[
                    ToolCall(
                        name="search",
                        arguments={"query": "AI papers 2025"},
                        result=["Paper A", "Paper B", "Paper C"],
                    )
                ],
            ),
            AgentStep(
                thought="Now I'll summarize what I found",
                tool_calls=[ToolCall(name="summarize")],
                output="Here are the key AI papers from 2025...",
            ),
        ],
        expected_tool_calls=["search", "summarize"],
    )
    return case


def test_setting_up_an_agent_trace() -> None:
    case = setting_up_an_agent_trace()
    assert case.expected_tools == ["search", "summarize"]
    score = agenteval.ToolCallAccuracy()(case, trace_trial(case, 0))
    assert (score.value, score.passed) == (1.0, True)


def test_tool_call_accuracy() -> None:
    from agenteval import ToolCallAccuracy

    ToolCallAccuracy()  # unordered set match
    ToolCallAccuracy(require_order=True)  # must match in exact order

    case = setting_up_an_agent_trace()
    assert ToolCallAccuracy().threshold == 0.7
    assert ToolCallAccuracy(require_order=True)(case, trace_trial(case, 0)).value == 1.0


async def test_tool_argument_accuracy(script: Script, judge: Judge) -> None:
    from agenteval import AgentStep, EvalCase, ToolArgumentAccuracy, ToolCall

    case = EvalCase(
        input="Search for quarterly reports from 2024",
        agent_trace=[
            AgentStep(
                tool_calls=[
                    ToolCall(
                        name="search", arguments={"query": "quarterly reports 2024", "limit": 10}
                    )
                ]
            )
        ],
    )
    ToolArgumentAccuracy()
    ToolArgumentAccuracy(threshold=0.8)

    script.set(tool_argument_accuracy=1.0)
    score = await ToolArgumentAccuracy(threshold=0.8, judge=judge)(case, trace_trial(case, 0))
    assert (score.value, score.passed) == (1.0, True)


async def test_plan_quality(script: Script, judge: Judge) -> None:
    from agenteval import AgentStep, EvalCase, PlanQuality, ToolCall

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
    PlanQuality()
    PlanQuality(threshold=0.8)

    script.set(plan_quality=0.8)
    score = await PlanQuality(threshold=0.8, judge=judge)(case, trace_trial(case, 0))
    assert (score.value, score.passed) == (0.8, True)


async def test_task_completion(script: Script, judge: Judge) -> None:
    from agenteval import AgentStep, EvalCase, TaskCompletion, ToolCall

    case = EvalCase(
        input="Book a meeting for Monday at 2pm",
        agent_trace=[
            AgentStep(
                tool_calls=[
                    ToolCall(name="create_event", arguments={"day": "Monday", "time": "14:00"})
                ]
            ),
        ],
    )
    TaskCompletion()
    TaskCompletion(threshold=0.9)

    script.set(task_completion=1.0)
    score = await TaskCompletion(threshold=0.9, judge=judge)(case, trace_trial(case, 0))
    assert (score.value, score.passed) == (1.0, True)
    assert "create_event" in (block(script.asked[0][1], "trace") or "")


async def test_step_faithfulness(script: Script, judge: Judge) -> None:
    from agenteval import AgentStep, EvalCase, StepFaithfulness, ToolCall

    case = EvalCase(
        input="Find the cheapest flight to NYC and book it",
        agent_trace=[
            AgentStep(
                thought="Searching for flights", tool_calls=[ToolCall(name="search_flights")]
            ),
            AgentStep(
                thought="Booking the cheapest result found",
                tool_calls=[ToolCall(name="book_flight")],
            ),
        ],
    )
    StepFaithfulness()
    StepFaithfulness(threshold=0.8)

    script.set(step_faithfulness=1.0)
    score = await StepFaithfulness(judge=judge)(case, trace_trial(case, 0))
    assert score.value == 1.0 and score.details["judged"] == 2


async def test_tool_call_necessity(script: Script, judge: Judge) -> None:
    from agenteval import AgentStep, EvalCase, ToolCall, ToolCallNecessity

    ToolCallNecessity()

    # Agent calls search() twice with the same query — second call is redundant
    case = EvalCase(
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
    # Expected ToolCallNecessity score: 0.5 (1 of 2 calls necessary)

    script.set(
        tool_call_necessity=lambda body: (
            1.0 if (block(body, "prior_calls") or "").startswith("(none") else 0.0
        )
    )
    score = await ToolCallNecessity(judge=judge)(case, trace_trial(case, 0))
    assert score.value == 0.5


async def test_trajectory_efficiency(script: Script, judge: Judge) -> None:
    from agenteval import AgentStep, EvalCase, ToolCall, TrajectoryEfficiency

    TrajectoryEfficiency()

    # Agent hits a 404 on the first tool call and tries the same call again unchanged
    case = EvalCase(
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
    # Base score might be 0.67 (completes task, proportionate steps, but repeats a failed call)
    # Recovery penalty: -0.2 (agent re-ran the same failing call without modification)
    # Final TrajectoryEfficiency score: 0.47

    script.set(
        trajectory_efficiency_detours=1.0,
        trajectory_efficiency_proportionate=1.0,
        trajectory_efficiency_repeats=0.0,
        trajectory_efficiency_recovery=0.0,
    )
    score = await TrajectoryEfficiency(judge=judge)(case, trace_trial(case, 0))
    assert round(score.details["base_score"], 2) == 0.67
    assert score.value is not None and round(score.value, 2) == 0.47


def test_agent_memory_eval(tmp_path: Path) -> None:
    suite = agenteval.EvalSuite("memory", store=tmp_path / "runs.db")

    from agenteval import AgentMemoryEval, EvalCase

    case = EvalCase(
        input="What did I ask you to prioritize last session?",
        context="Prior session (2025-11-10): User asked to prioritize the auth module. They mentioned the deadline is end of November.",
        expected_output="auth module",
    )
    suite.add_evaluators(AgentMemoryEval())
    suite.add_evaluators(AgentMemoryEval(threshold=0.8))

    names = [evaluator.name for evaluator in suite.evaluators]
    assert names == ["agent_memory_eval", "agent_memory_eval[threshold=0.8]"]
    assert case.context and case.expected_output == "auth module"


def test_full_agent_eval_example(
    script: Script, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTEVAL_JUDGE", "openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    script.set(
        tool_argument_accuracy=1.0,
        tool_call_necessity=1.0,
        trajectory_efficiency_detours=1.0,
        trajectory_efficiency_proportionate=1.0,
        trajectory_efficiency_repeats=1.0,
        plan_quality=0.9,
        task_completion=0.9,
    )
    cases = [setting_up_an_agent_trace()]

    from agenteval import (
        EvalSuite,
        PlanQuality,
        TaskCompletion,
        ToolArgumentAccuracy,
        ToolCallAccuracy,
        ToolCallNecessity,
        TrajectoryEfficiency,
    )

    def run_agent(task: str) -> str:
        # Your agent here — returns final output
        ...

    # Build traces from your agent framework
    # then wrap in EvalCase
    suite = EvalSuite("Agent Eval")
    suite.add_cases(cases)
    suite.add_evaluators(
        ToolCallAccuracy(require_order=False),
        ToolArgumentAccuracy(),
        ToolCallNecessity(),
        TrajectoryEfficiency(),
        PlanQuality(),
        TaskCompletion(threshold=0.85),
    )

    report = suite.run(run_agent)

    assert isinstance(report, agenteval.Run)
    (result,) = report.results
    values = {name: score.value for name, score in result.scores.items()}
    assert values == {
        "tool_call_accuracy": 1.0,
        "tool_argument_accuracy": 1.0,
        "tool_call_necessity": 1.0,
        "trajectory_efficiency": 1.0,
        "plan_quality": 0.9,
        "task_completion[threshold=0.85]": 0.9,
    }
    assert all(score.passed for score in result.scores.values())
    assert (tmp_path / ".agenteval" / "runs.db").exists()
