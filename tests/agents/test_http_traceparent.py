"""The HTTP agent passes each attempt's W3C trace context on (`traceparent`), so the service's
spans join the trial's trace, whether or not the run receives them."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tests.agents.fakes_http import FakeAgentService, reply
from tests.judge.fakes import http_error
from tests.otel.conftest import no_provider as no_provider  # re-exported fixtures
from tests.otel.conftest import user_exporter as user_exporter

import agenteval
from agenteval import EvalCase
from agenteval.agents.http import http_agent
from agenteval.retry import RetryPolicy

CASE = EvalCase(id="refund", input="What is the refund window?")


def _traceparent(headers: dict[str, str]) -> str | None:
    found = [value for name, value in headers.items() if name.lower() == "traceparent"]
    assert len(found) <= 1
    return found[0] if found else None


def test_the_trial_spans_context_is_sent_and_the_trial_keeps_its_ids(
    agent_service: FakeAgentService, tmp_path: Path, user_exporter: InMemorySpanExporter
) -> None:
    run = agenteval.evaluate(
        http_agent({"url": agent_service.agent_url}), [CASE], store=tmp_path / "runs.db"
    )
    trial = run.results[0].trial
    (headers,) = agent_service.headers
    sent = _traceparent(headers)
    # Version, trace, parent span, flags (sampled; the SDK may add W3C level 2's random bit).
    assert sent is not None and sent.startswith(f"00-{trial.trace_id}-{trial.span_id}-0")
    # The ids are the trial span's, which the user's backend receives.
    (span,) = [s for s in user_exporter.get_finished_spans() if s.name == "agenteval trial refund"]
    assert span.context is not None
    assert (f"{span.context.trace_id:032x}", f"{span.context.span_id:016x}") == (
        trial.trace_id,
        trial.span_id,
    )


def test_each_attempt_sends_its_own_trace(
    agent_service: FakeAgentService, tmp_path: Path, no_provider: None
) -> None:
    agent_service.push(http_error(503), reply({"output": "30 days"}))
    run = agenteval.evaluate(
        http_agent({"url": agent_service.agent_url}),
        [CASE],
        store=tmp_path / "runs.db",
        retry_policy=RetryPolicy(max_retries=1, initial_wait_s=0, max_wait_s=0),
    )
    trial = run.results[0].trial
    assert trial.attempts == 2
    first, second = (_traceparent(h) for h in agent_service.headers)
    assert first is not None and second is not None
    assert first.split("-")[1] != second.split("-")[1]
    assert second == f"00-{trial.trace_id}-{trial.span_id}-01"


def test_a_traceparent_header_the_user_configured_wins(
    agent_service: FakeAgentService, tmp_path: Path, no_provider: None
) -> None:
    mine = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    agenteval.evaluate(
        http_agent({"url": agent_service.agent_url, "headers": {"TraceParent": mine}}),
        [CASE],
        store=tmp_path / "runs.db",
    )
    (headers,) = agent_service.headers
    assert _traceparent(headers) == mine


def test_without_capture_no_trace_context_is_sent(
    agent_service: FakeAgentService,
    tmp_path: Path,
    no_provider: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    run = agenteval.evaluate(
        http_agent({"url": agent_service.agent_url}), [CASE], store=tmp_path / "runs.db"
    )
    (headers,) = agent_service.headers
    assert _traceparent(headers) is None
    assert run.results[0].trial.trace_id is None
