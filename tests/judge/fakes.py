"""Fake judge-model servers on 127.0.0.1 that speak the real wire protocols.

Each fake is a real HTTP server (``http.server.ThreadingHTTPServer`` on port 0, served from a
daemon thread), so the official SDKs talk to it exactly as they talk to the hosted APIs:

- `FakeOpenAI`: ``POST /v1/chat/completions`` (and ``/chat/completions``), the OpenAI
  chat-completions protocol, as OpenAI-compatible servers (Ollama, vLLM, llama.cpp) speak it;
- `FakeAnthropic`: ``POST /v1/messages``, the Anthropic Messages protocol (the verdict comes back
  as a ``tool_use`` block);
- `FakeGoogle`: ``POST /{v1,v1beta,v1alpha}/models/{model}:generateContent``, the Gemini REST
  protocol (google-genai 3.x calls ``/v1/``; earlier versions called ``/v1beta/``).

Scripting. Each request is answered by, in order: the next item of the queue (`push`), else the
`handler` hook ``(request_body) -> item | None`` (None falls through), else `default`. Items
are protocol-neutral and each fake writes them in its own protocol:

- `verdict(obj, input_tokens=, output_tokens=, cached_tokens=, reasoning_tokens=)`: the model
  produced the JSON object ``obj`` as its structured output;
- `raw_text(text)`: the model produced this text (malformed JSON, say);
- `refusal(text)`: the model refused;
- `http_error(status, retry_after=, message=)`: an error status with the protocol's error body
  and an optional ``Retry-After`` header;
- `delay(seconds, then=)`: sleep, then answer with ``then`` (a verdict by default);
- `raw_response(status, body, headers=)`: exactly these bytes, for anything else.

`RateLimit(per_window, window_s)` is a `handler` that admits `per_window` requests in each fixed
window of `window_s` seconds and refuses the rest with 429 and a ``Retry-After`` of the time
left in the window (in fractions of a second); it counts what it `admitted` and `refused`, and
`enabled = False` lets everything through.

Token counts are written as the protocol writes them: for Anthropic, ``input_tokens`` excludes
the ``cache_read_input_tokens``; for OpenAI and Google the cached count is part of the prompt count.

Every request is recorded: `requests` (parsed JSON bodies), `paths`, `headers`, and
`request_count`, the server's own count (use it to prove cache hits and the absence of silent
SDK retries).

Example::

    with FakeOpenAI() as fake:
        fake.push(http_error(429, retry_after=2), verdict({"score": 1.0, "reason": "ok"}))
        fake.handler = lambda body: refusal("no") if "bomb" in str(body) else None
        client = AsyncOpenAI(base_url=fake.base_url, api_key="test")
        ...
        assert fake.request_count == 2
"""

from __future__ import annotations

import itertools
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = [
    "DEFAULT_VERDICT",
    "PROVIDER_ENV",
    "Delay",
    "FakeAnthropic",
    "FakeGoogle",
    "FakeOpenAI",
    "FakeServer",
    "HttpError",
    "Item",
    "RateLimit",
    "RawResponse",
    "RawText",
    "Refusal",
    "Verdict",
    "clear_provider_env",
    "closed_port_url",
    "delay",
    "http_error",
    "raw_response",
    "raw_text",
    "refusal",
    "verdict",
]


# --- Script items -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenCounts:
    input_tokens: int = 12
    output_tokens: int = 7
    cached_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True)
class Verdict:
    """The model produced `data` as its structured output."""

    data: dict[str, Any]
    usage: TokenCounts = field(default_factory=TokenCounts)
    model: str | None = None
    """The model name to report; the requested model when None."""


@dataclass(frozen=True)
class RawText:
    """The model produced this text instead of a structured verdict."""

    text: str
    usage: TokenCounts = field(default_factory=TokenCounts)


@dataclass(frozen=True)
class Refusal:
    """The model refused to answer."""

    text: str = "I can't help with that."
    usage: TokenCounts = field(default_factory=TokenCounts)


@dataclass(frozen=True)
class HttpError:
    """An HTTP error status with the protocol's error body."""

    status: int
    retry_after: float | str | None = None
    message: str | None = None


@dataclass(frozen=True)
class Delay:
    """Wait, then answer with `then`."""

    seconds: float
    then: Item | None = None


@dataclass(frozen=True)
class RawResponse:
    """Exactly this status, body and headers."""

    status: int
    body: bytes | str | dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


Item = Verdict | RawText | Refusal | HttpError | Delay | RawResponse
Handler = Callable[[dict[str, Any]], "Item | None"]

DEFAULT_VERDICT: dict[str, Any] = {"score": 1.0, "reasoning": "Default verdict of the fake server."}


def verdict(
    data: dict[str, Any] | None = None,
    *,
    input_tokens: int = 12,
    output_tokens: int = 7,
    cached_tokens: int = 0,
    reasoning_tokens: int = 0,
    model: str | None = None,
) -> Verdict:
    """A structured verdict (the default one when `data` is None)."""
    return Verdict(
        dict(DEFAULT_VERDICT if data is None else data),
        TokenCounts(input_tokens, output_tokens, cached_tokens, reasoning_tokens),
        model,
    )


def raw_text(text: str) -> RawText:
    """Plain text content where a structured verdict was asked for."""
    return RawText(text)


def refusal(text: str = "I can't help with that.") -> Refusal:
    """A refusal."""
    return Refusal(text)


def http_error(
    status: int, *, retry_after: float | str | None = None, message: str | None = None
) -> HttpError:
    """An HTTP error, with a ``Retry-After`` header when `retry_after` is given."""
    return HttpError(status, retry_after, message)


def delay(seconds: float, then: Item | None = None) -> Delay:
    """Sleep `seconds` before answering with `then` (the default verdict when None)."""
    return Delay(seconds, then)


def raw_response(
    status: int, body: bytes | str | dict[str, Any], headers: dict[str, str] | None = None
) -> RawResponse:
    """An exact HTTP response."""
    return RawResponse(status, body, dict(headers or {}))


class RateLimit:
    """A `handler` that admits `per_window` requests per fixed window of `window_s` seconds and
    answers the rest 429 with the time left in the window as ``Retry-After``."""

    def __init__(self, per_window: int, window_s: float) -> None:
        self.per_window = per_window
        self.window_s = window_s
        self.enabled = True
        self.admitted = 0
        self.refused = 0
        self._lock = threading.Lock()
        self._window = -1
        self._in_window = 0

    def __call__(self, body: dict[str, Any]) -> Item | None:
        now = time.monotonic()
        with self._lock:
            window = math.floor(now / self.window_s)
            if window != self._window:
                self._window, self._in_window = window, 0
            if not self.enabled or self._in_window < self.per_window:
                self._in_window += 1
                self.admitted += 1
                return None  # the fake's default answer
            self.refused += 1
        left = (window + 1) * self.window_s - now
        return http_error(429, retry_after=f"{max(left, 0.001):.3f}")


def closed_port_url(path: str = "") -> str:
    """A loopback URL on a port nothing listens on (for connection-refused tests)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"


# --- The server ---------------------------------------------------------------------------------


@dataclass
class Reply:
    """A rendered HTTP response."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, status: int, obj: Any, headers: dict[str, str] | None = None) -> Reply:
        return cls(status, json.dumps(obj).encode(), dict(headers or {}))


_REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (a timeout test) closes the socket under a sleeping handler;
        # writing the late answer then fails. That is expected, not worth a traceback.
        return


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        reply = self.server.fake._dispatch(self.path, dict(self.headers.items()), body)
        self._send(reply)

    def do_GET(self) -> None:
        self._send(Reply.json(404, {"error": {"message": f"no route {self.path}"}}))

    def _send(self, reply: Reply) -> None:
        if reply.status < 0:  # the fake is shutting down
            self.close_connection = True
            return
        self.send_response(reply.status, _REASONS.get(reply.status))
        headers = {"Content-Type": "application/json", **reply.headers}
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)
        self.wfile.flush()


class FakeServer:
    """What every fake shares: the loopback server, the script, the record of requests."""

    name = "fake"

    def __init__(self, *, default: Item | None = None, handler: Handler | None = None) -> None:
        self.default: Item = default if default is not None else verdict()
        self.handler: Handler | None = handler
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self._queue: deque[Item] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.strip_usage = False
        """Answer as a proxy that strips the token usage would: every 200 JSON body loses its
        ``usage`` / ``usageMetadata`` (a server that reports none)."""

    # -- lifecycle

    def start(self) -> Self:
        if self._server is not None:
            return self
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``, no path."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The base URL to give the SDK."""
        return self.url

    # -- scripting

    def push(self, *items: Item) -> Self:
        """Queue answers for the next requests, in order."""
        with self._lock:
            self._queue.extend(items)
        return self

    @property
    def pending(self) -> int:
        """Queued answers not used yet."""
        with self._lock:
            return len(self._queue)

    @property
    def request_count(self) -> int:
        """How many requests the server received."""
        with self._lock:
            return len(self.requests)

    @property
    def last_request(self) -> dict[str, Any]:
        with self._lock:
            if not self.requests:
                raise AssertionError(f"{type(self).__name__} received no request")
            return self.requests[-1]

    def reset(self) -> None:
        """Forget the requests received and the queued answers."""
        with self._lock:
            self.requests.clear()
            self.paths.clear()
            self.headers.clear()
            self._queue.clear()

    # -- serving

    def _dispatch(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        route = path.split("?", 1)[0]
        if not self._accepts(route):
            return self._not_found(route)
        with self._lock:
            self.requests.append(body)
            self.paths.append(path)
            self.headers.append({name.lower(): value for name, value in headers.items()})
            item = self._queue.popleft() if self._queue else None
        if item is None and self.handler is not None:
            item = self.handler(body)
        if item is None:
            item = self.default
        while isinstance(item, Delay):
            if self._stopping.wait(item.seconds):
                return Reply(-1, b"")
            item = item.then if item.then is not None else verdict()
        reply = self._render(item, route, body)
        if self.strip_usage and reply.status == 200:
            reply = _without_usage(reply)
        return reply

    def _render(self, item: Item, route: str, body: dict[str, Any]) -> Reply:
        if isinstance(item, RawResponse):
            data = item.body
            if isinstance(data, dict):
                data = json.dumps(data)
            if isinstance(data, str):
                data = data.encode()
            return Reply(item.status, data, dict(item.headers))
        if isinstance(item, HttpError):
            headers = {} if item.retry_after is None else {"Retry-After": _header(item.retry_after)}
            message = item.message or f"fake {item.status} error"
            return Reply.json(item.status, self._error_body(item.status, message), headers)
        if isinstance(item, Verdict | RawText | Refusal):
            return Reply.json(200, self._completion(item, route, body))
        raise TypeError(f"not a script item: {item!r}")

    def _next_id(self) -> int:
        return next(self._ids)

    # -- protocol, per fake

    def _accepts(self, route: str) -> bool:
        raise NotImplementedError

    def _not_found(self, route: str) -> Reply:
        return Reply.json(404, self._error_body(404, f"no route {route}"))

    def _error_body(self, status: int, message: str) -> dict[str, Any]:
        raise NotImplementedError

    def _completion(
        self, item: Verdict | RawText | Refusal, route: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        raise NotImplementedError


def _without_usage(reply: Reply) -> Reply:
    """The reply with its body's token usage taken out (`FakeServer.strip_usage`)."""
    try:
        data = json.loads(reply.body)
    except ValueError:
        return reply
    if not isinstance(data, dict):
        return reply
    data.pop("usage", None)
    data.pop("usageMetadata", None)
    return Reply.json(reply.status, data, reply.headers)


def _header(value: float | str) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --- OpenAI chat completions --------------------------------------------------------------------

_OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    404: "invalid_request_error",
    429: "rate_limit_exceeded",
}


class FakeOpenAI(FakeServer):
    """``POST /v1/chat/completions`` and ``/chat/completions``; `base_url` ends in ``/v1``."""

    name = "openai"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def _accepts(self, route: str) -> bool:
        return route in {"/v1/chat/completions", "/chat/completions"}

    def _error_body(self, status: int, message: str) -> dict[str, Any]:
        return {
            "error": {
                "message": message,
                "type": _OPENAI_ERROR_TYPES.get(status, "server_error"),
                "param": None,
                "code": "rate_limit_exceeded" if status == 429 else None,
            }
        }

    def _completion(
        self, item: Verdict | RawText | Refusal, route: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        model = str(body.get("model", "fake-model"))
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        if isinstance(item, Verdict):
            message["content"] = json.dumps(item.data)
            model = item.model or model
        elif isinstance(item, RawText):
            message["content"] = item.text
        else:
            message["refusal"] = item.text
        usage = item.usage
        return {
            "id": f"chatcmpl-fake{self._next_id()}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": model,
            "system_fingerprint": "fp_fake",
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "total_tokens": usage.input_tokens + usage.output_tokens,
                "prompt_tokens_details": {"cached_tokens": usage.cached_tokens, "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": usage.reasoning_tokens,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            },
        }


# --- Anthropic messages -------------------------------------------------------------------------

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class FakeAnthropic(FakeServer):
    """``POST /v1/messages``; `base_url` is the server root, as the SDK appends ``/v1``."""

    name = "anthropic"

    def _accepts(self, route: str) -> bool:
        return route == "/v1/messages"

    def _error_body(self, status: int, message: str) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": _ANTHROPIC_ERROR_TYPES.get(status, "api_error"), "message": message},
        }

    def _completion(
        self, item: Verdict | RawText | Refusal, route: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        model = str(body.get("model", "fake-model"))
        content: list[dict[str, Any]]
        if isinstance(item, Verdict):
            tool_choice = body.get("tool_choice") or {}
            tools = body.get("tools") or [{}]
            name = tool_choice.get("name") or tools[0].get("name") or "verdict"
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_fake{self._next_id()}",
                    "name": name,
                    "input": item.data,
                }
            ]
            stop_reason = "tool_use"
            model = item.model or model
        elif isinstance(item, RawText):
            content = [{"type": "text", "text": item.text}]
            stop_reason = "end_turn"
        else:
            content = [{"type": "text", "text": item.text}]
            stop_reason = "refusal"
        usage = item.usage
        return {
            "id": f"msg_fake{self._next_id()}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": usage.cached_tokens,
            },
        }


# --- Google Gemini generateContent --------------------------------------------------------------

_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


class FakeGoogle(FakeServer):
    """``POST /{version}/models/{model}:generateContent``; `base_url` is the server root.

    `paths` shows the API version the SDK used; `models` the model named in each path.
    """

    name = "google"

    @property
    def models(self) -> list[str]:
        """The model named in each request's path."""
        with self._lock:
            return [_google_model(path) for path in self.paths]

    def _accepts(self, route: str) -> bool:
        version, _, rest = route.removeprefix("/").partition("/")
        return (
            version in _GOOGLE_API_VERSIONS
            and rest.startswith("models/")
            and rest.endswith(":generateContent")
        )

    def _error_body(self, status: int, message: str) -> dict[str, Any]:
        return {
            "error": {
                "code": status,
                "message": message,
                "status": _GOOGLE_STATUS.get(status, "UNKNOWN"),
            }
        }

    def _completion(
        self, item: Verdict | RawText | Refusal, route: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        model = _google_model(route)
        candidate: dict[str, Any] = {"index": 0}
        if isinstance(item, Verdict):
            candidate["content"] = {"role": "model", "parts": [{"text": json.dumps(item.data)}]}
            candidate["finishReason"] = "STOP"
            model = item.model or model
        elif isinstance(item, RawText):
            candidate["content"] = {"role": "model", "parts": [{"text": item.text}]}
            candidate["finishReason"] = "STOP"
        else:
            candidate["finishReason"] = "SAFETY"
        usage = item.usage
        metadata: dict[str, Any] = {
            "promptTokenCount": usage.input_tokens,
            "candidatesTokenCount": usage.output_tokens,
            "totalTokenCount": usage.input_tokens + usage.output_tokens + usage.reasoning_tokens,
        }
        if usage.cached_tokens:
            metadata["cachedContentTokenCount"] = usage.cached_tokens
        if usage.reasoning_tokens:
            metadata["thoughtsTokenCount"] = usage.reasoning_tokens
        return {
            "candidates": [candidate],
            "usageMetadata": metadata,
            "modelVersion": model,
            "responseId": f"resp-fake{self._next_id()}",
        }


_GOOGLE_API_VERSIONS = frozenset({"v1", "v1beta", "v1alpha"})


def _google_model(path: str) -> str:
    route = path.split("?", 1)[0]
    tail = route.partition("/models/")[2]
    return tail.split(":", 1)[0]


# -- The environment -----------------------------------------------------------------------------

# What agenteval and the provider SDKs read from the environment. Tests remove it so that a
# developer's own judge, keys, endpoints or proxies never reach a test: every request goes to a
# loopback fake.
PROVIDER_ENV = (
    "AGENTEVAL_JUDGE",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ADMIN_KEY",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_CUSTOM_HEADERS",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CUSTOM_HEADERS",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_ENTERPRISE",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


def clear_provider_env(monkeypatch: Any) -> None:
    """Remove `PROVIDER_ENV` for one test (`monkeypatch` is pytest's), loopback never proxied."""
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
