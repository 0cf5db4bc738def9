"""The user simulator against a loopback OpenAI-compatible server that scripts its structured
replies: a multi-turn agent passes under simulation where a written script fails; malformed
replies, refusals and 429s are the simulator's failures, never the agent's; the simulator's
tokens and cost are on `trial.simulation`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from tests.judge.fakes import (
    FakeOpenAI,
    closed_port_url,
    http_error,
    raw_response,
    raw_text,
    refusal,
)
from tests.simulation.model import (
    numbered_agent,
    refund_case,
    sim_reply,
)

from agenteval import EndReason, EvalCase, FailureCause, evaluate
from agenteval.report.terminal import print_summary
from agenteval.simulation.simulator import UserSimulatorConfig


def simulator(fake: FakeOpenAI, tmp_path: Path, **settings: Any) -> UserSimulatorConfig:
    settings.setdefault("cache_path", tmp_path / "cache.db")
    return UserSimulatorConfig(spec="openai:gpt-4o-mini", base_url=fake.base_url, **settings)


def run(fake: FakeOpenAI, tmp_path: Path, cases: list[EvalCase], **options: Any) -> Any:
    options.setdefault("user_simulator", simulator(fake, tmp_path))
    return evaluate(
        numbered_agent,
        cases,
        scorers=["exact_match"],
        builtins=False,
        store=tmp_path / "runs.db",
        **options,
    )


def test_simulation_passes_where_a_written_script_fails(fake: FakeOpenAI, tmp_path: Path) -> None:
    written = EvalCase(
        id="written",
        conversation=[{"input": "My order arrived broken."}, {"input": "ana@example.com"}],
        expected_output="Refund issued for order 8812.",
    )
    result = run(fake, tmp_path, [written, refund_case()])
    by_case = {r.case.id: r for r in result.results}
    assert by_case["written"].scores["exact_match"].passed is False
    assert by_case["written"].trial.output == "What is your order number?"
    simulated = by_case["refund"]
    assert simulated.scores["exact_match"].passed is True
    assert simulated.trial.output == "Refund issued for order 8812."
    conversation = simulated.trial.simulation
    assert [t.user for t in conversation.turns] == [
        "My order arrived broken.",
        "8812",
        "ana@example.com",
    ]
    assert {t.source for t in conversation.turns} == {"simulated"}
    assert conversation.user == "openai:gpt-4o-mini"
    assert conversation.end_reason is EndReason.GOAL_ACHIEVED
    assert conversation.end_detail == "the refund was issued"
    assert conversation.turns_to_goal == 3
    # Four replies (three messages and the stop), each one model call, priced.
    assert fake.request_count == 4
    assert len(conversation.model_calls) == 4
    assert conversation.usage.input_tokens == 400
    assert conversation.usage.output_tokens == 80
    assert conversation.cost_usd is not None and conversation.cost_usd > 0
    assert conversation.cached_calls == 0
    # The simulator's tokens are its own, not the agent's.
    assert simulated.trial.usage.input_tokens == 0


def test_the_request_is_strict_structured_output_with_every_part_fenced(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    run(fake, tmp_path, [refund_case(starting_prompt="Hello, my order is broken.")])
    body = fake.requests[0]
    schema = body["response_format"]["json_schema"]
    assert schema["strict"] is True
    assert schema["schema"]["required"] == ["reasoning", "action", "message"]
    assert schema["schema"]["additionalProperties"] is False
    user = body["messages"][1]["content"]
    for name in ("goal", "persona", "conversation"):
        assert f"<<<BEGIN {name} " in user
    assert "never the agent" in body["messages"][0]["content"].lower() or "not the agent" in (
        body["messages"][0]["content"].lower()
    )


def test_a_plan_and_instructions_kept_in_extra_reach_the_prompt_fenced(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    case = refund_case(
        extra={
            "conversation_plan": "Ask for the refund, then check the amount.",
            "user_simulator_config": {"custom_instructions": "Write in lowercase."},
        }
    )
    run(fake, tmp_path, [case])
    user = fake.requests[0]["messages"][1]["content"]
    assert "<<<BEGIN plan " in user and "then check the amount" in user
    assert "<<<BEGIN instructions " in user and "Write in lowercase." in user


def test_instructions_kept_twice_in_extra_reach_the_prompt_once(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    # An ADK eval set keeps its user_simulator_config whole and its custom_instructions as
    # `instructions` beside it: the simulator is told them once, not twice.
    case = refund_case(
        extra={
            "user_simulator_config": {"custom_instructions": "Write in lowercase."},
            "instructions": "Write in lowercase.",
        }
    )
    run(fake, tmp_path, [case])
    user = fake.requests[0]["messages"][1]["content"]
    assert user.count("Write in lowercase.") == 1


def test_a_malformed_reply_is_asked_again_once(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.push(raw_text("I think I'd say: hello"))
    result = run(fake, tmp_path, [refund_case()])
    trial = result.results[0].trial
    assert trial.failure is None
    assert trial.simulation.end_reason is EndReason.GOAL_ACHIEVED
    assert fake.request_count == 5  # the re-ask, then the four replies


@pytest.mark.parametrize(
    ("replies", "said"),
    [
        (
            [raw_text("not json"), sim_reply(action="message", message="  ")],
            "invalid_reply: reply: action is `message` and the message is empty",
        ),
        (
            [sim_reply(action="shout", message="HEY"), raw_text("[1, 2]")],
            "invalid_reply: no structured reply",
        ),
        ([refusal("I won't play a user."), refusal("No.")], "the model said: No."),
    ],
    ids=["malformed", "out-of-schema", "refusal"],
)
def test_a_reply_unusable_twice_is_the_simulators_failure_never_the_agents(
    fake: FakeOpenAI, tmp_path: Path, replies: list[Any], said: str
) -> None:
    fake.push(*replies)
    result = run(fake, tmp_path, [refund_case()], retries=0)
    trial = result.results[0].trial
    assert fake.request_count == 2
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.USER_SIMULATOR_ERROR
    assert said in trial.failure.message
    assert "openai:gpt-4o-mini" in trial.failure.message
    assert trial.simulation.end_reason is EndReason.TRIAL_FAILED
    # Left out of scoring: an infrastructure failure, not a failing score.
    score = result.results[0].scores["exact_match"]
    assert score.value is None and "infrastructure" in (score.reason or "")
    assert result.summary.scorers["exact_match"].scored == 0


def test_a_429_then_success_honours_retry_after(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.push(http_error(429, retry_after=0.01))
    result = run(fake, tmp_path, [refund_case()], retries=0)
    trial = result.results[0].trial
    assert trial.failure is None
    assert trial.simulation.end_reason is EndReason.GOAL_ACHIEVED
    assert fake.request_count == 5


def test_a_429_forever_is_rate_limited_never_the_agents(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.handler = lambda body: http_error(429, retry_after=0.01)
    config = simulator(fake, tmp_path, max_retries=2, adaptive=False)
    result = run(fake, tmp_path, [refund_case()], retries=1, user_simulator=config)
    trial = result.results[0].trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.RATE_LIMITED
    assert "user simulator" in trial.failure.message
    assert fake.request_count == 6  # (1 + 2 retries) per attempt, two attempts
    score = result.results[0].scores["exact_match"]
    assert score.value is None and "infrastructure" in (score.reason or "")
    assert result.summary.failures == {"rate_limited": 1}


def test_a_server_error_that_outlasts_the_retries_is_a_provider_error(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.handler = lambda body: http_error(503)
    config = simulator(fake, tmp_path, max_retries=1)
    result = run(fake, tmp_path, [refund_case()], retries=0, user_simulator=config)
    trial = result.results[0].trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.PROVIDER_ERROR
    assert fake.request_count == 2
    assert result.results[0].scores["exact_match"].value is None


def test_an_unreachable_simulator_is_a_connection_error(tmp_path: Path, fake: FakeOpenAI) -> None:
    config = UserSimulatorConfig(
        spec="openai:gpt-4o-mini",
        base_url=closed_port_url("/v1"),
        cache_path=tmp_path / "cache.db",
        max_retries=0,
    )
    result = run(fake, tmp_path, [refund_case()], retries=0, user_simulator=config)
    trial = result.results[0].trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.CONNECTION_ERROR
    assert "user simulator openai:gpt-4o-mini" in trial.failure.message


def filtered(content: str) -> Any:
    """A completion a content filter cut: its text may still read as an object."""
    return raw_response(
        200,
        {
            "id": "chatcmpl-filtered",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "content_filter",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
        },
    )


def test_a_content_filter_finish_is_a_refusal_even_when_its_text_parses(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    text = '{"reasoning": "x", "action": "message", "message": "hi"}'
    fake.push(filtered(text), filtered(text))
    result = run(fake, tmp_path, [refund_case()], retries=0)
    trial = result.results[0].trial
    assert fake.request_count == 2
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.USER_SIMULATOR_ERROR
    assert "finish_reason content_filter" in trial.failure.message


def test_a_simulator_answer_without_usage_is_a_cost_the_summary_calls_unknown(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    # A proxy that strips `usage`: the simulator's calls cost something unknown, and the
    # summary says whose, rather than showing the known part as the simulator's whole cost.
    fake.strip_usage = True
    result = run(fake, tmp_path, [refund_case()])
    conversation = result.results[0].trial.simulation
    assert conversation.model_calls and not any(c.usage_recorded for c in conversation.model_calls)
    assert conversation.cost_usd is None
    assert result.summary.simulation.models_without_usage == ["gpt-4o-mini"]
    assert result.summary.cost.models_without_usage == []  # the agent's cost is not in question
    console = Console(record=True, width=200, color_system=None)
    print_summary(result.summary, result.info, console)
    assert "no token usage recorded for some simulator calls to gpt-4o-mini" in (
        console.export_text()
    )
