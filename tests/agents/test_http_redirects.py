"""An agent service that redirects the POST (a web framework adding the trailing slash its
route has: `/agent` -> 307 -> `/agent/`) is followed there when the redirect keeps the method
and body (307, 308) on the same origin, as curl -L and requests do; the trial is the service's
answer. Before, every trial was the agent's failure, "answered 307 Temporary Redirect", with
nothing saying where to. A redirect that would turn the POST into a GET (301, 302, 303), or
leave the origin, is not followed: the agent's error names where it pointed."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import agenteval
from agenteval import EvalCase
from agenteval.agents.http import http_agent
from agenteval.trace import FailureCause


class _Service(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"null")
        if self.path == "/agent/":
            self._send(200, {"output": str(body["input"]).upper()})
        elif self.path in ("/agent", "/v2"):
            self._send(307 if self.path == "/agent" else 308, None, Location="/agent/")
        elif self.path == "/moved":
            self._send(301, None, Location="/agent/")
        elif self.path == "/elsewhere":
            self._send(307, None, Location="http://127.0.0.2:9/agent/")
        elif self.path == "/loop":
            self._send(307, None, Location="/loop")
        else:
            self._send(404, {"error": "no such route"})

    def _send(self, status: int, body: object, **headers: str) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Service)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _trial(url: str, tmp_path: Path) -> agenteval.TrialResult:
    case = EvalCase(id="c", input="paris", expected_output="PARIS")
    run = agenteval.evaluate(http_agent({"url": url}), [case], store=tmp_path / "runs.db")
    (result,) = run.results
    return result


@pytest.mark.parametrize("path", ["/agent", "/v2"])
def test_a_redirect_keeping_the_post_is_followed(service: str, path: str, tmp_path: Path) -> None:
    result = _trial(service + path, tmp_path)
    assert result.trial.failure is None
    assert result.trial.output == "PARIS"
    assert result.scores["exact_match"].value == 1.0


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/moved", "answered 301"),
        ("/elsewhere", "answered 307"),
        ("/loop", "redirected more than"),
    ],
)
def test_a_redirect_that_cannot_be_followed_names_where_it_points(
    service: str, path: str, said: str, tmp_path: Path
) -> None:
    failure = _trial(service + path, tmp_path).trial.failure
    assert failure is not None and failure.cause is FailureCause.AGENT_ERROR
    assert said in failure.message
    if path != "/loop":
        assert "/agent/" in failure.message  # where it pointed: the url to configure
