"""A small agent instrumented with the OpenTelemetry API, as agent frameworks instrument theirs.

It answers weather questions with two tools (`get_weather`, `to_fahrenheit`) and a simulated
model, so it runs offline. It knows nothing of agenteval: it only emits spans that follow the
OpenTelemetry GenAI semantic conventions (`invoke_agent`, `chat`, `execute_tool`, with
`gen_ai.*` attributes), and leaves the choice of a TracerProvider to whoever runs it.
`agenteval run examples/otel` captures those spans live; `record.py` writes them to a file.

The simulated model is rate limited once on the question about Oslo: its first call fails with
a 429 and the agent backs off before trying again, as provider SDKs do. The trial's latency
counts that wait; its latency excluding waits does not.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

__all__ = ["answer"]

tracer = trace.get_tracer("weather-agent", "1.0")

AGENT = "weather-assistant"
MODEL = "sim-weather-1"
PROVIDER = "simulated"
WEATHER = {
    "lisbon": {"city": "Lisbon", "celsius": 21, "sky": "sunny"},
    "oslo": {"city": "Oslo", "celsius": -3, "sky": "snowing"},
    "paris": {"city": "Paris", "celsius": 14, "sky": "cloudy"},
}
TOOL_DEFINITIONS = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Today's weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
    {
        "type": "function",
        "name": "to_fahrenheit",
        "description": "Convert degrees Celsius to Fahrenheit.",
        "parameters": {
            "type": "object",
            "properties": {"celsius": {"type": "number"}},
            "required": ["celsius"],
            "additionalProperties": False,
        },
    },
]


class UnknownCityError(Exception):
    """The weather service does not know the city."""


class RateLimitError(Exception):
    """The (simulated) provider refused: too many requests."""


def get_weather(city: str) -> dict[str, Any]:
    """Today's weather in a city."""
    found = WEATHER.get(city.lower())
    if found is None:
        raise UnknownCityError(f"no weather for {city!r}")
    return found


def to_fahrenheit(celsius: float) -> float:
    """Degrees Celsius in Fahrenheit."""
    return round(celsius * 9 / 5 + 32, 1)


TOOLS: dict[str, Callable[..., Any]] = {"get_weather": get_weather, "to_fahrenheit": to_fahrenheit}


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _Conversation:
    """What the simulated model has read so far, and how often it was rate limited."""

    def __init__(self, question: str) -> None:
        self.question = question
        self.messages: list[dict[str, Any]] = [
            {"role": "user", "parts": [{"type": "text", "content": question}]}
        ]
        self.calls = 0
        self.rate_limited = "oslo" in question.lower()

    def decide(self) -> dict[str, Any]:
        """The model's next turn: a tool call, or the answer."""
        results = [
            p for m in self.messages for p in m["parts"] if p["type"] == "tool_call_response"
        ]
        asked = self.question.lower()
        found = re.search(r"\bin ([A-Z][a-z]+)", self.question)
        city = found.group(1) if found else ""
        if not results:
            return {
                "type": "tool_call",
                "id": "call-1",
                "name": "get_weather",
                "arguments": {"city": city},
            }
        last = results[-1]["response"]
        if isinstance(last, str) and last.startswith("error"):
            return {"type": "text", "content": f"Sorry, I have no weather for {city}."}
        weather = results[0]["response"]
        if "fahrenheit" in asked and len(results) == 1:
            return {
                "type": "tool_call",
                "id": "call-2",
                "name": "to_fahrenheit",
                "arguments": {"celsius": weather["celsius"]},
            }
        if "fahrenheit" in asked:
            return {"type": "text", "content": f"It is {last} °F in {weather['city']}."}
        return {
            "type": "text",
            "content": f"It is {weather['sky']} in {weather['city']}, {weather['celsius']} °C.",
        }


def _chat(conversation: _Conversation) -> dict[str, Any]:
    """One model call, as a `chat` span with its usage."""
    with tracer.start_as_current_span(
        f"chat {MODEL}",
        kind=trace.SpanKind.CLIENT,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": PROVIDER,
            "gen_ai.request.model": MODEL,
            "gen_ai.tool.definitions": json.dumps(TOOL_DEFINITIONS),
        },
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        conversation.calls += 1
        prompt = json.dumps(conversation.messages)
        time.sleep(0.002)  # the model thinks
        if conversation.rate_limited and conversation.calls == 1:
            span.set_attribute("error.type", "429")
            span.record_exception(RateLimitError("too many requests"))
            span.set_status(Status(StatusCode.ERROR, "too many requests"))
            raise RateLimitError("too many requests")
        part = conversation.decide()
        message = {"role": "assistant", "parts": [part]}
        span.set_attribute("gen_ai.output.messages", json.dumps([message]))
        span.set_attribute("gen_ai.usage.input_tokens", _tokens(prompt))
        span.set_attribute("gen_ai.usage.output_tokens", _tokens(json.dumps(part)))
        conversation.messages.append(message)
        return part


def _execute(call: dict[str, Any], conversation: _Conversation) -> None:
    """One tool call, as an `execute_tool` span."""
    arguments = json.dumps(call["arguments"])
    with tracer.start_as_current_span(
        f"execute_tool {call['name']}",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call["name"],
            "gen_ai.tool.call.id": call["id"],
            "gen_ai.tool.call.arguments": arguments,
        },
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            result: Any = TOOLS[call["name"]](**call["arguments"])
        except Exception as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, str(exc)))
            result = f"error: {exc}"
        else:
            span.set_attribute("gen_ai.tool.call.result", json.dumps(result))
    conversation.messages.append(
        {
            "role": "user",
            "parts": [{"type": "tool_call_response", "id": call["id"], "response": result}],
        }
    )


def answer(question: str) -> str:
    """Answer a weather question: call tools as the model asks, then answer."""
    with tracer.start_as_current_span(
        f"invoke_agent {AGENT}",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT},
    ) as span:
        conversation = _Conversation(question)
        for _ in range(5):
            try:
                part = _chat(conversation)
            except RateLimitError:
                time.sleep(0.05)  # back off, then try again
                continue
            if part["type"] == "text":
                span.set_attribute(
                    "gen_ai.output.messages",
                    json.dumps([{"role": "assistant", "parts": [part]}]),
                )
                return str(part["content"])
            _execute(part, conversation)
        return "I could not finish."
