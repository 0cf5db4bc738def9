"""Loopback model servers that script tool calls, for the built-in agent's tests.

Built on the judge's fakes (`tests.judge.fakes`) by composition: each fake here is the judge's
fake of the same protocol, with two more script items, written in that protocol's own shape:

- `tool_calls(call(name, **arguments), ..., text=None)`: the model asks for these tools (several
  at once: parallel tool calls), optionally saying `text` beside them. `call_raw(name, text)`
  sends arguments that are not JSON, as a model sometimes does;
- `answer(text)`: the model answers without asking for a tool.

The judge fakes' items (`http_error`, `delay`, `raw_response`, ...) work as before, and so do
`push`, `handler`, `requests` and `request_count`. Each fake answers `answer("done")` when
nothing is scripted.

Example::

    with ToolCallingOpenAI() as fake:
        fake.push(
            tool_calls(call("kb_search", query="refund"), call("fx", amount=5)),
            http_error(429, retry_after=0),
            answer("30 days"),
        )
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.judge.fakes import (
    FakeAnthropic,
    FakeGoogle,
    FakeOpenAI,
    Item,
    Reply,
    TokenCounts,
)

__all__ = [
    "Answer",
    "Call",
    "ToolCallingAnthropic",
    "ToolCallingGoogle",
    "ToolCallingOpenAI",
    "ToolCalls",
    "answer",
    "call",
    "call_raw",
    "tool_calls",
]


@dataclass(frozen=True)
class Call:
    """One tool call the model asks for; `raw` replaces the JSON arguments with this text."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw: str | None = None


@dataclass(frozen=True)
class ToolCalls:
    """The model asks for these tools (in one response)."""

    calls: tuple[Call, ...]
    text: str | None = None
    usage: TokenCounts = field(default_factory=TokenCounts)


@dataclass(frozen=True)
class Answer:
    """The model answers with this text and asks for no tool."""

    text: str
    usage: TokenCounts = field(default_factory=TokenCounts)


def call(name: str, /, **arguments: Any) -> Call:
    """A tool call with these arguments."""
    return Call(name, dict(arguments))


def call_raw(name: str, raw: str) -> Call:
    """A tool call whose arguments are this text (not necessarily JSON)."""
    return Call(name, {}, raw)


def tool_calls(
    *calls: Call,
    text: str | None = None,
    input_tokens: int = 12,
    output_tokens: int = 7,
    cached_tokens: int = 0,
    reasoning_tokens: int = 0,
) -> ToolCalls:
    """A response asking for `calls`."""
    return ToolCalls(
        tuple(calls),
        text,
        TokenCounts(input_tokens, output_tokens, cached_tokens, reasoning_tokens),
    )


def answer(
    text: str,
    *,
    input_tokens: int = 12,
    output_tokens: int = 7,
    cached_tokens: int = 0,
    reasoning_tokens: int = 0,
) -> Answer:
    """A final answer."""
    return Answer(text, TokenCounts(input_tokens, output_tokens, cached_tokens, reasoning_tokens))


class ToolCallingOpenAI(FakeOpenAI):
    """`FakeOpenAI` that also answers with ``tool_calls`` (``finish_reason: tool_calls``)."""

    def __init__(self, *, default: Item | None = None) -> None:
        super().__init__(default=default if default is not None else answer("done"))  # type: ignore[arg-type]

    def _render(self, item: Any, route: str, body: dict[str, Any]) -> Reply:
        if not isinstance(item, ToolCalls | Answer):
            return super()._render(item, route, body)
        message: dict[str, Any] = {"role": "assistant", "content": item.text, "refusal": None}
        finish = "stop"
        if isinstance(item, ToolCalls):
            finish = "tool_calls"
            message["tool_calls"] = [
                {
                    "id": f"call_{self._next_id()}",
                    "type": "function",
                    "function": {
                        "name": c.name,
                        "arguments": c.raw if c.raw is not None else json.dumps(c.arguments),
                    },
                }
                for c in item.calls
            ]
        usage = item.usage
        return Reply.json(
            200,
            {
                "id": f"chatcmpl-fake{self._next_id()}",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": str(body.get("model", "fake-model")),
                "choices": [
                    {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
                ],
                "usage": {
                    "prompt_tokens": usage.input_tokens,
                    "completion_tokens": usage.output_tokens,
                    "total_tokens": usage.input_tokens + usage.output_tokens,
                    "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
                    "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
                },
            },
        )


class ToolCallingAnthropic(FakeAnthropic):
    """`FakeAnthropic` that also answers with ``tool_use`` blocks (``stop_reason: tool_use``)."""

    def __init__(self, *, default: Item | None = None) -> None:
        super().__init__(default=default if default is not None else answer("done"))  # type: ignore[arg-type]

    def _render(self, item: Any, route: str, body: dict[str, Any]) -> Reply:
        if not isinstance(item, ToolCalls | Answer):
            return super()._render(item, route, body)
        content: list[dict[str, Any]] = []
        if item.text is not None:
            content.append({"type": "text", "text": item.text})
        stop = "end_turn"
        if isinstance(item, ToolCalls):
            stop = "tool_use"
            content.extend(
                {
                    "type": "tool_use",
                    "id": f"toolu_{self._next_id()}",
                    "name": c.name,
                    "input": c.arguments,
                }
                for c in item.calls
            )
        usage = item.usage
        return Reply.json(
            200,
            {
                "id": f"msg_fake{self._next_id()}",
                "type": "message",
                "role": "assistant",
                "model": str(body.get("model", "fake-model")),
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": usage.input_tokens - usage.cached_tokens,
                    "output_tokens": usage.output_tokens,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": usage.cached_tokens,
                },
            },
        )


class ToolCallingGoogle(FakeGoogle):
    """`FakeGoogle` that also answers with ``functionCall`` parts."""

    def __init__(self, *, default: Item | None = None) -> None:
        super().__init__(default=default if default is not None else answer("done"))  # type: ignore[arg-type]

    def _render(self, item: Any, route: str, body: dict[str, Any]) -> Reply:
        if not isinstance(item, ToolCalls | Answer):
            return super()._render(item, route, body)
        parts: list[dict[str, Any]] = []
        if item.text is not None:
            parts.append({"text": item.text})
        if isinstance(item, ToolCalls):
            parts.extend(
                {
                    "functionCall": {
                        "id": f"fc_{self._next_id()}",
                        "name": c.name,
                        "args": c.arguments,
                    }
                }
                for c in item.calls
            )
        usage = item.usage
        metadata: dict[str, Any] = {
            "promptTokenCount": usage.input_tokens,
            "candidatesTokenCount": usage.output_tokens,
            "totalTokenCount": usage.input_tokens + usage.output_tokens,
        }
        if usage.cached_tokens:
            metadata["cachedContentTokenCount"] = usage.cached_tokens
        if usage.reasoning_tokens:
            metadata["thoughtsTokenCount"] = usage.reasoning_tokens
        model = path_model(route)
        return Reply.json(
            200,
            {
                "candidates": [
                    {
                        "index": 0,
                        "content": {"role": "model", "parts": parts},
                        "finishReason": "STOP",
                    }
                ],
                "usageMetadata": metadata,
                "modelVersion": model,
                "responseId": f"resp-fake{self._next_id()}",
            },
        )


def path_model(route: str) -> str:
    """The model a Gemini path names."""
    return route.partition("/models/")[2].split(":", 1)[0]
