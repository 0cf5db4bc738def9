"""HTTP agents, against a real agent service on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.agents.fakes_http import FakeAgentService, reply
from tests.judge.fakes import closed_port_url, delay, http_error, raw_response

import agenteval
from agenteval import EvalCase, FailureCause, TrialResult
from agenteval.agents.http import HttpAgentConfig, http_agent
from agenteval.errors import ConfigError

CASE = EvalCase(
    id="refund",
    input="What is the refund window?",
    expected_output="30 days",
    expected_tools=["kb_search"],
)


def _run(agent: Any, tmp_path: Path, case: EvalCase = CASE, **options: Any) -> TrialResult:
    run = agenteval.evaluate(agent, [case], store=tmp_path / "runs.db", **options)
    (result,) = run.results
    return result


def test_the_input_is_posted_and_a_trial_format_answer_is_read(
    agent_service: FakeAgentService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TOKEN", "tok-123")
    agent_service.push(
        reply(
            {
                "output": "30 days",
                "steps": [
                    {
                        "thought": "search first",
                        "tool_calls": [
                            {
                                "name": "kb_search",
                                "arguments": {"query": "refund"},
                                "result": [{"id": "refunds"}],
                                "duration_s": 0.01,
                            }
                        ],
                    },
                    {"output": "30 days"},
                ],
                "model_calls": [
                    {"model": "gpt-4o-mini", "usage": {"input_tokens": 90, "output_tokens": 12}},
                    {"model": "gpt-4o-mini", "usage": {"input_tokens": 120, "output_tokens": 5}},
                ],
                "metadata": {"session": "abc"},
            }
        )
    )
    agent = http_agent(
        {
            "url": agent_service.agent_url,
            "headers": {"Authorization": "Bearer ${AGENT_TOKEN}", "X-Suite": "evals"},
        }
    )
    result = _run(agent, tmp_path)
    trial = result.trial
    assert trial.failure is None
    assert trial.output == "30 days"
    assert [c.name for c in trial.tool_calls] == ["kb_search"]
    assert trial.tool_calls[0].arguments == {"query": "refund"}
    assert trial.steps[0].thought == "search first"
    assert len(trial.model_calls) == 2
    assert (trial.usage.input_tokens, trial.usage.output_tokens) == (210, 17)
    assert trial.metadata == {"session": "abc"}
    assert result.scores["exact_match"].passed is True
    assert result.scores["tool_selection"].passed is True
    # On the wire: the input as JSON, the headers with the token from the environment.
    assert agent_service.requests == [{"input": "What is the refund window?"}]
    headers = agent_service.headers[0]
    assert headers["authorization"] == "Bearer tok-123"
    assert headers["x-suite"] == "evals"
    assert headers["content-type"] == "application/json"


def test_a_json_string_or_plain_text_is_the_answer(
    agent_service: FakeAgentService, tmp_path: Path
) -> None:
    agent_service.push(reply("30 days"), reply("30 days", content_type="text/plain"))
    agent = http_agent({"url": agent_service.agent_url})
    assert _run(agent, tmp_path).trial.output == "30 days"
    assert _run(agent, tmp_path).trial.output == "30 days"


def test_a_conversation_posts_the_messages_so_far(
    agent_service: FakeAgentService, tmp_path: Path
) -> None:
    agent_service.push(reply({"output": "Hello!"}), reply({"output": "30 days"}))
    case = EvalCase.model_validate(
        {"id": "chat", "conversation": [{"input": "Hi"}, {"input": "Refund window?"}]}
    )
    trial = _run(http_agent({"url": agent_service.agent_url}), tmp_path, case).trial
    assert trial.output == "30 days"
    assert agent_service.requests[1] == {
        "input": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "Refund window?"},
        ]
    }


@pytest.mark.parametrize(
    ("status", "cause"),
    [
        (429, FailureCause.RATE_LIMITED),
        (502, FailureCause.PROVIDER_ERROR),
        (503, FailureCause.PROVIDER_ERROR),
        (504, FailureCause.TIMEOUT),
        (408, FailureCause.TIMEOUT),
    ],
)
def test_transient_statuses_are_retried_and_counted_by_reason(
    agent_service: FakeAgentService, tmp_path: Path, status: int, cause: FailureCause
) -> None:
    agent_service.push(http_error(status, retry_after=0), reply({"output": "30 days"}))
    trial = _run(http_agent({"url": agent_service.agent_url}), tmp_path).trial
    assert trial.failure is None
    assert trial.output == "30 days"
    assert trial.attempts == 2
    assert trial.retries == {cause.value: 1}
    assert agent_service.request_count == 2


def test_when_retries_run_out_the_cause_and_status_are_recorded(
    agent_service: FakeAgentService, tmp_path: Path
) -> None:
    agent_service.default = http_error(503, retry_after=0, message="warming up")
    trial = _run(http_agent({"url": agent_service.agent_url}), tmp_path, retries=2).trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.PROVIDER_ERROR
    assert trial.failure.error_type == "HttpAgentUnavailable"
    assert "answered 503 Service Unavailable" in trial.failure.message
    assert "warming up" in trial.failure.message
    assert trial.retries == {"provider_error": 2}
    assert agent_service.request_count == 3


def test_retry_after_is_honoured_and_left_out_of_working_latency(
    agent_service: FakeAgentService, tmp_path: Path
) -> None:
    agent_service.push(http_error(429, retry_after=0.6), reply({"output": "30 days"}))
    trial = _run(http_agent({"url": agent_service.agent_url}), tmp_path).trial
    assert trial.failure is None
    assert trial.latency_s is not None and trial.latency_s >= 0.6
    # The wait is what Retry-After asked, left out whole: a bound on what remains would be a
    # wall-clock limit, which a loaded machine breaks.
    assert trial.working_latency_s is not None
    assert trial.latency_s - trial.working_latency_s >= 0.6


@pytest.mark.parametrize("status", [500, 501, 400, 401, 404, 422])
def test_the_services_own_failures_are_agent_errors_and_not_retried(
    agent_service: FakeAgentService, tmp_path: Path, status: int
) -> None:
    agent_service.default = raw_response(status, {"error": "KeyError: 'city'"})
    trial = _run(http_agent({"url": agent_service.agent_url}), tmp_path).trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.AGENT_ERROR
    assert trial.failure.error_type == "HttpAgentError"
    assert f"answered {status}" in trial.failure.message
    assert "KeyError: 'city'" in trial.failure.message
    assert agent_service.request_count == 1
    assert trial.retries == {}


def test_no_answer_within_the_timeout_is_a_timeout(
    agent_service: FakeAgentService, tmp_path: Path
) -> None:
    agent_service.default = delay(3, reply({"output": "late"}))
    agent = http_agent({"url": agent_service.agent_url, "timeout": 0.3})
    trial = _run(agent, tmp_path, retries=1).trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.TIMEOUT
    assert trial.failure.error_type == "HttpAgentTimeout"
    assert "within 0.3 s" in trial.failure.message
    assert trial.retries == {"timeout": 1}


def test_an_unreachable_service_is_a_connection_error(tmp_path: Path, clean_env: None) -> None:
    agent = http_agent({"url": closed_port_url("/agent")})
    trial = _run(agent, tmp_path, retries=0).trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.CONNECTION_ERROR
    assert trial.failure.message.startswith("cannot reach the agent at http://127.0.0.1:")


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (raw_response(200, "<html>oops</html>", {"Content-Type": "text/html"}), "not JSON"),
        (reply({"answer": "30 days"}), "without 'output'"),
        (reply({"output": 30}), "not valid"),
        (reply({"output": "x", "model_calls": [{"usage": {}}]}), "model_calls are not valid"),
    ],
)
def test_an_answer_that_cannot_be_read_is_invalid_output(
    agent_service: FakeAgentService, tmp_path: Path, item: Any, message: str
) -> None:
    agent_service.push(item)
    trial = _run(http_agent({"url": agent_service.agent_url}), tmp_path).trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.INVALID_OUTPUT
    assert message in trial.failure.message
    assert agent_service.request_count == 1


def test_configuration_mistakes_are_config_errors(clean_env: None) -> None:
    with pytest.raises(ValueError, match="not an http:// or https:// URL"):
        HttpAgentConfig.model_validate({"url": "localhost:8000/agent"})
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        HttpAgentConfig.model_validate({"url": "http://x", "retry": 3})
    with pytest.raises(ConfigError, match=r"uses \$\{MISSING_TOKEN\}, which is not set"):
        http_agent({"url": "http://x", "headers": {"Authorization": "Bearer ${MISSING_TOKEN}"}})


def test_the_reference_hides_credentials() -> None:
    agent = http_agent({"url": "https://user:secret@agents.example.com/v1/answer?key=abc"})
    assert agent.reference == "http:https://agents.example.com/v1/answer"
    assert "secret" not in repr(agent)
