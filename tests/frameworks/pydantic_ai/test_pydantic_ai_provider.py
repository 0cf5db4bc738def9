"""A pydantic-ai agent on its OpenAI chat model, against a loopback OpenAI-compatible server on
127.0.0.1: what the provider reports (model, usage with cached and reasoning tokens) lands in
the trial, and a provider's refusal is the infrastructure failure it is (retried by the engine),
not the agent's error."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")

from pydantic_ai import Agent

import agenteval
from agenteval import EvalCase
from agenteval.engine.trials import RetryPolicy


class Provider:
    """Answers every conversation's first request with `first_status` (a 429, a 503) and the
    next with the answer, telling conversations apart by their user message."""

    def __init__(self, first_status: int, *, reports_usage: bool = True) -> None:
        self.first_status = first_status
        self.reports_usage = reports_usage  # False: as a proxy that strips `usage`
        self.seen: dict[str, int] = {}
        self.lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        question = next(str(m["content"]) for m in body["messages"] if m["role"] == "user")
        with self.lock:
            count = self.seen[question] = self.seen.get(question, 0) + 1
        if count == 1 and self.first_status != 200:
            return self.first_status, {"error": {"message": "slow down", "type": "rate_limit"}}
        answer = {
            "id": f"chatcmpl-{count}",
            "object": "chat.completion",
            "created": 1_764_000_000,
            "model": "gpt-test-2025",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": f"echo: {question}"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": 50,
                "completion_tokens": 20,
                "total_tokens": 70,
                "prompt_tokens_details": {"cached_tokens": 10},
                "completion_tokens_details": {"reasoning_tokens": 5},
            },
        }
        if not self.reports_usage:
            del answer["usage"]
        return 200, answer


def serve(provider: Provider) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            status, answer = provider.answer(body)
            out = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.send_header("retry-after-ms", "1")
            self.end_headers()
            self.wfile.write(out)

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    http.daemon_threads = True
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{http.server_port}/v1"
    finally:
        http.shutdown()
        http.server_close()
        thread.join()


def openai_agent(base_url: str) -> Agent[None, str]:
    import openai
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = openai.AsyncOpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    model = OpenAIChatModel("gpt-test", provider=OpenAIProvider(openai_client=client))
    return Agent(model, name="echo")


@pytest.mark.parametrize(("status", "reason"), [(429, "rate_limited"), (503, "provider_error")])
def test_a_providers_refusal_is_retried_as_infrastructure(
    tmp_path: Path, status: int, reason: str
) -> None:
    provider = Provider(first_status=status)
    for base_url in serve(provider):
        cases = [EvalCase(id=f"c{n}", input=f"question {n}") for n in range(4)]
        run = agenteval.evaluate(
            openai_agent(base_url),
            cases,
            store=tmp_path / "runs.db",
            concurrency=8,
            retry_policy=RetryPolicy(max_retries=1, initial_wait_s=0.001, max_wait_s=0.01),
        )
    for result in run.results:
        trial = result.trial
        assert trial.failure is None, trial.failure
        assert trial.retries == {reason: 1}
        assert trial.attempts == 2
        assert trial.output == f"echo: question {result.case.id[1:]}"
        (call,) = trial.model_calls
        assert call.model == "gpt-test-2025"
        assert call.provider == "openai"
        assert call.usage.model_dump() == {
            "input_tokens": 50,
            "output_tokens": 20,
            "cached_tokens": 10,
            "reasoning_tokens": 5,
        }


def test_a_refusal_that_outlasts_the_retries_fails_the_trial_by_its_cause(
    tmp_path: Path,
) -> None:
    provider = Provider(first_status=429)
    for base_url in serve(provider):
        run = agenteval.evaluate(
            openai_agent(base_url),
            [EvalCase(id="c", input="question")],
            store=tmp_path / "runs.db",
            retry_policy=RetryPolicy(max_retries=0),
        )
    failure = run.results[0].trial.failure
    assert failure is not None
    assert failure.cause == "rate_limited"
    assert failure.error_type == "ModelHTTPError" or "RateLimit" in (failure.error_type or "")


def _errors() -> list[tuple[str, BaseException, str]]:
    from pydantic_ai import exceptions as pai
    from pydantic_ai.exceptions import ModelHTTPError

    return [
        ("rate limit", pai.ModelRateLimitError("m", "slow down"), "rate_limited"),
        ("server", pai.ModelServerError("m", "boom"), "provider_error"),
        ("overloaded", pai.ModelOverloadedError("m", "busy"), "provider_error"),
        ("timeout", pai.ModelTimeoutError("m", "slow"), "timeout"),
        ("connection", pai.ModelConnectionError("m", "refused"), "connection_error"),
        ("request timeout", pai.ModelRequestTimeout("m", 5.0), "timeout"),
        ("http 429", ModelHTTPError(429, "m"), "rate_limited"),
        ("http 502", ModelHTTPError(502, "m"), "provider_error"),
        ("http 400", ModelHTTPError(400, "m"), "agent_error"),
        (
            "http categorized",
            ModelHTTPError.for_category(pai.ModelServerError, status_code=500, model_name="m"),
            "provider_error",
        ),
        ("rejected", pai.ModelAuthenticationError("m", "bad key"), "agent_error"),
        ("unexpected", pai.UnexpectedModelBehavior("garbled"), "agent_error"),
    ]


def test_pydantic_ais_model_errors_are_classified_by_their_type() -> None:
    from agenteval.failures import classify

    for name, error, cause in _errors():
        assert classify(error).cause.value == cause, name


def test_a_response_without_usage_is_a_call_of_unknown_cost(tmp_path: Path) -> None:
    # pydantic-ai counts such a response as an `unmeasured_requests` of 0 tokens. Before: the
    # call was recorded as measured, 0 tokens, so a priced model cost $0 and a cost gate passed.
    provider = Provider(first_status=200, reports_usage=False)
    for base_url in serve(provider):
        run = agenteval.evaluate(
            openai_agent(base_url), [EvalCase(id="c", input="question")], store=tmp_path / "r.db"
        )
    trial = run.results[0].trial
    assert trial.failure is None and trial.output == "echo: question"
    (call,) = trial.model_calls
    assert call.usage_recorded is False
    assert "usage" in trial.not_recorded
    assert run.summary.cost.models_without_usage == ["gpt-test-2025"]


def test_a_response_with_usage_is_measured(tmp_path: Path) -> None:
    for base_url in serve(Provider(first_status=200)):
        run = agenteval.evaluate(
            openai_agent(base_url), [EvalCase(id="c", input="question")], store=tmp_path / "r.db"
        )
    trial = run.results[0].trial
    assert [call.usage_recorded for call in trial.model_calls] == [True]
    assert trial.not_recorded == {}
