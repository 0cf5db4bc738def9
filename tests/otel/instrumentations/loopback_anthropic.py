"""A loopback Anthropic Messages API server that plays `loopback.py`'s scripts.

`POST /v1/messages` on 127.0.0.1 (a free port), as the anthropic SDK calls it. The case is read
from the first user message, how far the conversation got from how many user turns already
carry `tool_result` blocks (one per round of tool results). A turn's tool calls come back as
`tool_use` content blocks (`stop_reason: "tool_use"`), its answer as one `text` block
(`"end_turn"`). A request with `"stream": true` is answered as the API streams (server-sent
events): `message_start` with the input-side usage, each block's start, its text or its
input's JSON in pieces, its stop, then `message_delta` with the stop reason and the output
tokens, and `message_stop`.

Usage is reported as Anthropic reports it: `input_tokens` are the prompt tokens NOT read from
the cache, `cache_read_input_tokens` the ones that were, and `cache_creation_input_tokens` the
ones written to it (so the prompt is the sum of the three). A script's cached tokens are read
from the cache, and CACHE_WRITTEN more are written on each call, so a reader that takes
`input_tokens` for the whole prompt is caught. Anthropic reports no reasoning tokens.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .http_plumbing import QuietHandler, serving
from .loopback import SCRIPTS, Turn

CLAUDE_MODEL = "claude-test"
"""The model the Anthropic agent asks for (the server answers with this name too, as
Anthropic does for a model id that is not an alias)."""

CACHE_WRITTEN = 7
"""Prompt tokens written to the cache on each call (`cache_creation_input_tokens`)."""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _rounds(messages: list[dict[str, Any]]) -> int:
    """The rounds of tool results already sent: user turns holding `tool_result` blocks."""
    return sum(
        1
        for m in messages
        if m.get("role") == "user"
        and isinstance(m.get("content"), list)
        and any(b.get("type") == "tool_result" for b in m["content"])
    )


def usage_of(turn: Turn) -> dict[str, int]:
    """`turn`'s tokens as Anthropic reports them (see the module's docstring)."""
    prompt, completion, cached, _ = turn.usage
    return {
        "input_tokens": prompt - cached - CACHE_WRITTEN,
        "output_tokens": completion,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": CACHE_WRITTEN,
    }


def _message(turn: Turn, number: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = [
        {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
        for call_id, name, arguments in turn.tool_calls
    ]
    if turn.text is not None:
        content.append({"type": "text", "text": turn.text})
    return {
        "id": f"msg_{number:03d}",
        "type": "message",
        "role": "assistant",
        "model": CLAUDE_MODEL,
        "content": content,
        "stop_reason": "tool_use" if turn.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": usage_of(turn),
    }


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def events_of(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """`message` as the Messages API streams it: (event name, data)."""
    usage = message["usage"]
    started = {**message, "content": [], "stop_reason": None}
    started["usage"] = {**usage, "output_tokens": 1}
    yield "message_start", {"type": "message_start", "message": started}
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            opening = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": piece}
                for piece in _pieces(json.dumps(block["input"]), 5)
            ]
        else:
            opening = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"], 7)]
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
        for delta in deltas:
            yield (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}


@dataclass
class ScriptedAnthropic:
    """The running server: its base URL (for `anthropic.Anthropic(base_url=...)`) and the
    requests it answered, in order."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages", [])
        question = next((_text(m.get("content")) for m in messages if m["role"] == "user"), "")
        name = next((n for n in SCRIPTS if n in question.lower()), "hello")
        turns = SCRIPTS[name]
        with self.lock:
            self.requests.append(body)
            number = len(self.requests)
        return _message(turns[min(_rounds(messages), len(turns) - 1)], number)


@contextmanager
def scripted_anthropic() -> Iterator[ScriptedAnthropic]:
    """Serve the scripts on 127.0.0.1 (a free port) while the block runs."""
    server: ScriptedAnthropic | None = None

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            assert server is not None
            if self.path.split("?")[0].rstrip("/") != "/v1/messages":
                self.send_error(404)
                return
            body = self.read_json()
            if body.get("stream"):
                self.send_events(
                    f"event: {name}\ndata: {json.dumps(data)}\n\n"
                    for name, data in events_of(server.answer(body))
                )
                return
            self.send_json(server.answer(body))

    with serving(Handler) as port:
        server = ScriptedAnthropic(base_url=f"http://127.0.0.1:{port}")
        yield server
