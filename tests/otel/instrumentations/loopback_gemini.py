"""A loopback Gemini API server that plays `loopback.py`'s scripts.

`POST /v1beta/models/MODEL:generateContent` on 127.0.0.1 (a free port), as the google-genai SDK
calls it. The case is read from the first user turn's text, how far the conversation got from
how many user turns carry `functionResponse` parts. A turn's tool calls come back as
`functionCall` parts (with no id, as Gemini 2.x sends them; finish reason `STOP`), its answer as
one `text` part.

Usage is reported as Gemini reports it: `promptTokenCount` is the whole prompt, cached tokens
included (`cachedContentTokenCount`); `candidatesTokenCount` leaves the thinking tokens
(`thoughtsTokenCount`) out, so a call's output is the two together.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .http_plumbing import QuietHandler, serving
from .loopback import SCRIPTS, Turn

TWO_ROUNDS: dict[str, tuple[Turn, ...]] = {
    "trip": (
        Turn(tool_calls=(("", "get_weather", {"city": "Paris"}),), usage=(50, 20, 10, 5)),
        Turn(tool_calls=(("", "get_weather", {"city": "Atlantis"}),), usage=(80, 12, 40, 3)),
        Turn(text="Sunny in Paris; Atlantis is unknown.", usage=(90, 10, 40, 2)),
    )
}
"""A conversation that calls the same tool in two rounds, one call each: "trip"."""

GEMINI_MODEL = "gemini-test"
"""The model the Gemini agent asks for."""


def usage_of(turn: Turn) -> dict[str, int]:
    """`turn`'s tokens as Gemini reports them (see the module's docstring)."""
    prompt, completion, cached, reasoning = turn.usage
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": completion - reasoning,
        "thoughtsTokenCount": reasoning,
        "cachedContentTokenCount": cached,
        "totalTokenCount": prompt + completion,
    }


def _answer(turn: Turn, number: int) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [
        {"functionCall": {"name": name, "args": arguments}}
        for _, name, arguments in turn.tool_calls
    ]
    if turn.text is not None:
        parts.append({"text": turn.text})
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": usage_of(turn),
        "modelVersion": GEMINI_MODEL,
        "responseId": f"resp-{number:03d}",
    }


@dataclass
class ScriptedGemini:
    """The running server: its base URL (for the SDK's `HttpOptions(base_url=...)`) and the
    requests it answered, in order."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        scripts = {**SCRIPTS, **TWO_ROUNDS}
        contents = body.get("contents", [])
        question = next(
            (
                " ".join(str(p.get("text", "")) for p in c.get("parts", []))
                for c in contents
                if c.get("role") == "user"
            ),
            "",
        )
        name = next((n for n in scripts if n in question.lower()), "hello")
        rounds = sum(
            1 for c in contents if any("functionResponse" in p for p in c.get("parts", []))
        )
        turns = scripts[name]
        with self.lock:
            self.requests.append(body)
            number = len(self.requests)
        return _answer(turns[min(rounds, len(turns) - 1)], number)


@contextmanager
def scripted_gemini() -> Iterator[ScriptedGemini]:
    """Serve the scripts on 127.0.0.1 (a free port) while the block runs."""
    server: ScriptedGemini | None = None

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            assert server is not None
            if not self.path.split("?")[0].endswith(":generateContent"):
                self.send_error(404)
                return
            self.send_json(server.answer(self.read_json()))

    with serving(Handler) as port:
        server = ScriptedGemini(base_url=f"http://127.0.0.1:{port}")
        yield server
