"""A scripted OpenAI-compatible server, so the built-in agent example runs offline.

It speaks chat completions (``POST /v1/chat/completions``) as OpenAI-compatible servers do, and
plays a deterministic "model" that uses the example's tools: it asks for `get_weather` (and
`convert_currency` in the same response, as a parallel tool call, when the question names an
amount), then answers from the tool results it is sent back. Any real server works instead:
point OPENAI_BASE_URL at it.

    python examples/builtin_agent/run_offline.py [--verbose ...]   # server and run in one step
    python examples/builtin_agent/scripted_server.py [--port 8765]  # the server alone
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)
_CITY = re.compile(r"\b(?:in|to) ([A-Z][a-z]+)")
_AMOUNT = re.compile(r"(\d+(?:\.\d+)?)\s*(EUR|USD|GBP)")
_TARGET = re.compile(r"\bin (EUR|USD|GBP)\b")


def _tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{next(_ids)}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _first_turn(question: str) -> dict[str, Any]:
    """Decide which tools to ask for, from the question."""
    city = _CITY.search(question)
    if city is None or "weather" not in question:
        return {"role": "assistant", "content": "Hello and welcome to Acme Travel!"}
    calls = [_tool_call("get_weather", {"city": city.group(1)})]
    amount, target = _AMOUNT.search(question), _TARGET.search(question)
    if amount and target:
        calls.append(
            _tool_call(
                "convert_currency",
                {
                    "amount": float(amount.group(1)),
                    "from_currency": amount.group(2),
                    "to_currency": target.group(1),
                },
            )
        )
    return {"role": "assistant", "content": None, "tool_calls": calls}


def _answer(question: str, results: list[str]) -> dict[str, Any]:
    """Answer from the tool results, as a model would."""
    parts: list[str] = []
    for content in results:
        if content.startswith("error:"):
            city = _CITY.search(question)
            where = city.group(1) if city else "that city"
            return {"role": "assistant", "content": f"I could not find the weather for {where}."}
        data = json.loads(content)
        if "condition" in data:
            parts.append(
                f"{str(data['condition']).capitalize()} and {data['celsius']} °C in {data['city']}"
            )
        else:
            amount = _AMOUNT.search(question)
            given = f"{amount.group(1)} {amount.group(2)}" if amount else "That"
            parts.append(f"{given} is {data['amount']} {data['currency']}")
    return {"role": "assistant", "content": "; ".join(parts) + "."}


def complete(body: dict[str, Any]) -> dict[str, Any]:
    """One chat completion for a request body."""
    messages: list[dict[str, Any]] = body.get("messages", [])
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    question = str(messages[last_user].get("content") or "")
    results = [str(m.get("content")) for m in messages[last_user:] if m.get("role") == "tool"]
    message = _answer(question, results) if results else _first_turn(question)
    prompt_tokens = sum(len(str(m.get("content") or "")) for m in messages) // 4 + 40
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body.get("model", "scripted"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 18,
            "total_tokens": prompt_tokens + 18,
        },
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path.split("?")[0] not in {"/v1/chat/completions", "/chat/completions"}:
            status, reply = 404, {"error": {"message": f"no route {self.path}"}}
        else:
            status, reply = 200, complete(body)
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def serve(port: int = 8765) -> ThreadingHTTPServer:
    """Start the server on 127.0.0.1:`port` (0: any free port) in a daemon thread."""
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv: list[str] | None = None) -> int:
    """Serve until Ctrl-C; a port another program holds ends it at once, saying so (exit 1),
    rather than leaving the example to run against whatever listens there."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--port", type=int, default=8765, help="0: any free port")
    port = parser.parse_args(argv).port
    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    except OSError as exc:
        print(
            f"error: port {port} is in use ({exc.strerror}): another program listens there, "
            "and the example would run against it.\n"
            "  hint: python examples/builtin_agent/run_offline.py starts this server on a free "
            "port and runs the example against it; or pass --port N",
            file=sys.stderr,
        )
        return 1
    print(
        f"scripted OpenAI-compatible server on http://127.0.0.1:{server.server_address[1]}/v1",
        flush=True,
    )
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
