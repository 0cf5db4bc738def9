"""A fake agent service on 127.0.0.1, for the HTTP agent's tests.

A real HTTP server (the judge fakes' `FakeServer`: ``ThreadingHTTPServer`` on port 0, in a daemon
thread) that takes ``POST /agent``. Script it as the judge fakes are scripted: `push` items
(`reply(...)`, `http_error(...)`, `delay(...)`, `raw_response(...)`), or set `handler`
``(request_body) -> item | None``; unscripted requests get `reply({"output": "ok"})`.
"""

from __future__ import annotations

from typing import Any

from tests.judge.fakes import FakeServer, Item, RawResponse

__all__ = ["FakeAgentService", "reply"]


def reply(
    body: Any, *, status: int = 200, content_type: str = "application/json", **headers: str
) -> RawResponse:
    """An answer: `body` as JSON (a str body with another content type is sent as it is)."""
    import json

    data = (
        body if isinstance(body, str) and content_type != "application/json" else json.dumps(body)
    )
    return RawResponse(status, data, {"Content-Type": content_type, **headers})


class FakeAgentService(FakeServer):
    """``POST /agent``: an agent service. `agent_url` is the URL to configure."""

    name = "agent"

    def __init__(self, *, default: Item | None = None) -> None:
        super().__init__(default=default if default is not None else reply({"output": "ok"}))

    @property
    def agent_url(self) -> str:
        return f"{self.url}/agent"

    def _accepts(self, route: str) -> bool:
        return route == "/agent"

    def _error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": message}
