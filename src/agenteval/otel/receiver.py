"""An OTLP/HTTP receiver for the length of a run: spans (and log records) that agents in other
processes, in any language, export while the run lasts join the trial of their trace.

`POST /v1/traces` and `POST /v1/logs`, protobuf (`application/x-protobuf`, decoded with
`opentelemetry-proto`) or JSON (`application/json`, with OTLP/JSON's hex ids: read by
`otlp.py`'s reader, never protobuf's JSON mapping, which takes ids as base64), optionally
gzip- or deflate-encoded. The answers are OTLP/HTTP's: 200 with an empty `Export*Response`
in the request's encoding; 400 with a `Status` for a body that does not decode; 404, 405, 411,
413 and 415 for a wrong path, method, length, size or content type.

The server is the standard library's, in daemon threads, bound to 127.0.0.1 (a trace holds an
agent's inputs and outputs: it is never offered beyond this machine unless asked for), started
when the run starts and stopped when it ends, however it ends (`receiving`). Spans of no trial
of the run are counted and said once at its end, with their likely cause.
"""

from __future__ import annotations

import errno
import importlib
import json
import logging
import sys
import threading
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

from agenteval.errors import AgentEvalError, ConfigError

from .live import DEFAULT_REMOTE_WAIT_S, Unrouted, receive, remote_timeouts
from .otlp import LogEvent, logs_of_export, spans_of_export
from .spans import SpanRecord

__all__ = [
    "DEFAULT_REMOTE_WAIT_S",
    "MAX_BODY_BYTES",
    "OtlpReceiver",
    "decode_export",
    "receiving",
]

logger = logging.getLogger("agenteval")

MAX_BODY_BYTES: Final = 20 * 1024 * 1024
"""The largest request body taken, before and after decompression (the Collector's default)."""

_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"
_SIGNALS = {"/v1/traces": "traces", "/v1/logs": "logs"}
_INVALID_ARGUMENT = 3  # google.rpc.Code


class BadRequest(Exception):
    """A request body that does not decode (400), with why."""


@dataclass(frozen=True)
class Export:
    """What one request brought: spans, and log records that name a span."""

    spans: list[SpanRecord] = field(default_factory=list)
    logs: list[LogEvent] = field(default_factory=list)


def _proto_classes(signal: str) -> Any:
    if signal == "traces":
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

        return trace_service_pb2.ExportTraceServiceRequest
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

    return logs_service_pb2.ExportLogsServiceRequest


def decode_export(signal: str, content_type: str, body: bytes) -> Export:
    """The spans (signal `traces`) or log records (`logs`) of an OTLP/HTTP request body;
    `BadRequest` when it does not decode."""
    if content_type == _PROTOBUF:
        # protobuf ships no type stubs: its modules are taken as they come.
        json_format: Any = importlib.import_module("google.protobuf.json_format")
        decode_error: type[Exception] = importlib.import_module(
            "google.protobuf.message"
        ).DecodeError
        try:
            message = _proto_classes(signal).FromString(body)
        except decode_error as exc:
            raise BadRequest(f"not an OTLP protobuf {signal} export: {exc}") from None
        # Protobuf's JSON mapping writes ids as base64, which the reader takes as well.
        data: Any = json_format.MessageToDict(message)
    else:
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise BadRequest(f"not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise BadRequest(f"an OTLP/JSON {signal} export is an object")
    try:
        if signal == "traces":
            return Export(spans=list(spans_of_export(data, "OTLP request", None)))
        return Export(logs=list(logs_of_export(data)))
    except AgentEvalError as exc:
        raise BadRequest(exc.message) from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise BadRequest(f"not an OTLP {signal} export: {exc}") from None


def _status_body(content_type: str, message: str) -> bytes:
    """A `google.rpc.Status` (code INVALID_ARGUMENT) in the request's encoding."""
    if content_type == _PROTOBUF:
        text = message.encode()
        size, length = len(text), b""
        while True:  # the varint of the message's length
            byte, size = size & 0x7F, size >> 7
            length += bytes([byte | (0x80 if size else 0)])
            if not size:
                break
        return bytes([0x08, _INVALID_ARGUMENT, 0x12]) + length + text
    return json.dumps({"code": _INVALID_ARGUMENT, "message": message}).encode()


class _TooLarge(Exception):
    pass


def _decompress(body: bytes, encoding: str) -> bytes:
    if encoding in ("", "identity"):
        return body
    wbits = 16 + zlib.MAX_WBITS if encoding in ("gzip", "x-gzip") else zlib.MAX_WBITS
    try:
        inflater = zlib.decompressobj(wbits)
        data = inflater.decompress(body, MAX_BODY_BYTES + 1)
    except zlib.error as exc:
        raise BadRequest(f"the body is not valid {encoding}: {exc}") from None
    if len(data) > MAX_BODY_BYTES:
        raise _TooLarge
    return data


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the exporters reuse their connection
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a request log line per export would drown the run's output

    def _answer(self, status: int, content_type: str, body: bytes, close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def _plain(self, status: int, text: str, close: bool = True, **headers: str) -> None:
        body = text.encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        if close:  # the body was not read: the connection cannot be reused
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def _refuse_method(self) -> None:
        if self.path.split("?")[0] in _SIGNALS:
            self._plain(405, "use POST\n", Allow="POST")
        else:
            self._plain(404, "OTLP/HTTP takes POST /v1/traces and POST /v1/logs\n")

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = _refuse_method

    def _body(self) -> bytes | None:
        """The raw body (Content-Length or chunked), None when it is too large."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            total = 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():  # trailers
                        pass
                    return b"".join(chunks)
                total += size
                if total > MAX_BODY_BYTES:
                    return None
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length", "-1"))
        if length < 0:
            raise ValueError("no Content-Length")
        if length > MAX_BODY_BYTES:
            return None
        return self.rfile.read(length)

    def do_POST(self) -> None:
        signal = _SIGNALS.get(self.path.split("?")[0])
        if signal is None:
            self._plain(404, "OTLP/HTTP takes POST /v1/traces and POST /v1/logs\n")
            return
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type not in (_PROTOBUF, _JSON):
            self._plain(415, f"OTLP/HTTP takes {_PROTOBUF} or {_JSON}\n")
            return
        encoding = self.headers.get("Content-Encoding", "").strip().lower()
        if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
            self._plain(415, "Content-Encoding may be gzip or deflate\n")
            return
        try:
            raw = self._body()
        except ValueError:
            self._plain(411, "a Content-Length (or a chunked body) is needed\n")
            return
        try:
            if raw is None:
                raise _TooLarge
            export = decode_export(signal, content_type, _decompress(raw, encoding))
        except _TooLarge:
            self._plain(413, f"the body is over {MAX_BODY_BYTES} bytes\n")
            return
        except BadRequest as exc:
            self._answer(400, content_type, _status_body(content_type, str(exc)))
            return
        self.server.receiver.take(export)
        # An empty Export*ServiceResponse: all accepted (no partial_success).
        self._answer(200, content_type, b"" if content_type == _PROTOBUF else b"{}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    receiver: OtlpReceiver

    def handle_error(self, request: Any, client_address: Any) -> None:
        """An exporter that hung up is its own business (no traceback on the run's output);
        anything else is said in one line."""
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | TimeoutError):
            logger.debug("OTLP receiver: %s went away: %s", client_address, error)
        else:
            logger.warning("the OTLP receiver failed on a request: %r", error)


class OtlpReceiver:
    """An OTLP/HTTP receiver on `host`:`port` (0: any free port; `port` says which once it
    started), handing what it receives to `deliver` (by default, the running trials)."""

    def __init__(
        self,
        port: int = 0,
        host: str = "127.0.0.1",
        deliver: Callable[[list[SpanRecord], list[LogEvent]], Unrouted] = receive,
    ) -> None:
        self.host = host
        self.port = port
        self._deliver = deliver
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.spans = 0
        """Spans received."""
        self.unknown: Counter[str] = Counter()
        """Spans of no trial of this run, by the service that sent them."""
        self.late: Counter[str] = Counter()
        """Spans that came after their trial had stopped waiting for them, by service."""
        self.abandoned: Counter[str] = Counter()
        """Spans of attempts that ended without waiting (failed, timed out), by service."""

    @property
    def url(self) -> str:
        """Where to export to (OTEL_EXPORTER_OTLP_ENDPOINT)."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        """Listen, serving in a daemon thread; a port in use is one `ConfigError`."""
        try:
            server = _Server((self.host, self.port), _Handler)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigError(
                    f"cannot receive OTLP on {self.host}:{self.port}: the port is in use",
                    field="otlp_receiver",
                    hint="stop what listens there (a Collector? another run?), or pick another "
                    "port (0 takes any free one and the run says which)",
                ) from None
            raise ConfigError(
                f"cannot receive OTLP on {self.host}:{self.port}: {exc.strerror or exc}",
                field="otlp_receiver",
                hint="pick another port (0 takes any free one)",
            ) from None
        server.receiver = self
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="agenteval-otlp-receiver",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop listening (the port is free again once this returns)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> OtlpReceiver:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def take(self, export: Export) -> None:
        """Hand a request's spans and log records to their trials; count what has none."""
        unrouted = self._deliver(export.spans, export.logs)
        with self._lock:
            self.spans += len(export.spans)
            for kind, items in (
                (self.unknown, unrouted.unknown),
                (self.late, unrouted.late),
                (self.abandoned, unrouted.abandoned),
            ):
                for item in items:
                    if isinstance(item, SpanRecord):
                        kind[str(item.resource.get("service.name") or "unknown service")] += 1

    def dropped(self) -> str | None:
        """The one message for the spans of no trial of the run, with the likely cause; None
        when every span found its trial."""
        with self._lock:
            unknown, late = sum(self.unknown.values()), sum(self.late.values())
            abandoned = sum(self.abandoned.values())
            services = sorted({*self.unknown, *self.late, *self.abandoned})
        if not unknown and not late and not abandoned:
            return None
        parts = []
        if unknown:
            parts.append(
                f"{unknown} carry a trace no trial of this run started: the service does not "
                "continue the `traceparent` header agenteval sends (extract it, with "
                "opentelemetry.propagate.extract(request.headers) or the web framework's "
                "OpenTelemetry instrumentation), or it exports spans of other work too"
            )
        if late:
            parts.append(
                f"{late} came after their trial had stopped waiting for them: the service exports later than the "
                "run waits (raise --otlp-wait, or lower the service's OTEL_BSP_SCHEDULE_DELAY)"
            )
        if abandoned:
            parts.append(
                f"{abandoned} belong to attempts that failed, timed out or were retried, which "
                "do not wait for their service's spans"
            )
        return (
            f"{unknown + late + abandoned} spans received for no trial of this run (from "
            f"{', '.join(services)}): {'; '.join(parts)}"
        )


@contextmanager
def receiving(
    port: int | None,
    *,
    announce: Callable[[str], None] = logger.info,
    warn: Callable[[str], None] = logger.warning,
) -> Iterator[OtlpReceiver | None]:
    """An OTLP receiver on `port` for the length of the block (None: no receiver), stopped
    however the block ends; once it ends, one warning for spans of no trial, one for trials
    whose wait for their service's spans ran out."""
    if port is None:
        yield None
        return
    _require_otlp()
    timeouts = remote_timeouts()
    receiver = OtlpReceiver(port)
    receiver.start()
    try:
        announce(
            f"receiving OpenTelemetry spans at {receiver.url} (OTLP/HTTP: "
            f"OTEL_EXPORTER_OTLP_ENDPOINT={receiver.url})"
        )
        yield receiver
    finally:
        receiver.stop()
    dropped = receiver.dropped()
    if dropped is not None:
        warn(dropped)
    waited = remote_timeouts() - timeouts
    if waited:
        warn(
            f"{waited} trial attempts stopped waiting for their agent service's spans before "
            "they all arrived, and may miss some (each says so in not_recorded): is the "
            f"service exporting to {receiver.url}? (raise --otlp-wait if it exports late)"
        )


def _require_otlp() -> None:
    """The receiver decodes with opentelemetry-proto and gives spans to live capture, which
    needs the SDK: without them, one message naming the extra."""
    try:
        import opentelemetry.proto.collector.trace.v1.trace_service_pb2
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"receiving OTLP spans needs OpenTelemetry's SDK and protobuf messages ({exc.name} "
            "is not installed)",
            field="otlp_receiver",
            hint="pip install 'agenteval[opentelemetry]'",
        ) from None
    import os

    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        raise ConfigError(
            "receiving OTLP spans needs live capture, which OTEL_SDK_DISABLED=true turns off",
            field="otlp_receiver",
            hint="unset OTEL_SDK_DISABLED, or run without the OTLP receiver",
        )
