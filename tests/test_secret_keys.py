"""Values under secret-named keys (`password`, `api_key`, `client_secret`, `session_cookie`, ...)
never reach the store, whatever they look like and wherever they come from: a `@tool`'s
arguments and results, an agent's own tool calls and metadata, OpenTelemetry spans, a recorded
`agent_trace`, a scorer's details. The agent itself always sees the real values."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import agenteval
from agenteval import EvalCase, RunStore
from agenteval.redaction import REDACTED
from agenteval.run import RunInfo, TrialResult
from agenteval.score import Score
from agenteval.trace import AgentStep, ToolCall, Trial

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "otel"

# None of these looks like a key: only the name of the key they sit under says they are secrets.
PASSWORD = "correct horse battery staple"
COOKIE = "abc123plain"
CLIENT_SECRET = "my client secret"
TOKEN = "tokenvalue"
PLANTED = (PASSWORD, "hunter2-correct-horse", COOKIE, CLIENT_SECRET, TOKEN)


def store_bytes(folder: Path) -> bytes:
    """Every byte of the store: the database file and, if any, its WAL and shared memory."""
    return b"".join(path.read_bytes() for path in sorted(folder.glob("*.db*")))


def assert_no_planted_secret(folder: Path) -> None:
    data = store_bytes(folder)
    assert data, "no store written"
    leaked = [secret for secret in PLANTED if secret.encode() in data]
    assert leaked == []


class Session(BaseModel):
    user: str
    session_cookie: str


seen: list[Any] = []


@agenteval.tool
def login(user: str, password: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Log in; returns the session."""
    return {
        "ok": True,
        "session_cookie": COOKIE,
        "nested": [{"deeper": {"client_secret": CLIENT_SECRET}}],
        "model": Session(user=user, session_cookie=COOKIE),
    }


def agent(question: str) -> Any:
    result = login(
        "ann", password="hunter2-correct-horse", options={"auth": {"password": PASSWORD}}
    )
    seen.append(result)
    return {"output": "Paris", "metadata": {"session": {"accessToken": TOKEN}, "user": "ann"}}


def test_secret_named_keys_of_tool_calls_are_masked_in_the_store(tmp_path: Path) -> None:
    seen.clear()
    folder = tmp_path / "store"
    run = agenteval.evaluate(
        agent, [EvalCase(id="c", input="q", expected_output="Paris")], store=folder / "s.db"
    )
    # The agent saw the real values; only the record is masked.
    assert seen[0]["session_cookie"] == COOKIE
    assert seen[0]["nested"][0]["deeper"]["client_secret"] == CLIENT_SECRET
    assert seen[0]["model"].session_cookie == COOKIE
    assert_no_planted_secret(folder)
    (result,) = run.iter_results()
    (call,) = result.trial.tool_calls
    assert call.arguments == {
        "user": "ann",
        "password": REDACTED,
        "options": {"auth": REDACTED},
    }
    assert call.result["session_cookie"] == REDACTED
    assert call.result["nested"] == [{"deeper": {"client_secret": REDACTED}}]
    assert call.result["model"] == {"user": "ann", "session_cookie": REDACTED}
    assert result.trial.metadata == {"session": {"accessToken": REDACTED}, "user": "ann"}


def test_every_record_an_agent_or_scorer_hands_over_is_masked(tmp_path: Path) -> None:
    """An agent's own Trial, a recorded agent_trace in a case, and a scorer's details: the store
    masks them all, at any depth, in dicts and in pydantic models."""
    folder = tmp_path / "store"
    call = ToolCall(
        name="login",
        arguments={"password": PASSWORD, "n": 1, "empty_token": ""},
        result=[
            {"a": {"b": {"client_secret": CLIENT_SECRET}}},
            Session(user="u", session_cookie=COOKIE),
        ],
    )
    case = EvalCase(id="c", input="q", agent_trace=[AgentStep(tool_calls=[call], output="ok")])
    trial = Trial(case_id="c", output="ok", tool_calls=[call], metadata={"api_key": TOKEN})
    score = Score(name="mine", value=1.0, details={"seen": {"password": PASSWORD}})
    info = RunInfo(target="t")
    with RunStore(folder / "s.db") as store:
        store.create_run(info, [case])
        store.add_result(info.run_id, TrialResult(case=case, trial=trial, scores={"mine": score}))
        (stored,) = store.iter_results(info.run_id)
    assert_no_planted_secret(folder)
    (stored_call,) = stored.trial.tool_calls
    assert stored_call.arguments == {"password": REDACTED, "n": 1, "empty_token": ""}
    assert stored.case.agent_trace is not None
    assert stored.case.agent_trace[0].tool_calls[0].arguments["password"] == REDACTED
    assert stored.scores["mine"].details == {"seen": {"password": REDACTED}}
    # The objects handed to the store are left as they were.
    assert call.arguments["password"] == PASSWORD
    assert trial.metadata["api_key"] == TOKEN


def test_expected_arguments_and_tool_schemas_are_kept(tmp_path: Path) -> None:
    """What the user wrote (a case's expected arguments, a tool's JSON schema) is not an agent's
    record: a `password` property in a schema stays a schema, or rescoring could not check it."""
    case = EvalCase(
        id="c",
        input="q",
        expected_trajectory=[{"name": "login", "arguments": {"password": "expected-pw"}}],
    )
    spec = agenteval.known_tools()["login"]
    info = RunInfo(target="t", tools={"login": spec})
    with RunStore(tmp_path / "s.db") as store:
        store.create_run(info, [case])
        assert store.get_info(info.run_id).tools["login"].parameters == spec.parameters
        (stored,) = store.get_cases(info.run_id)
    assert stored.expected_trajectory is not None
    assert stored.expected_trajectory[0].arguments == {"password": "expected-pw"}


def test_tool_calls_read_from_opentelemetry_spans_are_masked(tmp_path: Path) -> None:
    traces = (EXAMPLE / "traces.jsonl").read_text()
    planted = traces.replace(
        '{\\"city\\": \\"Lisbon\\"}',
        f'{{\\"city\\": \\"Lisbon\\", \\"password\\": \\"{PASSWORD}\\"}}',
    ).replace(
        '{\\"city\\": \\"Lisbon\\", \\"celsius\\"',
        f'{{\\"session_cookie\\": \\"{COOKIE}\\", \\"city\\": \\"Lisbon\\", \\"celsius\\"',
    )
    assert PASSWORD in planted and COOKIE in planted
    (tmp_path / "traces.jsonl").write_text(planted)
    folder = tmp_path / "store"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agenteval",
            "score",
            "traces.jsonl",
            "--cases",
            str(EXAMPLE / "cases.yaml"),
            "--store",
            str(folder / "s.db"),
            "--json",
            "run.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "160"},
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert_no_planted_secret(folder)
    document = (tmp_path / "run.json").read_text()
    assert PASSWORD not in document and COOKIE not in document
    assert REDACTED in document
