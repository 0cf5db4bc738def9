"""`per_turn_user_simulator_quality_v1` against a loopback judge: the starting prompt checked as
written, every later message and the end judged with the conversation before it, a wrong end
failing the last move, the samples' majority (a tie fails), and no score without a simulation."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from tests.evalset.metrics.judging import ScriptedJudge
from tests.judge.fakes import FakeOpenAI, raw_text

from agenteval import CriterionConfig, EndReason, EvalCase, ExecutionResult
from agenteval.criteria import CRITERIA_REGISTRY, PerTurnUserSimulatorQualityCriterion
from agenteval.judge.judge import Judge
from agenteval.scorers.context import ScoringContext
from agenteval.trace import SimulatedConversation

TEMPLATE = "per_turn_user_simulator_quality"
PERSONA = {
    "id": "terse",
    "description": "Writes short messages.",
    "behaviors": [
        {
            "name": "short",
            "description": "Answers in a few words.",
            "behavior_instructions": ["Never write more than ten words."],
            "violation_rubrics": ["The message is longer than ten words."],
        }
    ],
}
CASE = EvalCase(
    id="refund",
    user_simulation={
        "goal": "Get a refund for order 8812.",
        "persona": "Writes short messages.",
        "starting_prompt": "My order arrived broken.",
        "extra": {"user_persona": PERSONA},
    },
)


def trial(
    turns: list[tuple[str, str, str | None]],
    end: EndReason = EndReason.GOAL_ACHIEVED,
) -> ExecutionResult:
    conversation = SimulatedConversation(
        user="script:users:refund",
        turns=[{"user": u, "source": s, "agent": a} for u, s, a in turns],
        end_reason=end,
    )
    return ExecutionResult(actual_response=turns[-1][2], simulation=conversation)


GOOD = [
    ("My order arrived broken.", "written", "What is your order number?"),
    ("8812", "simulated", "What is your email?"),
    ("ana@example.com", "simulated", "Refund issued for order 8812."),
]


def criterion(judge: Judge, **config: Any) -> Any:
    made = PerTurnUserSimulatorQualityCriterion(CriterionConfig(**{"num_samples": 1, **config}))
    return made.for_run(ScoringContext(judge=judge))


def passes(ok: bool) -> dict[str, Any]:
    return {
        "reasoning": "kept to the plan" if ok else "made up a fact",
        "checks": [{"check": "plan", "reason": "turn 2", "passes": ok}],
        "score": 1.0 if ok else 0.0,
    }


async def test_every_move_kept_to_the_plan_scores_one(
    fake_openai: FakeOpenAI, judge: Judge
) -> None:
    scripted = ScriptedJudge(fake_openai, {TEMPLATE: lambda blocks, n: passes(True)})
    result = await criterion(judge).evaluate(trial(GOOD), CASE)
    assert result.error is None
    assert result.score == 1.0 and result.passed is True
    # the starting prompt is checked as written; the two messages and the end are judged
    # (the moves are asked at the same time: in any order)
    asked = {blocks["move"]: blocks for blocks in scripted.of(TEMPLATE)}
    end = "[The user ends the conversation here: its goal was achieved.]"
    assert sorted(asked) == sorted(["8812", "ana@example.com", end])
    assert asked["8812"]["conversation"] == (
        "USER: My order arrived broken.\n\nAGENT: What is your order number?"
    )
    assert "AGENT: What is your email?" in asked["ana@example.com"]["conversation"]
    assert "AGENT: Refund issued for order 8812." in asked[end]["conversation"]
    assert asked["8812"]["plan"] == "Get a refund for order 8812."
    assert "- short: The message is longer than ten words." in asked["8812"]["persona"]
    moves = result.details["moves"]
    assert [m["move"] for m in moves] == ["starting_prompt", "message", "message", "end"]
    assert moves[0]["valid"] is True
    assert result.token_usage is not None and result.token_usage.input_tokens > 0


async def test_a_first_message_other_than_the_starting_prompt_fails_that_move(
    fake_openai: FakeOpenAI, judge: Judge
) -> None:
    ScriptedJudge(fake_openai, {TEMPLATE: lambda blocks, n: passes(True)})
    turns = [("Hello there", "written", "Hi"), *GOOD[1:]]
    result = await criterion(judge).evaluate(trial(turns), CASE)
    assert result.score is not None
    assert abs(result.score - 2 / 3) < 1e-9
    assert result.details["moves"][0]["valid"] is False


async def test_a_wrong_end_fails_the_last_move(fake_openai: FakeOpenAI, judge: Judge) -> None:
    ScriptedJudge(
        fake_openai,
        {TEMPLATE: lambda blocks, n: passes(not blocks["move"].startswith("[The user ends"))},
    )
    result = await criterion(judge, threshold=0.8).evaluate(
        trial(GOOD[:2], end=EndReason.MAX_TURNS), CASE
    )
    # starting prompt passes; "8812" passed but the end after it was wrong: it fails
    assert result.score == 0.5 and result.passed is False
    assert "did not end when it should have" in (result.reason or "")
    assert result.details["moves"][-1]["said"].endswith("(it reached its message limit).]")


def alternating() -> Any:
    """An answer passing a move's 1st, 3rd, ... sample and failing its 2nd, 4th, ... (counted
    per move: the moves are asked at the same time)."""
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    def answer(blocks: dict[str, str], n: int) -> dict[str, Any]:
        with lock:
            seen[blocks["move"]] += 1
            count = seen[blocks["move"]]
        return passes(count % 2 == 1)

    return answer


async def test_the_majority_of_samples_decides_and_a_tie_fails(
    fake_openai: FakeOpenAI, judge: Judge
) -> None:
    ScriptedJudge(fake_openai, {TEMPLATE: alternating()})
    three = await criterion(judge, num_samples=3).evaluate(trial(GOOD[:2]), CASE)
    assert three.error is None
    judged = three.details["moves"][1:]
    assert [m["votes"] for m in judged] == [{"pass": 2, "fail": 1}] * 2
    assert three.score == 1.0  # 2 to 1 passes each move
    # another plan: nothing comes from the judge's cache of the first evaluation
    ScriptedJudge(fake_openai, {TEMPLATE: alternating()})
    other = CASE.model_copy(
        update={"user_simulation": CASE.user_simulation.model_copy(update={"goal": "A refund."})}
    )
    two = await criterion(judge, num_samples=2).evaluate(trial(GOOD[:2]), other)
    assert [m["votes"] for m in two.details["moves"][1:]] == [{"pass": 1, "fail": 1}] * 2
    assert all(m["valid"] is False for m in two.details["moves"][1:])
    assert two.score == 0.5  # only the starting prompt passed: a tie fails the move


async def test_a_move_no_sample_judged_is_an_error(fake_openai: FakeOpenAI, judge: Judge) -> None:
    fake_openai.default = raw_text("not json")
    result = await criterion(judge).evaluate(trial(GOOD), CASE)
    assert result.error is not None and "All LLM samples failed" in result.error
    assert result.passed is False


async def test_no_score_without_a_simulated_user(fake_openai: FakeOpenAI, judge: Judge) -> None:
    written = EvalCase(id="w", input="hi")
    result = await criterion(judge).evaluate(ExecutionResult(actual_response="hello"), written)
    assert result.score is None and result.passed is None
    assert "no simulated user" in (result.reason or "")
    only_written = trial([("My order arrived broken.", "written", "Sorry")])
    case = EvalCase(id="c", input="My order arrived broken.", user_simulation={"goal": "refund"})
    result = await criterion(judge).evaluate(only_written, case)
    assert result.score is None and "no message of its own" in (result.reason or "")
    assert fake_openai.requests == []


async def test_written_turns_are_shown_not_judged(fake_openai: FakeOpenAI, judge: Judge) -> None:
    scripted = ScriptedJudge(fake_openai, {TEMPLATE: lambda blocks, n: passes(True)})
    case = EvalCase(
        id="c",
        input="Hi, I need help.",
        user_simulation={"goal": "refund", "starting_prompt": "My order arrived broken."},
    )
    turns = [("Hi, I need help.", "written", "Sure, what happened?"), *GOOD]
    result = await criterion(judge).evaluate(trial(turns), case)
    assert [m["move"] for m in result.details["moves"]] == [
        "starting_prompt",
        "message",
        "message",
        "end",
    ]
    for blocks in scripted.of(TEMPLATE):
        assert blocks["conversation"].startswith("USER: Hi, I need help.")
        assert blocks["persona"].startswith("No persona was given")


def test_it_is_registered_by_adks_name() -> None:
    assert (
        CRITERIA_REGISTRY["per_turn_user_simulator_quality_v1"]
        is PerTurnUserSimulatorQualityCriterion
    )


async def test_a_trial_that_failed_in_the_written_turns_has_no_move_to_judge(
    fake_openai: FakeOpenAI, judge: Judge
) -> None:
    case = EvalCase(
        id="c",
        conversation=[{"input": "Hi"}, {"input": "My order 8812 is broken"}],
        user_simulation={"goal": "refund", "starting_prompt": "Refund it."},
    )
    failed = trial([("Hi", "written", None)], end=EndReason.TRIAL_FAILED)
    result = await criterion(judge).evaluate(failed, case)
    assert result.score is None and "no message of its own" in (result.reason or "")
    assert fake_openai.requests == []
