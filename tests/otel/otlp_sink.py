"""A loopback OTLP/HTTP receiver for the tests: a stdlib HTTP server on 127.0.0.1 (port 0) that
decodes what the SDK's OTLP exporters POST (`ExportLogsServiceRequest` on `/v1/logs`,
`ExportTraceServiceRequest` on `/v1/traces`, protobuf) with opentelemetry-proto, and keeps it."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def plain(value: AnyValue) -> Any:
    """An OTLP AnyValue as a Python value."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [plain(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: plain(kv.value) for kv in value.kvlist_value.values}
    return None if kind is None else getattr(value, kind)


@dataclass(frozen=True)
class Event:
    """One log record received: its event name, attributes, trace and span (hex)."""

    name: str
    attributes: dict[str, Any]
    trace_id: str
    span_id: str
    timestamp_ns: int
    service: str | None


@dataclass(frozen=True)
class Span:
    """One span received."""

    name: str
    attributes: dict[str, Any]
    trace_id: str
    span_id: str
    parent_id: str
    start_ns: int
    end_ns: int
    status_code: int
    status_message: str


@dataclass
class Sink:
    """What the receiver got (the raw bodies too, to look for what must never arrive)."""

    url: str = ""
    status: int = 200
    events: list[Event] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def evaluations(self) -> list[Event]:
        return [e for e in self.events if e.name == "gen_ai.evaluation.result"]


def _handler(sink: Sink) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            if sink.status != 200:
                self.send_response(sink.status)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            with sink.lock:
                sink.bodies.append(body)
                if self.path == "/v1/logs":
                    reply = ExportLogsServiceResponse().SerializeToString()
                    _read_logs(sink, body)
                elif self.path == "/v1/traces":
                    reply = ExportTraceServiceResponse().SerializeToString()
                    _read_spans(sink, body)
                else:
                    self.send_response(404)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

    return Handler


def _read_logs(sink: Sink, body: bytes) -> None:
    request = ExportLogsServiceRequest()
    request.ParseFromString(body)
    for resource_logs in request.resource_logs:
        resource = {kv.key: plain(kv.value) for kv in resource_logs.resource.attributes}
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                sink.events.append(
                    Event(
                        name=record.event_name,
                        attributes={kv.key: plain(kv.value) for kv in record.attributes},
                        trace_id=record.trace_id.hex(),
                        span_id=record.span_id.hex(),
                        timestamp_ns=record.time_unix_nano,
                        service=resource.get("service.name"),
                    )
                )


def _read_spans(sink: Sink, body: bytes) -> None:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                sink.spans.append(
                    Span(
                        name=span.name,
                        attributes={kv.key: plain(kv.value) for kv in span.attributes},
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex(),
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        status_code=span.status.code,
                        status_message=span.status.message,
                    )
                )


@contextmanager
def otlp_sink(status: int = 200) -> Iterator[Sink]:
    """A receiver listening while the block runs; `status` other than 200 refuses every
    export with it."""
    sink = Sink(status=status)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(sink))
    sink.url = f"http://127.0.0.1:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield sink
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
