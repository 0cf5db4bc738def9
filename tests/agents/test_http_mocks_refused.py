"""An HTTP agent's tools run in its service, where agenteval's tool mocks, replay and
environment state cannot reach them: a run that asks for them (a case's `tool_mocks`,
`tool_mocks_only`, `initial_state` or `expected_state`, the run's `tool_mocks`,
`--replay-tools`) with an HTTP agent is refused before anything is sent, naming the case and
field (an `expected_state` equal to the `initial_state` passed `state_match` untouched). Before, the service ran its real tools (a card charged in a case that
mocks the charge, live calls in a replay that promises none) and the trial passed on a scenario
that never played."""

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
from agenteval.errors import AgentEvalError

REQUESTS: list[str] = []


class _Service(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        REQUESTS.append(self.path)
        data = json.dumps({"output": "charged", "tool_calls": [{"name": "charge_card"}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data.encode())

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Service)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/agent"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _fresh() -> None:
    REQUESTS.clear()


@pytest.mark.parametrize(
    ("case", "field"),
    [
        (
            EvalCase(id="mocked", input="x", tool_mocks={"charge_card": {"error": "timeout"}}),
            "tool_mocks",
        ),
        (EvalCase(id="only", input="x", tool_mocks_only=True), "tool_mocks_only"),
        (EvalCase(id="kept", input="x", expected_state={"charged": 0}), "expected_state"),
        (EvalCase(id="seeded", input="x", initial_state={"charged": 0}), "initial_state"),
    ],
)
def test_a_case_mocking_tools_of_an_http_agent_is_refused(
    url: str, case: EvalCase, field: str, tmp_path: Path
) -> None:
    plain = EvalCase(id="plain", input="y")
    with pytest.raises(AgentEvalError) as refused:
        agenteval.evaluate(http_agent({"url": url}), [plain, case], store=tmp_path / "r.db")
    text = str(refused.value)
    assert case.id in text and field in text and "HTTP agent" in text
    assert REQUESTS == []  # nothing was sent


def test_the_runs_mocks_and_a_replay_are_refused_too(url: str, tmp_path: Path) -> None:
    store = tmp_path / "r.db"
    cases = [EvalCase(id="plain", input="y")]
    with pytest.raises(AgentEvalError, match="HTTP agent"):
        agenteval.evaluate(
            http_agent({"url": url}),
            cases,
            store=store,
            tool_mocks={"charge_card": {"result": {"status": "ok"}}},
        )
    assert REQUESTS == []
    recorded = agenteval.evaluate(http_agent({"url": url}), cases, store=store, target="svc")
    REQUESTS.clear()
    with pytest.raises(AgentEvalError, match="HTTP agent"):
        agenteval.evaluate(
            http_agent({"url": url}), cases, store=store, replay_tools=recorded.info.run_id
        )
    assert REQUESTS == []


def test_a_run_without_mocks_runs_as_ever(url: str, tmp_path: Path) -> None:
    run = agenteval.evaluate(
        http_agent({"url": url}), [EvalCase(id="plain", input="y")], store=tmp_path / "r.db"
    )
    assert run.results[0].trial.output == "charged" and REQUESTS == ["/agent"]
