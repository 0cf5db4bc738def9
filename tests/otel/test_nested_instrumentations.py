"""Two real instrumentations on one model call: pydantic-ai's span around the official
openai-v2's (default NO_CONTENT), a pydantic-ai agent on `OpenAIChatModel` against a loopback
OpenAI-compatible server. The call counts once, with the inner span's timing and the outer
span's cached and reasoning tokens and tool definitions (on agenteval 543b07e the outer span
was dropped with them), and pydantic-ai's tool spans stay the record of the tool calls."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tests.otel.installed import import_or_skip

from agenteval.otel import read_spans
from agenteval.otel.live import span_record

import_or_skip("pydantic_ai")
import_or_skip("opentelemetry.instrumentation.openai_v2")

USAGE = {
    "prompt_tokens": 50,
    "completion_tokens": 20,
    "total_tokens": 70,
    "prompt_tokens_details": {"cached_tokens": 10},
    "completion_tokens_details": {"reasoning_tokens": 5},
}


class _Scripted(BaseHTTPRequestHandler):
    """First request: call get_weather; once a tool result is in the request: answer."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if any(m["role"] == "tool" for m in body["messages"]):
            message: dict[str, Any] = {"role": "assistant", "content": "Sunny in Paris"}
            reason = "stop"
        else:
            call = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_A", "type": "function", "function": call}],
            }
            reason = "tool_calls"
        out = json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": "gpt-test",
                "choices": [{"index": 0, "message": message, "finish_reason": reason}],
                "usage": USAGE,
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


@pytest.fixture
def openai_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


def test_pydantic_ai_over_openai_v2_counts_each_call_once_with_both_spans_fields(
    openai_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        model = OpenAIChatModel(
            "gpt-test", provider=OpenAIProvider(base_url=openai_url, api_key="test")
        )
        agent: Agent[None, str] = Agent(model)
        agent.instrument = InstrumentationSettings(tracer_provider=provider)

        @agent.tool_plain
        def get_weather(city: str) -> str:
            """Today's weather in a city."""
            return f"sunny in {city}"

        answer = agent.run_sync("Weather in Paris?").output
    finally:
        instrumentor.uninstrument()
    assert answer == "Sunny in Paris"
    spans = [span_record(s) for s in exporter.get_finished_spans()]
    scopes = {s.scope for s in spans}
    assert "pydantic-ai" in scopes and "opentelemetry.util.genai.handler" in scopes

    reading = read_spans(spans)
    assert len(reading.model_calls) == 2  # four model spans, two calls
    inner = [s for s in spans if s.scope == "opentelemetry.util.genai.handler"]
    for call, span in zip(
        reading.model_calls, sorted(inner, key=lambda s: s.start_ns), strict=True
    ):
        assert call.duration_s == span.duration_s  # the inner span's timing
        assert (call.usage.input_tokens, call.usage.cached_tokens) == (50, 10)
        assert call.usage.reasoning_tokens == 5  # pydantic-ai's gen_ai.usage.details.*
    assert list(reading.tools) == ["get_weather"]
    assert reading.tools["get_weather"].parameters["required"] == ["city"]
    [tool] = reading.tool_calls  # pydantic-ai's tool span, not a second one from messages
    assert (tool.name, tool.arguments, tool.id) == ("get_weather", {"city": "Paris"}, "call_A")
    assert tool.result == "sunny in Paris"
    assert reading.output == "Sunny in Paris"
    assert reading.not_recorded == {}
