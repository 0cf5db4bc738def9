"""Reading OTLP JSON trace files as the Collector's file exporter writes them, and agenteval
trial JSONL."""

from __future__ import annotations

import base64
import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from agenteval.errors import DatasetError
from agenteval.otel import CASE_ID_ATTRIBUTE, SpanStatus, read_recorded
from agenteval.otel.otlp import any_value, spans_of_export, traces_from_exports


def otlp_lines(emit: Any) -> str:
    """What the OpenTelemetry SDK's OTLP JSON file exporter writes for the spans `emit` makes
    (one export, so one line, per span: what a Collector with small batches writes)."""
    stream = io.StringIO()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(stream=stream)))
    emit(provider.get_tracer("test"))
    provider.shutdown()
    return stream.getvalue()


def agent_trace(tracer: Any, case_id: str | None, city: str, *, fail: bool = False) -> None:
    root_attrs = {CASE_ID_ATTRIBUTE: case_id} if case_id else {}
    with (
        tracer.start_as_current_span("handle", attributes=root_attrs),
        tracer.start_as_current_span(
            "invoke_agent weather",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"},
        ) as agent,
    ):
        with tracer.start_as_current_span(
            "chat m",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "m",
                "gen_ai.usage.input_tokens": 10,
                "gen_ai.usage.output_tokens": 2,
            },
        ):
            pass
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": json.dumps({"city": city}),
                "gen_ai.tool.call.result": json.dumps({"sky": "sunny"}),
            },
        ) as tool:
            if fail:
                tool.set_status(Status(StatusCode.ERROR, "down"))
        agent.set_attribute("final_result", f"sunny in {city}")


def test_collector_json_lines_become_one_trial_per_trace(tmp_path: Path) -> None:
    text = otlp_lines(
        lambda t: [agent_trace(t, "paris", "Paris"), agent_trace(t, "rome", "Rome", fail=True)]
    )
    assert len(text.splitlines()) == 8  # one export a line, spans of a trace on several lines
    path = tmp_path / "traces.jsonl"
    path.write_text(text)
    paris, rome = read_recorded(path)
    assert (paris.key, rome.key) == ("paris", "rome")
    assert paris.trial.output == "sunny in Paris"
    assert [(c.name, c.arguments) for c in paris.trial.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert paris.trial.tool_calls[0].result == {"sky": "sunny"}
    assert paris.trial.usage.input_tokens == 10
    assert paris.trial.node_visits == ["weather"]
    assert paris.trial.failure is None
    assert paris.trial.latency_s is not None and paris.trial.latency_s > 0
    assert rome.trial.tool_calls[0].error == "down"
    assert paris.source.startswith(f"{path}:")
    assert paris.trial.metadata["trace_id"]


def test_one_export_per_file_pretty_printed_a_list_of_exports_and_gzip(tmp_path: Path) -> None:
    lines = otlp_lines(lambda t: agent_trace(t, "paris", "Paris")).splitlines()
    exports = [json.loads(line) for line in lines]
    merged = {"resourceSpans": [rs for e in exports for rs in e["resourceSpans"]]}
    (tmp_path / "a.json").write_text(json.dumps(merged, indent=2))
    (tmp_path / "b.json").write_text(json.dumps(exports))
    (tmp_path / "c.jsonl.gz").write_bytes(gzip.compress("\n".join(lines).encode()))
    (tmp_path / "notes.txt").write_text("not a trace file")
    recorded = read_recorded(tmp_path)
    # The same trace three times over: its spans, exported again, count once.
    assert len(recorded) == 1
    assert len(recorded[0].trial.tool_calls) == 1
    assert len(recorded[0].trial.model_calls) == 1
    single = tmp_path / "single"
    single.mkdir()
    (single / "a.json").write_text(json.dumps(merged, indent=2))
    [one] = read_recorded(single)
    assert one.trial.output == "sunny in Paris"


def test_protobuf_json_mapping_snake_case_base64_ids_and_named_enums() -> None:
    trace_id = bytes(range(16))
    export = {
        "resource_spans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"string_value": "svc"}}]
                },
                "instrumentation_library_spans": [],
                "scope_spans": [
                    {
                        "scope": {"name": "lib"},
                        "spans": [
                            {
                                "trace_id": base64.b64encode(trace_id).decode(),
                                "span_id": base64.b64encode(b"\x01" * 8).decode(),
                                "parent_span_id": "",
                                "name": "execute_tool t",
                                "start_time_unix_nano": 1000,
                                "end_time_unix_nano": "3000",
                                "attributes": [
                                    {"key": "gen_ai.tool.name", "value": {"string_value": "t"}},
                                    {"key": "n", "value": {"int_value": "7"}},
                                ],
                                "status": {"code": "STATUS_CODE_ERROR", "message": "x"},
                            }
                        ],
                    }
                ],
            }
        ]
    }
    [span] = list(spans_of_export(export, "f", 1))
    assert span.trace_id == trace_id.hex()
    assert span.span_id == "01" * 8
    assert span.parent_id is None
    assert span.status is SpanStatus.ERROR
    assert span.attributes == {"gen_ai.tool.name": "t", "n": 7}
    assert span.resource == {"service.name": "svc"}
    assert span.duration_s == 2e-6


def test_older_instrumentation_library_spans_are_read() -> None:
    export = {
        "resourceSpans": [
            {
                "instrumentationLibrarySpans": [
                    {
                        "instrumentationLibrary": {"name": "old"},
                        "spans": [{"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "s"}],
                    }
                ]
            }
        ]
    }
    [trace] = traces_from_exports([(export, "f", None, 0)])
    assert trace.spans[0].scope == "old"


def test_any_value_kinds() -> None:
    assert any_value({"stringValue": "s"}) == "s"
    assert any_value({"boolValue": True}) is True
    assert any_value({"intValue": "12"}) == 12
    assert any_value({"doubleValue": 1.5}) == 1.5
    assert any_value({"arrayValue": {"values": [{"intValue": 1}, {"stringValue": "a"}]}}) == [
        1,
        "a",
    ]
    assert any_value(
        {"kvlistValue": {"values": [{"key": "k", "value": {"boolValue": False}}]}}
    ) == {"k": False}
    assert any_value({"bytesValue": "AAE="}) == "AAE="
    assert any_value({}) is None


_attribute_values = st.one_of(
    st.text(max_size=30),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.text(max_size=5), max_size=4),
    st.lists(st.integers(min_value=-(2**31), max_value=2**31), max_size=4),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(min_size=1, max_size=12), _attribute_values, max_size=6))
def test_attributes_round_trip_through_the_sdk_otlp_json_exporter(
    attributes: dict[str, Any],
) -> None:
    text = otlp_lines(lambda t: t.start_span("s", attributes=attributes).end())
    [trace] = traces_from_exports([(json.loads(text), "f", 1, 0)])
    [span] = trace.spans
    expected = {k: list(v) if isinstance(v, tuple | list) else v for k, v in attributes.items()}
    assert span.attributes == expected


def test_agenteval_trial_jsonl_is_read_with_case_ids(tmp_path: Path) -> None:
    path = tmp_path / "trials.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"case_id": "a", "output": "1", "tool_calls": [{"name": "t"}]}),
                "",
                json.dumps({"output": "2", "metadata": {CASE_ID_ATTRIBUTE: "b"}}),
                json.dumps({"actual_response": "3"}),
            ]
        )
    )
    a, b, c = read_recorded(path)
    assert (a.key, b.key, c.key) == ("a", "b", None)
    assert a.trial.tool_calls[0].name == "t"
    assert c.trial.output == "3"
    assert b.source == f"{path}:3"


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ('{"output": "x"}\n{"output": ', 2, "invalid JSON"),
        ('{"output": "x"}\n{"outptu": "y"}', 2, "not a valid trial"),
        ('{"output": "x"}\n{"resourceSpans": []}', 2, "expected a trial object"),
        ('{"resourceSpans": []}\n{"output": "x"}', 2, "expected an OTLP export"),
        ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "s"}]}]}]}', 1, "no traceId"),
        ('{\n  "output": \n}', 3, "invalid JSON"),
        ("42", 1, "not a trace file"),
    ],
)
def test_a_bad_trace_file_is_one_located_error(
    tmp_path: Path, content: str, line: int | None, message: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(content)
    with pytest.raises(DatasetError) as info:
        read_recorded(path)
    assert message in info.value.message
    assert info.value.file == str(path)
    assert info.value.line == line


def test_missing_paths_and_empty_folders_are_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="file not found"):
        read_recorded(tmp_path / "nope.jsonl")
    with pytest.raises(DatasetError, match="no trace files"):
        read_recorded(tmp_path)


def test_log_records_naming_a_span_become_its_events_in_a_trace_file(tmp_path: Path) -> None:
    """Spans and log records as the SDK's OTLP JSON file exporters write them, in one file:
    each record that names a span is an event of that span (with its body), after the span's
    own events; a record naming no span, or a span of no trace read, is left out."""
    from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.trace import set_span_in_context

    stream = io.StringIO()
    spans = TracerProvider()
    spans.add_span_processor(SimpleSpanProcessor(FileSpanExporter(stream=stream)))
    logs = LoggerProvider()
    logs.add_log_record_processor(SimpleLogRecordProcessor(FileLogExporter(stream=stream)))
    logger = logs.get_logger("openai-v2")
    tracer = spans.get_tracer("test")
    with tracer.start_as_current_span(
        "chat m", attributes={"gen_ai.operation.name": "chat"}
    ) as chat:
        chat.add_event("own event")
        logger.emit(
            event_name="gen_ai.tool.message",
            attributes={"gen_ai.system": "openai"},
            body={"content": "sunny", "id": "call_A"},
        )
        logger.emit(
            event_name="gen_ai.choice",
            body={"index": 0, "message": {"tool_calls": [{"id": "call_B"}]}},
        )
    logger.emit(body="no span named here")
    other = tracer.start_span("elsewhere")
    logger.emit(event_name="gen_ai.choice", context=set_span_in_context(other), body={})
    spans.shutdown()
    logs.shutdown()
    path = tmp_path / "trace.jsonl"
    path.write_text(stream.getvalue())
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert any("resourceLogs" in line for line in lines)
    [trace] = traces_from_exports([(line, "f", n, n) for n, line in enumerate(lines)])
    [span] = trace.spans
    assert [(e.name, e.body) for e in span.events] == [
        ("own event", None),
        ("gen_ai.tool.message", {"content": "sunny", "id": "call_A"}),
        ("gen_ai.choice", {"index": 0, "message": {"tool_calls": [{"id": "call_B"}]}}),
    ]
    assert span.events[1].attributes == {"gen_ai.system": "openai"}
    # The file reads as a trace file, its log lines with it.
    [recorded] = read_recorded(path)
    assert recorded.trial.metadata["trace_id"] == trace.trace_id


def test_a_log_records_event_name_may_be_an_attribute_and_ids_hex_or_base64() -> None:
    trace_id, span_id = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"
    span = {"traceId": trace_id, "spanId": span_id, "name": "chat m"}
    record = {
        "trace_id": base64.b64encode(bytes.fromhex(trace_id)).decode(),
        "span_id": base64.b64encode(bytes.fromhex(span_id)).decode(),
        "attributes": [{"key": "event.name", "value": {"stringValue": "gen_ai.user.message"}}],
        "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "hi"}}]}},
    }
    export = {
        "resourceSpans": [{"scopeSpans": [{"spans": [span]}]}],
        "resource_logs": [{"scope_logs": [{"log_records": [record]}]}],
    }
    [trace] = traces_from_exports([(export, "f", 1, 0)])
    [event] = trace.spans[0].events
    assert (event.name, event.body) == ("gen_ai.user.message", {"content": "hi"})
