"""A loopback OpenAI-compatible server that admits R requests per second and refuses the rest.

    python bench/servers/rate_limited_openai.py --rate R [--port 0] [--whole-seconds]

``POST /v1/chat/completions`` answers a chat completion saying "Paris" for the first R requests
of each **fixed one-second window** (windows start at whole seconds of the server's monotonic
clock), and ``429 Too Many Requests`` for every request beyond them, with ``Retry-After`` set to
the time left in the window, in seconds with millisecond decimals ("0.412"), and
``retry-after-ms`` as OpenAI sends it; with ``--whole-seconds``, ``Retry-After`` is rounded up
to whole seconds, as HTTP's delay-seconds are (``retry-after-ms`` stays exact). ``GET /stats`` gives ``{"admitted": n, "refused": k}``.

A tiny asyncio HTTP/1.1 server (keep-alive, Content-Length bodies), standard library only, so
it costs little CPU beside the client it measures. Its first line on stdout is ``PORT <port>``;
it runs until stdin closes (its parent exited) or it is terminated.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time

_REASONS = {200: "OK", 404: "Not Found", 429: "Too Many Requests"}


class Window:
    """R admissions per fixed one-second window."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.admitted = 0
        self.refused = 0
        self._second = -1
        self._used = 0

    def admit(self) -> float | None:
        """None when the request is admitted, else the seconds left in the window."""
        now = time.monotonic()
        second = math.floor(now)
        if second != self._second:
            self._second, self._used = second, 0
        if self._used < self.rate:
            self._used += 1
            self.admitted += 1
            return None
        self.refused += 1
        return second + 1 - now


def _completion(model: str, serial: int) -> dict[str, object]:
    return {
        "id": f"chatcmpl-w4-{serial}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Paris", "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13},
    }


def _response(status: int, body: object, headers: dict[str, str] | None = None) -> bytes:
    data = json.dumps(body).encode()
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}"]
    for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
        lines.append(f"{name}: {value}")
    lines.append(f"Content-Length: {len(data)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


class Server:
    def __init__(self, rate: int, *, whole_seconds: bool) -> None:
        self.window = Window(rate)
        self.whole_seconds = whole_seconds
        self.serial = 0

    def answer(self, method: str, path: str, body: bytes) -> bytes:
        route = path.split("?", 1)[0]
        if method == "GET" and route == "/stats":
            return _response(
                200, {"admitted": self.window.admitted, "refused": self.window.refused}
            )
        if method != "POST" or route not in {"/v1/chat/completions", "/chat/completions"}:
            return _response(404, {"error": {"message": f"no route {route}"}})
        left = self.window.admit()
        if left is not None:
            error = {
                "message": "Rate limit reached for requests",
                "type": "requests",
                "param": None,
                "code": "rate_limit_exceeded",
            }
            after = str(math.ceil(left)) if self.whole_seconds else f"{left:.3f}"
            headers = {"Retry-After": after, "retry-after-ms": str(math.ceil(left * 1000))}
            return _response(429, {"error": error}, headers)
        self.serial += 1
        model = str(json.loads(body or b"{}").get("model", "w4-model"))
        return _response(200, _completion(model, self.serial))

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                request_line, *header_lines = head.decode("latin-1").split("\r\n")
                method, path, _ = request_line.split(" ", 2)
                length = 0
                for line in header_lines:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                body = await reader.readexactly(length) if length else b""
                writer.write(self.answer(method, path, body))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def _main(rate: int, port: int, whole_seconds: bool) -> None:
    server = Server(rate, whole_seconds=whole_seconds)
    listener = await asyncio.start_server(server.serve, "127.0.0.1", port, backlog=1024)
    print(f"PORT {listener.sockets[0].getsockname()[1]}", flush=True)
    # Stop when the parent goes away (stdin reaches end of file).
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    listener.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rate", type=int, required=True, help="requests admitted per second")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--whole-seconds", action="store_true", help="Retry-After in whole seconds")
    args = parser.parse_args()
    asyncio.run(_main(args.rate, args.port, args.whole_seconds))


if __name__ == "__main__":
    main()
