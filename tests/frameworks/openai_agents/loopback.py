"""A loopback OpenAI-compatible Chat Completions server scripting the agents of
`scripted.py`, as the SDK's `OpenAIChatCompletionsModel` calls it (`POST /v1/chat/completions`
on 127.0.0.1, a free port).

Which agent asks is read from its instructions (`[agent:NAME]`, the system message), which
case from the last user message, and how far the turn got from the tool calls the model
already asked for since that message. A `#N` in the user message tags the trial: it goes into
every call id and answer, so concurrent trials' records can be told apart.

Every response reports usage with cached and reasoning tokens (different numbers for each
round of a turn), as OpenAI's API does.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REQUEST_MODEL = "gpt-test"
RESPONSE_MODEL = "gpt-test-2025"


@dataclass(frozen=True)
class Reply:
    """One scripted response: tool calls `(id, name, arguments)`, or a text answer."""

    tool_calls: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    text: str | None = None


def usage(round_: int) -> tuple[int, int, int, int]:
    """(prompt, completion, cached, reasoning) tokens of a turn's `round_`-th request."""
    return 100 + 50 * round_, 10 + 5 * round_, 30 * round_, 2 + round_


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _found(pattern: str, text: str) -> str:
    match = re.search(pattern, text)
    return match.group(1) if match else ""


def script(agent: str, question: str, asked: list[str]) -> Reply:
    """What the model answers `agent` on `question`, having asked for the tools `asked`."""
    tag = _found(r"#(\d+)", question) or "0"
    text = question.lower()
    if agent == "triage":
        if "refund" in text and "transfer_to_refunds" not in asked:
            return Reply(tool_calls=((f"call_{tag}_handoff", "transfer_to_refunds", {}),))
        return Reply(text=f"How can I help? (#{tag})")
    if agent == "refunds":
        if "refund" in text and "refund_order" not in asked:
            arguments = {"order_id": f"A{tag}", "amount": 12.5}
            return Reply(tool_calls=((f"call_{tag}_refund", "refund_order", arguments),))
        if "refund" in text:
            return Reply(text=f"Refunded 12.50 on order A{tag}.")
        return Reply(text=f"You are welcome (#{tag}).")
    if agent == "forecaster":
        return Reply(text=json.dumps({"city": "Paris", "celsius": 18}))
    if "paris" in text:
        if not asked:
            return Reply(
                tool_calls=(
                    (f"call_{tag}_weather", "get_weather", {"city": "Paris"}),
                    (f"call_{tag}_time", "get_time", {"tz": "CET"}),
                )
            )
        return Reply(text=f"It is sunny, 18 C, and 12:00 in Paris (#{tag}).")
    if "atlantis" in text:
        if not asked:
            return Reply(tool_calls=((f"call_{tag}_weather", "get_weather", {"city": "Atlantis"}),))
        return Reply(text=f"I could not find Atlantis (#{tag}).")
    if "explode" in text:
        return Reply(tool_calls=((f"call_{tag}_explode", "explode", {}),))
    if "loop" in text:
        return Reply(tool_calls=((f"call_{tag}_{len(asked)}", "get_time", {"tz": "CET"}),))
    if "badargs" in text:
        if not asked:
            return Reply(tool_calls=((f"call_{tag}_weather", "get_weather", {"town": "Paris"}),))
        return Reply(text="I could not ask for the weather.")
    if "secret" in text:
        return Reply(text="The secret code is 1234.")
    return Reply(text=f"Hello! Ask me about the weather (#{tag}).")


def _response(reply: Reply, round_: int, number: int) -> dict[str, Any]:
    prompt, completion, cached, reasoning = usage(round_)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for call_id, name, arguments in reply.tool_calls
        ]
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1_764_000_000,
        "model": RESPONSE_MODEL,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
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


@dataclass
class ScriptedServer:
    """The running server: its base URL and the requests it answered, in order. `drop`: how
    many of the next requests to drop without an answer (the connection closed), as a
    flaky network does."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    drop: int = 0
    strip_usage: bool = False
    """Answer as a proxy that strips `usage` would: no token counts at all."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: dict[str, Any]) -> dict[str, Any] | None:
        messages: list[dict[str, Any]] = body.get("messages", [])
        system = next((_text(m.get("content")) for m in messages if m.get("role") == "system"), "")
        agent = _found(r"\[agent:(\w+)\]", system)
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        question = _text(messages[last_user].get("content")) if last_user >= 0 else ""
        asked = [
            call["function"]["name"]
            for m in messages[last_user + 1 :]
            for call in m.get("tool_calls") or ()
        ]
        rounds = sum(1 for m in messages[last_user + 1 :] if m.get("tool_calls"))
        with self.lock:
            if self.drop > 0:
                self.drop -= 1
                return None
            self.requests.append(body)
            number = len(self.requests)
        response = _response(script(agent, question, asked), rounds, number)
        if self.strip_usage:
            del response["usage"]
        return response


@contextmanager
def scripted_server() -> Iterator[ScriptedServer]:
    """Serve the scripts on 127.0.0.1 (a free port) while the block runs."""
    server: ScriptedServer | None = None

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            assert server is not None
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            if self.path.rstrip("/") != "/v1/chat/completions":
                self.send_error(404)
                return
            answer = server.answer(body)
            if answer is None:
                self.close_connection = True
                return
            out = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    http.daemon_threads = True
    server = ScriptedServer(base_url=f"http://127.0.0.1:{http.server_port}/v1")
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        http.shutdown()
        http.server_close()
        thread.join()
