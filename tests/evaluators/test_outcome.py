"""`TaskCompletion` and `AgentMemoryEval` against a loopback judge."""

from __future__ import annotations

from tests.evaluators.conftest import Script, block

from agenteval import AgentMemoryEval, AgentStep, EvalCase, TaskCompletion, ToolCall, Trial
from agenteval.engine.trials import trace_trial
from agenteval.judge.judge import Judge

MEETING = EvalCase(
    input="Book a meeting for Monday at 2pm",
    agent_trace=[
        AgentStep(
            tool_calls=[ToolCall(name="create_event", arguments={"day": "Monday", "time": "14:00"})]
        ),
    ],
)
MEMORY = EvalCase(
    input="What did I ask you to prioritize last session?",
    context=(
        "Prior session (2025-11-10): User asked to prioritize the auth module. "
        "They mentioned the deadline is end of November."
    ),
    expected_output="auth module",
)


async def test_task_completion_judges_the_trace_when_there_is_one(
    script: Script, judge: Judge
) -> None:
    script.set(task_completion=1.0)
    score = await TaskCompletion(threshold=0.9, judge=judge)(MEETING, trace_trial(MEETING, 0))
    assert (score.value, score.passed) == (1.0, True)
    assert score.details["judged"] == "trace"
    body = script.asked[0][1]
    assert "create_event" in (block(body, "trace") or "")
    assert block(body, "answer") is None


async def test_task_completion_without_a_trace_judges_the_output_alone(
    script: Script, judge: Judge
) -> None:
    script.set(task_completion=0.0)
    case = EvalCase(input="Book a meeting for Monday at 2pm")
    score = await TaskCompletion(judge=judge)(case, Trial(output="Done! Booked for Tuesday."))
    assert (score.value, score.passed) == (0.0, False)
    assert score.details["judged"] == "answer"
    body = script.asked[0][1]
    assert block(body, "trace") is None
    assert block(body, "answer") == "Done! Booked for Tuesday."


async def test_task_completion_with_nothing_done_gives_no_score(judge: Judge) -> None:
    case = EvalCase(input="Book a meeting", agent_trace=[])
    score = await TaskCompletion(judge=judge)(case, trace_trial(case, 0))
    assert score.value is None and "no answer and no steps" in (score.reason or "")


async def test_memory_asks_the_four_checks_when_an_expected_output_is_given(
    script: Script, judge: Judge
) -> None:
    script.set(
        agent_memory_uses_context=1.0,
        agent_memory_no_hallucination=1.0,
        agent_memory_ignores_stale=1.0,
        agent_memory_expected_output=0.0,
    )
    trial = Trial(output="You asked me to prioritize the billing module.")
    score = await AgentMemoryEval(judge=judge)(MEMORY, trial)
    assert (score.value, score.passed) == (0.75, True)
    assert score.details["checks"] == {
        "uses_context": True,
        "no_hallucination": True,
        "ignores_stale": True,
        "includes_expected": False,
    }
    assert "failed includes_expected" in (score.reason or "")
    expected = next(b for t, b in script.asked if t == "agent_memory_expected_output")
    assert block(expected, "expected_output") == "auth module"
    assert block(expected, "context") == MEMORY.context
    assert block(expected, "query") == MEMORY.input


async def test_memory_asks_three_checks_without_an_expected_output(
    script: Script, judge: Judge
) -> None:
    script.set(
        agent_memory_uses_context=1.0,
        agent_memory_no_hallucination=0.0,
        agent_memory_ignores_stale=1.0,
    )
    case = MEMORY.model_copy(update={"expected_output": None})
    score = await AgentMemoryEval(threshold=0.8, judge=judge)(
        case, Trial(output="The auth module.")
    )
    assert score.value is not None and round(score.value, 4) == round(2 / 3, 4)
    assert score.passed is False and len(script.asked) == 3


async def test_memory_needs_a_context_and_an_answer(script: Script, judge: Judge) -> None:
    no_context = MEMORY.model_copy(update={"context": None})
    score = await AgentMemoryEval(judge=judge)(no_context, Trial(output="auth"))
    assert score.value is None and "no context" in (score.reason or "")
    no_answer = await AgentMemoryEval(judge=judge)(MEMORY, trace_trial(MEMORY, 0))
    assert no_answer.value is None and no_answer.reason == "no answer to judge"
    assert script.asked == []
