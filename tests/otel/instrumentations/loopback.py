"""A loopback OpenAI-compatible server that scripts each case's conversation.

`POST /v1/chat/completions` on 127.0.0.1 (a free port), as the openai SDK calls it. Which case
a request belongs to is read from its first user message, and how far the conversation got
from whether it already holds tool results (messages of role `tool`):

- "paris": asks for two tool calls at once (`get_weather`, `get_time`), then answers.
- "atlantis": asks for `get_weather` of a city the tool does not know (the tool fails), then
  answers that it could not find it.
- "hello": answers at once, with no tool call.

`POST /v1/responses` (the Responses API) plays the same scripts: its `input` items hold the
conversation (`function_call_output` items are the tool results), its `output` the turn's
`function_call` items or one assistant `message`, with the same usage.

A chat completion request with `"stream": true` is answered as the API streams (server-sent events of
`chat.completion.chunk`s): the text in pieces, each tool call's arguments in pieces after a
first chunk naming it, the finish reason, and, only when `stream_options.include_usage` asks
for it, a last chunk with the usage and no choices; then `data: [DONE]`.

Every response reports usage with cached and reasoning tokens, as OpenAI's API does
(`prompt_tokens_details.cached_tokens`, `completion_tokens_details.reasoning_tokens`); the
first and the second call of a conversation report different numbers, so a reader that drops
or doubles one is caught.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .http_plumbing import QuietHandler, serving

REQUEST_MODEL = "gpt-test"
"""The model the agents ask for."""
RESPONSE_MODEL = "gpt-test-2025"
"""The model the server says answered: a dated snapshot of REQUEST_MODEL, as OpenAI answers
(OpenInference records this one, the other families the requested one)."""


@dataclass(frozen=True)
class Turn:
    """One scripted model response: tool calls `(id, name, arguments)` or a text answer."""

    tool_calls: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    text: str | None = None
    usage: tuple[int, int, int, int] = (0, 0, 0, 0)
    """(prompt, completion, cached, reasoning) tokens."""


FIRST_USAGE = (50, 20, 10, 5)
SECOND_USAGE = (80, 12, 40, 3)

SCRIPTS: dict[str, tuple[Turn, ...]] = {
    "paris": (
        Turn(
            tool_calls=(
                ("call_paris_weather", "get_weather", {"city": "Paris"}),
                ("call_paris_time", "get_time", {"tz": "CET"}),
            ),
            usage=FIRST_USAGE,
        ),
        Turn(text="It is sunny, 18 C, and 12:00 in Paris.", usage=SECOND_USAGE),
    ),
    "atlantis": (
        Turn(
            tool_calls=(("call_atlantis_weather", "get_weather", {"city": "Atlantis"}),),
            usage=FIRST_USAGE,
        ),
        Turn(text="I could not find Atlantis.", usage=SECOND_USAGE),
    ),
    "hello": (Turn(text="Hello! Ask me about the weather.", usage=FIRST_USAGE),),
}


def _text(content: Any) -> str:
    # A message's content is a string, or a list of parts (pydantic-ai may send either).
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def script_of(messages: list[dict[str, Any]]) -> str:
    """The case a conversation belongs to, by its first user message."""
    question = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    lowered = question.lower()
    return next((name for name in SCRIPTS if name in lowered), "hello")


def _response(turn: Turn, number: int) -> dict[str, Any]:
    prompt, completion, cached, reasoning = turn.usage
    message: dict[str, Any] = {"role": "assistant", "content": turn.text}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for call_id, name, arguments in turn.tool_calls
        ]
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1_764_000_000,
        "model": RESPONSE_MODEL,
        "system_fingerprint": "fp_test",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if turn.tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
            "completion_tokens_details": {"reasoning_tokens": reasoning},
        },
    }


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _chunks(turn: Turn, number: int, include_usage: bool) -> Iterator[dict[str, Any]]:
    """The chunks of `turn` streamed, as the API sends them."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion.chunk",
            "created": 1_764_000_000,
            "model": RESPONSE_MODEL,
            "system_fingerprint": "fp_test",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": "" if turn.text is not None else None})
    if turn.text is not None:
        for piece in _pieces(turn.text):
            yield chunk({"content": piece})
    for index, (call_id, name, arguments) in enumerate(turn.tool_calls):
        first = {"index": index, "id": call_id, "type": "function"}
        yield chunk({"tool_calls": [{**first, "function": {"name": name, "arguments": ""}}]})
        for piece in _pieces(json.dumps(arguments), 5):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, "tool_calls" if turn.tool_calls else "stop")
    if include_usage:
        last = chunk({})
        last["choices"] = []
        last["usage"] = _response(turn, number)["usage"]
        yield last


def _responses_answer(turn: Turn, number: int) -> dict[str, Any]:
    """`turn` as a Responses API response."""
    prompt, completion, cached, reasoning = turn.usage
    output: list[dict[str, Any]] = [
        {
            "type": "function_call",
            # An item id unrelated to the call id, as OpenAI's are.
            "id": f"fc_{number:03d}{index}",
            "call_id": call_id,
            "name": name,
            "arguments": json.dumps(arguments),
            "status": "completed",
        }
        for index, (call_id, name, arguments) in enumerate(turn.tool_calls)
    ]
    if turn.text is not None:
        output.append(
            {
                "type": "message",
                "id": f"msg_{number}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        )
    return {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": 1_764_000_000,
        "status": "completed",
        "model": RESPONSE_MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "usage": {
            "input_tokens": prompt,
            "output_tokens": completion,
            "total_tokens": prompt + completion,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens_details": {"reasoning_tokens": reasoning},
        },
    }


def _responses_events(response: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A Responses API response as the API streams it: `response.created`, each output item
    added, its text or arguments in deltas, done, then `response.completed` with the usage."""
    started = {**response, "status": "in_progress", "output": [], "usage": None}
    yield {"type": "response.created", "response": started}
    for index, item in enumerate(response["output"]):
        if item["type"] == "function_call":
            yield {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "arguments": "", "status": "in_progress"},
            }
            for piece in _pieces(item["arguments"], 5):
                yield {
                    "type": "response.function_call_arguments.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "delta": piece,
                }
            yield {
                "type": "response.function_call_arguments.done",
                "item_id": item["id"],
                "output_index": index,
                "arguments": item["arguments"],
            }
        else:
            text = item["content"][0]["text"]
            part = {"type": "output_text", "text": "", "annotations": []}
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            yield {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "content": [], "status": "in_progress"},
            }
            yield {"type": "response.content_part.added", **where, "part": part}
            for piece in _pieces(text):
                yield {"type": "response.output_text.delta", **where, "delta": piece}
            yield {"type": "response.output_text.done", **where, "text": text}
            yield {"type": "response.content_part.done", **where, "part": {**part, "text": text}}
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
    yield {"type": "response.completed", "response": response}


@dataclass
class ScriptedOpenAI:
    """The running server: its base URL (for `openai.OpenAI(base_url=...)`) and the requests
    it answered, in order."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        turn, number = self._turn(body)
        return _response(turn, number)

    def stream(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The answer to a request with `"stream": true`, chunk by chunk."""
        turn, number = self._turn(body)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return _chunks(turn, number, include_usage)

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        """The answer to a Responses API request."""
        items = body.get("input", [])
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        # A tool result item is a message of role `tool`, to count the rounds as in a chat.
        messages = [
            {"role": "tool"} if item.get("type") == "function_call_output" else item
            for item in items
        ]
        turn, number = self._turn({**body, "messages": messages})
        return _responses_answer(turn, number)

    def _turn(self, body: dict[str, Any]) -> tuple[Turn, int]:
        messages = body.get("messages", [])
        turns = SCRIPTS[script_of(messages)]
        # One turn per round of tool results already in the conversation.
        rounds = sum(
            1
            for before, message in itertools.pairwise(messages)
            if message.get("role") == "tool" and before.get("role") != "tool"
        )
        with self.lock:
            self.requests.append(body)
            number = len(self.requests)
        return turns[min(rounds, len(turns) - 1)], number


@contextmanager
def scripted_openai() -> Iterator[ScriptedOpenAI]:
    """Serve the scripts on 127.0.0.1 (a free port) while the block runs."""
    server: ScriptedOpenAI | None = None

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            assert server is not None
            body = self.read_json()
            path = self.path.rstrip("/")
            if path not in ("/v1/chat/completions", "/v1/responses"):
                self.send_error(404)
                return
            if path == "/v1/responses" and body.get("stream"):
                self.send_events(_numbered_events(_responses_events(server.respond(body))))
            elif path == "/v1/responses":
                self.send_json(server.respond(body))
            elif body.get("stream"):
                self.send_events(_chat_events(server.stream(body)))
            else:
                self.send_json(server.answer(body))

    with serving(Handler) as port:
        server = ScriptedOpenAI(base_url=f"http://127.0.0.1:{port}/v1")
        yield server


def _chat_events(chunks: Iterator[dict[str, Any]]) -> Iterator[str]:
    # Chat Completions' stream: unnamed server-sent events, ended by [DONE].
    for chunk in chunks:
        yield f"data: {json.dumps(chunk)}\n\n"
    yield "data: [DONE]\n\n"


def _numbered_events(events: Iterator[dict[str, Any]]) -> Iterator[str]:
    # The Responses API's stream: named server-sent events, numbered, no [DONE].
    for number, event in enumerate(events):
        data = json.dumps({**event, "sequence_number": number})
        yield f"event: {event['type']}\ndata: {data}\n\n"
