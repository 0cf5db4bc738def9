"""A plain openai-SDK tool agent, traced by a real instrumentation, writing its spans as OTLP
JSON, as an app outside agenteval would. Imports nothing of agenteval.

    python record_lone_calls.py OUT FAMILY MODE CITY [CITY ...]

Each city is a case (`case-<city>`): the agent asks the model, which (a loopback
OpenAI-compatible server started here) asks for `get_weather{"city": CITY}`; the agent runs the
tool and calls the model again, which answers `Sunny in CITY.`: two model calls a trial.

FAMILY: `v2` (opentelemetry-instrumentation-openai-v2, message content on spans), `v2bare`
(the same without message content, its default), `oi` (openinference-instrumentation-openai) or
`tl` (OpenLLMetry's opentelemetry-instrumentation-openai). MODE says what the app does around a trial:
- `bare`: nothing; each model call is a trace of its own (what these instrumentations give);
- `wrapped`: one span of its own around the trial, naming its case (the documented fix);
- `stamped`: no span of its own, but a span processor copying the case id onto every span,
  so each model call is a trace of its own that names its case;
- `batched`: `wrapped`, inside one span around the whole loop (`eval-batch`), so the three
  trials share one trace.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CASE_ATTRIBUTE = "agenteval.case.id"


class _Model(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        del args

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        messages = body["messages"]
        city = messages[-1]["content"] if messages[-1]["role"] == "user" else None
        if city is not None:
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": json.dumps({"city": city}),
                        },
                    }
                ],
            }
            finish = "tool_calls"
        else:
            asked = next(m for m in messages if m["role"] == "user")["content"]
            message, finish = {"role": "assistant", "content": f"Sunny in {asked}."}, "stop"
        out = json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": "gpt-test",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def main(out: str, family: str, mode: str, cities: list[str]) -> None:
    if family == "v2":
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    from google.protobuf import json_format
    from opentelemetry import context, trace
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    current_case = context.create_key("case")

    class StampCase(SpanProcessor):
        """Copies the case id onto every span started (as attribute-stamping processors do)."""

        def on_start(self, span: Any, parent_context: Any = None) -> None:
            case_id = context.get_value(current_case)
            if case_id is not None:
                span.set_attribute(CASE_ATTRIBUTE, case_id)

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    if mode == "stamped":
        provider.add_span_processor(StampCase())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    if family in ("v2", "v2bare"):
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    elif family == "oi":
        from openinference.instrumentation.openai import OpenAIInstrumentor
    else:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    OpenAIInstrumentor().instrument(tracer_provider=provider)

    import openai

    client = openai.OpenAI(
        base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="x", max_retries=0
    )
    tools: Any = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]

    def agent(city: str) -> str:
        messages: list[Any] = [{"role": "user", "content": city}]
        reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
        asked = reply.choices[0].message
        messages.append(asked.model_dump(exclude_none=True))
        for call in asked.tool_calls or []:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny"})
        final = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
        return final.choices[0].message.content or ""

    tracer = provider.get_tracer("my-agent")
    batch = tracer.start_span("eval-batch") if mode == "batched" else None
    outer = context.attach(trace.set_span_in_context(batch)) if batch is not None else None
    for city in cities:
        case_id = f"case-{city}"
        token = context.attach(context.set_value(current_case, case_id))
        try:
            if mode in ("wrapped", "batched"):
                with tracer.start_as_current_span("my-agent", attributes={CASE_ATTRIBUTE: case_id}):
                    agent(city)
            else:
                agent(city)
        finally:
            context.detach(token)
    if batch is not None and outer is not None:
        context.detach(outer)
        batch.end()
    provider.force_flush()
    export = json_format.MessageToDict(encode_spans(exporter.get_finished_spans()))
    Path(out).write_text(json.dumps(export) + "\n", encoding="utf-8")
    server.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
