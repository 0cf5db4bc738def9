"""The OTLP/HTTP receiver: what it answers (OTLP/HTTP's codes, in the request's encoding), what
it decodes (protobuf from the SDK's own exporter, OTLP/JSON with hex ids, gzip), and what it
does with spans of no trial of the run."""

from __future__ import annotations

import gzip
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import set_span_in_context

from agenteval.errors import ConfigError
from agenteval.otel import live
from agenteval.otel.otlp import LogEvent
from agenteval.otel.receiver import MAX_BODY_BYTES, OtlpReceiver, receiving
from agenteval.otel.routing import router
from agenteval.otel.spans import SpanRecord

TRACE = "5b8efff798038103d269b633813fc60c"
SPAN = "eee19b7ec3c1b174"
PARENT = "eee19b7ec3c1b173"


class Collected:
    """What a receiver handed on, with nothing routed (every span has no trial)."""

    def __init__(self) -> None:
        self.spans: list[SpanRecord] = []
        self.logs: list[LogEvent] = []

    def __call__(self, spans: list[SpanRecord], logs: list[LogEvent]) -> live.Unrouted:
        self.spans += spans
        self.logs += logs
        return live.Unrouted([], [])


@pytest.fixture
def collected() -> Iterator[tuple[OtlpReceiver, Collected]]:
    sink = Collected()
    with OtlpReceiver(0, deliver=sink) as receiver:
        yield receiver, sink


def _post(
    url: str,
    body: bytes,
    content_type: str = "application/json",
    method: str = "POST",
    **headers: str,
) -> tuple[int, str, bytes]:
    request = urllib.request.Request(
        url, data=body, method=method, headers={"Content-Type": content_type, **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read()


def _json_export(trace_id: str = TRACE, span_id: str = SPAN) -> dict[str, Any]:
    """An OTLP/JSON export as the spec (and the JS, Go and Collector exporters) write it: ids
    in hex, 64-bit integers as strings, enums as numbers."""
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "js-agent"}}]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "js"},
                        "spans": [
                            {
                                "traceId": trace_id,
                                "spanId": span_id,
                                "parentSpanId": PARENT,
                                "name": "execute_tool lookup",
                                "kind": 1,
                                "startTimeUnixNano": "1700000000000000000",
                                "endTimeUnixNano": "1700000000500000000",
                                "attributes": [
                                    {"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}},
                                    {"key": "n", "value": {"intValue": "3"}},
                                ],
                                "status": {"code": 2, "message": "boom"},
                            }
                        ],
                    }
                ],
            }
        ]
    }


def test_the_sdks_own_protobuf_exporter_is_decoded_with_its_ids(
    collected: tuple[OtlpReceiver, Collected],
) -> None:
    receiver, sink = collected
    for compression in (Compression.NoCompression, Compression.Gzip):
        provider = TracerProvider(resource=Resource.create({"service.name": "py-agent"}))
        exporter = OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces", compression=compression)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        tracer = provider.get_tracer("t")
        with (
            tracer.start_as_current_span("invoke_agent a") as outer,
            tracer.start_as_current_span("execute_tool t", attributes={"k": [1, 2]}) as inner,
        ):
            pass
        provider.shutdown()
        by_name = {s.name: s for s in sink.spans[-2:]}
        got = by_name["execute_tool t"]
        assert got.trace_id == f"{inner.get_span_context().trace_id:032x}"
        assert got.span_id == f"{inner.get_span_context().span_id:016x}"
        assert got.parent_id == f"{outer.get_span_context().span_id:016x}"
        assert got.attributes == {"k": [1, 2]}
        assert got.resource["service.name"] == "py-agent"
        assert by_name["invoke_agent a"].parent_id is None
    assert receiver.spans == 4


def test_otlp_json_hex_ids_are_read_as_hex_and_the_answer_is_json(
    collected: tuple[OtlpReceiver, Collected],
) -> None:
    receiver, sink = collected
    body = json.dumps(_json_export()).encode()
    status, content_type, answer = _post(f"{receiver.url}/v1/traces", body)
    assert (status, content_type, json.loads(answer)) == (200, "application/json", {})
    (span,) = sink.spans
    # json_format.Parse would have read these 32 hex digits as base64: 24 wrong bytes.
    assert (span.trace_id, span.span_id, span.parent_id) == (TRACE, SPAN, PARENT)
    assert span.attributes == {"gen_ai.tool.name": "lookup", "n": 3}
    assert span.status.value == "error" and span.status_message == "boom"
    assert span.end_ns - span.start_ns == 500_000_000


def test_a_gzip_json_body_and_a_charset_in_the_content_type_are_taken(
    collected: tuple[OtlpReceiver, Collected],
) -> None:
    receiver, sink = collected
    body = gzip.compress(json.dumps(_json_export()).encode())
    status, _, _ = _post(
        f"{receiver.url}/v1/traces",
        body,
        "application/json; charset=utf-8",
        **{"Content-Encoding": "gzip"},
    )
    assert status == 200
    assert [s.span_id for s in sink.spans] == [SPAN]


def test_log_records_from_the_sdks_exporter_become_events_of_the_span_they_name(
    collected: tuple[OtlpReceiver, Collected],
) -> None:
    receiver, sink = collected
    spans = TracerProvider()
    logs = LoggerProvider()
    logs.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=f"{receiver.url}/v1/logs"))
    )
    with spans.get_tracer("t").start_as_current_span("chat m") as chat:
        logs.get_logger("openai-v2").emit(
            event_name="gen_ai.choice",
            context=set_span_in_context(chat),
            attributes={"gen_ai.system": "openai"},
            body={"index": 0, "message": {"tool_calls": [{"id": "call_A", "type": "function"}]}},
        )
        logs.get_logger("app").emit(body="a plain log line, no span named")
    logs.shutdown()
    (log,) = [entry for entry in sink.logs if entry.event.name]
    context = chat.get_span_context()
    assert (log.trace_id, log.span_id) == (f"{context.trace_id:032x}", f"{context.span_id:016x}")
    assert log.event.attributes == {"gen_ai.system": "openai"}
    assert log.event.body == {
        "index": 0,
        "message": {"tool_calls": [{"id": "call_A", "type": "function"}]},
    }


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/x-protobuf", b"\xff\xff\xff not protobuf"),
        ("application/json", b"{not json"),
        ("application/json", b"[1, 2]"),
        ("application/json", json.dumps(_json_export(span_id="")).encode()),
    ],
    ids=["protobuf", "json-syntax", "json-array", "span-without-id"],
)
def test_a_body_that_does_not_decode_is_400_with_a_status_in_its_encoding(
    collected: tuple[OtlpReceiver, Collected], content_type: str, body: bytes
) -> None:
    receiver, sink = collected
    status, answered_type, answer = _post(f"{receiver.url}/v1/traces", body, content_type)
    assert (status, answered_type) == (400, content_type)
    if content_type == "application/json":
        assert json.loads(answer)["code"] == 3  # INVALID_ARGUMENT
    else:
        from google.rpc.status_pb2 import Status

        status_message = Status.FromString(answer)
        assert status_message.code == 3 and "protobuf" in status_message.message
    assert sink.spans == []


def test_gzip_that_is_not_gzip_is_400(collected: tuple[OtlpReceiver, Collected]) -> None:
    receiver, _ = collected
    status, _, _ = _post(f"{receiver.url}/v1/traces", b"plain", **{"Content-Encoding": "gzip"})
    assert status == 400


def test_wrong_path_method_type_and_size_get_otlp_https_codes(
    collected: tuple[OtlpReceiver, Collected],
) -> None:
    receiver, sink = collected
    body = json.dumps(_json_export()).encode()
    assert _post(f"{receiver.url}/v1/metrics", body)[0] == 404
    assert _post(f"{receiver.url}/", body)[0] == 404
    assert _post(f"{receiver.url}/v1/traces", b"", method="GET")[0] == 405
    assert _post(f"{receiver.url}/v1/traces", body, "text/plain")[0] == 415
    assert _post(f"{receiver.url}/v1/traces", body, **{"Content-Encoding": "br"})[0] == 415
    # Refused from its Content-Length, before reading it.
    with socket.create_connection(("127.0.0.1", receiver.port), timeout=30) as conn:
        conn.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n".encode()
        )
        assert conn.recv(100).startswith(b"HTTP/1.1 413")
    # A body that inflates past the limit is refused too.
    bomb = gzip.compress(b" " * (MAX_BODY_BYTES + 10))
    assert _post(f"{receiver.url}/v1/traces", bomb, **{"Content-Encoding": "gzip"})[0] == 413
    assert sink.spans == []
    # And the receiver still takes a good one afterwards.
    assert _post(f"{receiver.url}/v1/traces", body)[0] == 200


def test_a_chunked_body_is_read(collected: tuple[OtlpReceiver, Collected]) -> None:
    receiver, sink = collected
    body = json.dumps(_json_export()).encode()
    half = len(body) // 2
    chunks = b"".join(
        f"{len(part):x}\r\n".encode() + part + b"\r\n" for part in (body[:half], body[half:])
    )
    with socket.create_connection(("127.0.0.1", receiver.port), timeout=30) as conn:
        conn.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"
        )
        assert conn.recv(100).startswith(b"HTTP/1.1 200")
    assert [s.span_id for s in sink.spans] == [SPAN]


def test_spans_of_no_trial_are_dropped_counted_and_said_once_at_the_end() -> None:
    warnings: list[str] = []
    notes: list[str] = []
    # An attempt that waited for its service's spans and stopped: its span comes late.
    # (Both passed their trace context on to a service: only such an attempt's trace is
    # remembered once it ends.)
    waited = router.open_capture(int("ab" * 16, 16))
    waited.propagated = waited.waited = True
    router.close_capture(waited)
    # One that ended without waiting (it failed): its span is abandoned.
    failed = router.open_capture(int("cd" * 16, 16))
    failed.propagated = True
    router.close_capture(failed)
    with receiving(0, announce=notes.append, warn=warnings.append) as receiver:
        assert receiver is not None
        url = receiver.url
        body = json.dumps(_json_export()).encode()
        assert _post(f"{url}/v1/traces", body)[0] == 200
        assert _post(f"{url}/v1/traces", body.replace(TRACE.encode(), b"ab" * 16))[0] == 200
        assert _post(f"{url}/v1/traces", body.replace(TRACE.encode(), b"cd" * 16))[0] == 200
        assert warnings == []  # nothing said while the run goes
    assert notes == [
        f"receiving OpenTelemetry spans at {url} (OTLP/HTTP: OTEL_EXPORTER_OTLP_ENDPOINT={url})"
    ]
    (warning,) = warnings
    assert warning.startswith("3 spans received for no trial of this run (from js-agent)")
    assert "1 carry a trace no trial of this run started" in warning
    assert "traceparent" in warning
    assert "1 came after their trial had stopped waiting" in warning and "--otlp-wait" in warning
    assert "1 belong to attempts that failed, timed out or were retried" in warning
    # Stopped: nothing listens on the port any more (connections may linger in TIME_WAIT).
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", int(url.rsplit(":", 1)[1])))


def test_a_port_in_use_is_one_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError) as raised, receiving(port):
            pass
    error = raised.value
    assert f"127.0.0.1:{port}: the port is in use" in error.message
    assert error.hint is not None and "0 takes any free one" in error.hint


def test_no_receiver_is_nothing() -> None:
    with receiving(None) as receiver:
        assert receiver is None


def test_a_services_entry_span_that_arrives_before_its_answer_counts() -> None:
    """Under load the service's batch can reach the receiver before the agent has read the
    answer: the entry span must still end the wait (seen failing: every trial then waited the
    whole bound and was marked not_recorded)."""
    trace_id = "ef" * 16
    capture = router.open_capture(int(trace_id, 16))
    try:
        entry = SpanRecord(name="invoke_agent", trace_id=trace_id, span_id="1" * 16, parent_id=SPAN)
        assert router.receive([entry]).unknown == []
        router.answered(capture, SPAN)
        assert capture.arrived()
    finally:
        router.close_capture(capture)
