"""Live capture of log records: the GenAI per-message events (and openai-v2's operation details)
are log records emitted through the global LoggerProvider; each one that names a span of the
running trial is captured with the trial, as an event of that span."""

from __future__ import annotations

import asyncio
from typing import Any

from opentelemetry import _logs, trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider

from agenteval.agents.recorder import TrialRecorder
from agenteval.otel import live
from agenteval.otel.otlp import attach_logs
from agenteval.otel.routing import Capture, capturing, span_record


def _agent_with_events(capture: list[Capture]) -> None:
    """What an instrumented model call does: a chat span, and its message events as log
    records emitted while it is current (the instrumentation got its logger at import)."""
    events = _logs.get_logger("opentelemetry.instrumentation.openai_v2")
    tracer = trace.get_tracer("opentelemetry.instrumentation.openai_v2")
    found = capturing.get()
    assert found is not None
    capture.append(found)
    with tracer.start_as_current_span(
        "chat gpt-test", attributes={"gen_ai.operation.name": "chat"}
    ):
        events.emit(
            event_name="gen_ai.choice",
            attributes={"gen_ai.system": "openai"},
            body={
                "index": 0,
                "message": {"tool_calls": ({"id": "call_A", "function": {"name": "get_time"}},)},
            },
        )
    # Outside the chat span it names the trial's own span, no span of the agent: no event.
    events.emit(event_name="gen_ai.choice", body={"index": 1})


def _captured(recorder: TrialRecorder) -> Capture:
    seen: list[Capture] = []

    async def attempt() -> None:
        with live.capture_spans(recorder, "case", 0):
            _agent_with_events(seen)

    asyncio.run(attempt())
    return seen[0]


def test_with_no_logger_provider_one_is_installed_and_events_join_their_span(
    no_provider: None,
) -> None:
    recorder = TrialRecorder()
    capture = _captured(recorder)
    assert type(_logs.get_logger_provider()) is LoggerProvider  # installed, exporting nothing
    [chat] = [span_record(span) for span in capture.spans]
    [with_events] = attach_logs([chat], capture.logs)
    [event] = with_events.events
    assert event.name == "gen_ai.choice"
    assert event.attributes == {"gen_ai.system": "openai"}
    # A structured body as plain values (the SDK hands tuples and mappings).
    assert event.body == {
        "index": 0,
        "message": {"tool_calls": [{"id": "call_A", "function": {"name": "get_time"}}]},
    }
    assert recorder.trace_id == chat.trace_id
    assert [log.span_id for log in capture.logs] == [chat.span_id, recorder.span_id]


def test_a_users_logger_provider_keeps_exporting_and_the_trial_gets_the_events_too(
    no_provider: None,
) -> None:
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    _logs.set_logger_provider(provider)
    capture = _captured(TrialRecorder())
    assert _logs.get_logger_provider() is provider
    assert [log.event.body["index"] for log in capture.logs] == [0, 1]
    assert len(exporter.get_finished_logs()) == 2  # the user's exporter saw both


def test_the_installed_providers_have_the_resource_each_would_make_for_itself(
    no_provider: None, monkeypatch: Any
) -> None:
    # The resource is made once a process for both (issue 21): it must be the very resource
    # `TracerProvider()` and `LoggerProvider()` make, environment attributes included.
    monkeypatch.setenv("OTEL_SERVICE_NAME", "resource-check")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "team=evals")
    live._resource.cache_clear()
    try:
        _captured(TrialRecorder())
        own_tracer = TracerProvider().resource
        own_logger = LoggerProvider()._resource
        tracer_provider: Any = trace.get_tracer_provider()
        logger_provider: Any = _logs.get_logger_provider()
        assert tracer_provider.resource.attributes == own_tracer.attributes
        assert logger_provider._resource.attributes == own_logger.attributes
        assert own_tracer.attributes["service.name"] == "resource-check"
        assert own_tracer.attributes["team"] == "evals"
    finally:
        live._resource.cache_clear()
