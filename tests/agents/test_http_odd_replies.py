"""The HTTP agent's odd replies, against a real loopback service: JSON nested past what Python
reads is the agent's invalid output (one clear failure, the run going on), JSON nested deep but
readable is stored cut, and a body that is not UTF-8 is read with the bad bytes replaced."""

from __future__ import annotations

from pathlib import Path

from tests.agents.fakes_http import FakeAgentService, reply
from tests.judge.fakes import raw_response
from tests.python_json import UNREADABLE, needs_unreadable

import agenteval
from agenteval import EvalCase, FailureCause
from agenteval.agents.http import http_agent
from agenteval.jsonsafe import DEEP

CASES = [EvalCase(id="deep", input="Go"), EvalCase(id="next", input="Go")]


def nested(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


@needs_unreadable
def test_json_nested_too_deeply_to_read_is_invalid_output_and_the_run_goes_on(
    agent_service: FakeAgentService, tmp_path: Path
) -> None:
    body = b'{"output": "ok", "metadata": {"m": ' + nested(UNREADABLE) + b"}}"
    agent_service.push(
        raw_response(200, body, {"Content-Type": "application/json"}),
        reply({"output": "fine"}),
    )
    run = agenteval.evaluate(
        http_agent({"url": agent_service.agent_url}),
        CASES,
        store=tmp_path / "runs.db",
        retries=0,
        concurrency=1,
    )
    deep, after = sorted(run.results, key=lambda r: r.case.id)
    assert deep.trial.failure is not None
    assert deep.trial.failure.cause is FailureCause.INVALID_OUTPUT
    assert "nested too deeply" in deep.trial.failure.message
    assert after.trial.failure is None and after.trial.output == "fine"


def test_json_nested_deep_but_readable_is_stored_cut(
    agent_service: FakeAgentService, tmp_path: Path
) -> None:
    body = b'{"output": "ok", "metadata": {"m": ' + nested(500) + b"}}"
    agent_service.push(raw_response(200, body, {"Content-Type": "application/json"}))
    store = tmp_path / "runs.db"
    run = agenteval.evaluate(
        http_agent({"url": agent_service.agent_url}), CASES[:1], store=store, retries=0
    )
    (result,) = run.results
    assert result.trial.failure is None and result.trial.output == "ok"
    files = [store, store.with_name("runs.db-wal")]
    assert DEEP.encode() in b"".join(f.read_bytes() for f in files if f.exists())


def test_a_body_that_is_not_utf8_is_read_with_the_bad_bytes_replaced(
    agent_service: FakeAgentService, tmp_path: Path
) -> None:
    agent_service.push(
        raw_response(200, b'{"output": "caf\xe9 \xff"}', {"Content-Type": "application/json"}),
        raw_response(200, b"caf\xe9 \xff", {"Content-Type": "text/plain"}),
    )
    agent = http_agent({"url": agent_service.agent_url})
    for _ in range(2):
        run = agenteval.evaluate(agent, CASES[:1], store=tmp_path / "runs.db", retries=0)
        (result,) = run.results
        assert result.trial.failure is None
        assert result.trial.output == "caf\ufffd \ufffd"
