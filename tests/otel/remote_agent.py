"""An agent service in a process of its own, as an agent in another language would be: it
imports nothing of agenteval, only the OpenTelemetry SDK and its OTLP/HTTP (protobuf) exporter.

`python remote_agent.py MODE`, with OTEL_EXPORTER_OTLP_ENDPOINT set: serves `POST /` on
127.0.0.1 (the port is printed as `PORT n` on the first line of standard output) and answers
`{"input": CITY}` with `{"output": "sunny in CITY"}`. For each request it continues the
caller's W3C trace context (`opentelemetry.propagate.extract`), and records an `invoke_agent`
span with one `execute_tool` span per tool the city calls for (`TOOLS`), exported by a
BatchSpanProcessor after the answer. It also emits a `gen_ai.choice` log record naming the
`invoke_agent` span, exported over OTLP/HTTP logs.

MODE: `export` (as above), or `silent` (the same spans, exported to nowhere: a service whose
spans never reach the run).
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry import propagate, trace
from opentelemetry._logs import get_logger_provider, set_logger_provider
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind

TOOLS = {
    "Paris": ["get_weather"],
    "Rome": ["get_weather", "get_time"],
    "Oslo": ["get_time"],
    "Lisbon": ["get_weather", "get_news"],
    "Porto": ["get_news"],
    "Madrid": ["get_time", "get_news", "get_weather"],
}


def main(mode: str) -> None:
    resource = Resource.create({"service.name": "remote-weather-agent"})
    provider = TracerProvider(resource=resource)
    logs = LoggerProvider(resource=resource)
    if mode == "export":
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        logs.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
    trace.set_tracer_provider(provider)
    set_logger_provider(logs)
    tracer = trace.get_tracer("remote-weather-agent")
    logger = get_logger_provider().get_logger("remote-weather-agent")

    def run_agent(city: str) -> str:
        for name in TOOLS.get(city, []):
            with tracer.start_as_current_span(
                f"execute_tool {name}",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": name,
                    "gen_ai.tool.call.arguments": json.dumps({"city": city}),
                    "gen_ai.tool.call.result": json.dumps(f"{name} of {city}"),
                },
            ):
                pass
        answer = f"sunny in {city}"
        logger.emit(
            event_name="gen_ai.choice",
            attributes={"gen_ai.system": "sim"},
            body={"index": 0, "finish_reason": "stop", "message": {"content": answer}},
        )
        return answer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            city = str(body["input"])
            context = propagate.extract(dict(self.headers))
            with tracer.start_as_current_span(
                "invoke_agent weather",
                context=context,
                kind=SpanKind.SERVER,
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "weather",
                },
            ):
                answer = run_agent(city)
            out = json.dumps({"output": answer}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"PORT {server.server_port}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        sys.stdin.read()  # until the test closes our standard input
    finally:
        server.shutdown()
        provider.shutdown()
        logs.shutdown()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "export")
