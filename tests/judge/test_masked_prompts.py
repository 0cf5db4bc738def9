"""Every judge prompt built from what an agent did masks the values under secret-named keys, as
the run store does, and none of them breaks on a tool result nested thousands deep or one that
contains itself.

Plain words under `password` or `session_cookie` have no shape the judge's text redaction could
find once they are written as text: each builder must mask them while they are still data. The
judge here is a real loopback server (`tests.judge.fakes.FakeOpenAI`) that records every request
body; the test reads those bodies whole.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.judge.fakes import FakeOpenAI, clear_provider_env, verdict

from agenteval import AgentStep, EvalCase, ToolCall, Trial
from agenteval.criteria import HallucinationCriterion, MatchType, TrajectoryMatchCriterion
from agenteval.criteria.config import CriterionConfig
from agenteval.engine.trials import RetryPolicy
from agenteval.evalset.session import SESSION_STATE, final_session_state_match
from agenteval.evaluators.catalog import EVALUATORS
from agenteval.judge.judge import Judge, JudgeConfig
from agenteval.judge.rubrics import RUBRICS, JudgeRubric
from agenteval.redaction import REDACTED
from agenteval.scorers.context import ScoringContext

FAST = RetryPolicy(max_retries=1, initial_wait_s=0.01, max_wait_s=0.02)

PASSWORD = "correct horse battery staple"
COOKIE = "plainwords123"
CLIENT_SECRET = "velvet morning tide"
PLAIN_SECRETS = (PASSWORD, COOKIE, CLIENT_SECRET)

CASE = EvalCase(
    id="login",
    input="Log me in and tell me my plan",
    expected_output="You are on the Pro plan.",
    metadata={"context": "The user pays for Pro."},
)


def _call() -> ToolCall:
    return ToolCall(
        name="login",
        arguments={"user": "ada", "password": PASSWORD},
        result={
            "session_cookie": COOKIE,
            "plan": "Pro",
            "oauth": {"client_secret": CLIENT_SECRET, "scope": "read"},
        },
    )


def trial() -> Trial:
    """The agent logged in with a password and got a cookie back: as steps and as calls."""
    call = _call()
    return Trial(
        output="You are on the Pro plan.",
        steps=[AgentStep(thought="I will log in first.", tool_calls=[call]), AgentStep()],
        tool_calls=[call],
    )


def deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"password": PASSWORD}
    for _ in range(levels):
        value = {"x": value}
    return value


def circular() -> dict[str, Any]:
    value: dict[str, Any] = {"plan": "Pro", "session_cookie": COOKIE}
    value["self"] = value
    return value


def trial_with(result: Any) -> Trial:
    call = ToolCall(name="login", arguments={"password": PASSWORD, "n": [result]}, result=result)
    return Trial(output="You are on the Pro plan.", steps=[AgentStep(tool_calls=[call])])


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clear_provider_env(monkeypatch)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        server.default = verdict({"reasoning": "Fine.", "score": 1.0})
        yield server


@pytest.fixture
async def judge(fake: FakeOpenAI, tmp_path: Path) -> AsyncIterator[Judge]:
    config = JudgeConfig(
        spec="openai:gpt-4o-mini", base_url=fake.base_url, cache_path=tmp_path / "cache.db"
    )
    opened = Judge.open(config, retry=FAST)
    yield opened
    await opened.aclose()


def sent(fake: FakeOpenAI) -> str:
    """Every request body the provider received, as one text."""
    return json.dumps(fake.requests, ensure_ascii=False)


def assert_masked(fake: FakeOpenAI) -> None:
    assert fake.request_count > 0
    body = sent(fake)
    assert [secret for secret in PLAIN_SECRETS if secret in body] == []
    assert REDACTED in body  # the call was sent, masked, not left out
    assert "Pro" in body


# `tool_call_accuracy` asks no judge; `agent_memory_eval` shows the judge no tool call.
@pytest.mark.parametrize(
    "name", sorted(set(EVALUATORS) - {"tool_call_accuracy", "agent_memory_eval"})
)
async def test_no_evaluator_sends_a_secret_named_value(
    name: str, fake: FakeOpenAI, judge: Judge
) -> None:
    evaluator = EVALUATORS[name](judge=judge)
    case = CASE.model_copy(update={"context": "Earlier: the user asked about plans."})
    score = await evaluator(case, trial())
    assert score.error is None, score
    assert_masked(fake)


@pytest.mark.parametrize("rubric", ["groundedness", "context_relevance"])  # with tool results
async def test_no_rubric_sends_a_secret_named_value(
    rubric: str, fake: FakeOpenAI, judge: Judge
) -> None:
    score = await JudgeRubric(name=rubric, judge=judge)(CASE, trial())
    assert score.error is None and score.value == 1.0, score
    assert_masked(fake)


async def test_the_hallucination_criterion_sends_no_secret_named_value(
    fake: FakeOpenAI, judge: Judge
) -> None:
    criterion = HallucinationCriterion().for_run(ScoringContext(judge=judge))
    result = await criterion.evaluate(trial(), CASE)
    assert result.error is None and result.score == 1.0, result
    assert_masked(fake)


@pytest.mark.parametrize("shape", ["deep", "circular"])
@pytest.mark.parametrize("name", ["plan_quality", "tool_argument_accuracy", "groundedness"])
async def test_a_deep_or_circular_tool_result_is_judged_cut_never_a_crash(
    shape: str, name: str, fake: FakeOpenAI, judge: Judge
) -> None:
    result = deep(3_000) if shape == "deep" else circular()
    scorer = (
        JudgeRubric(name=name, judge=judge) if name in RUBRICS else EVALUATORS[name](judge=judge)
    )
    score = await scorer(CASE, trial_with(result))
    assert score.error is None and score.value == 1.0, score
    body = sent(fake)
    assert "<cut: " in body
    assert PASSWORD not in body and COOKIE not in body


async def test_a_trajectory_reason_shows_no_secret_named_argument() -> None:
    # A score's reason is text: once written, neither the store nor a report can tell that
    # `password='correct horse battery staple'` held a secret.
    expected = EvalCase(
        input="Log in",
        expected_trajectory=[ToolCall(name="login", arguments={"user": "bob", "password": "x"})],
    )
    criterion = TrajectoryMatchCriterion(
        config=CriterionConfig(match_type=MatchType.EXACT, check_args=True)
    )
    actual = Trial(output="ok", tool_calls=[_call(), ToolCall(name="find", arguments=deep(2000))])
    result = await criterion.evaluate(actual, expected)
    assert result.score == 0.0
    reason = result.reason or ""
    assert "extra: login(" in reason and "find(x={'x': {'x'" in reason and REDACTED in reason
    assert PASSWORD not in reason


def test_a_session_state_reason_shows_no_secret_named_value() -> None:
    case = EvalCase(
        id="s",
        input="Log in",
        metadata={"final_session_state": {"auth": {"password": "x"}, "plan": "Pro"}},
    )
    state = {"auth": {"password": PASSWORD, "user": "ada"}, "plan": deep(2000)}
    score = final_session_state_match(case, Trial(output="ok", metadata={SESSION_STATE: state}))
    assert score.value == 0.0
    reason = score.reason or ""
    assert "'auth' is" in reason and "'plan' is" in reason
    assert PASSWORD not in reason
