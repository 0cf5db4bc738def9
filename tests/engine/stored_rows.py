"""A varied run and its stored rows, for comparing what a run stores before and after a change
of the run path (`test_stored_rows.py`): plain answers, dict answers, tool calls with secrets
in their arguments and results, model calls, waits, an agent's own retries, a failing agent, an
infrastructure error retried, the agent's own OpenTelemetry spans, scores with details (secrets
among them), several trials. What changes from run to run (times, durations, ids) is replaced
by a placeholder; everything else is the stored text as it is.

    PYTHONPATH=/work/main/src python tests/engine/stored_rows.py tests/engine/golden/stored_rows.json
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import agenteval
from agenteval import EvalCase, Score
from agenteval.trace import ToolSpec

SECRET = "sk-proj-Zq81mXvT4kLpW29sQeRt7uYiOp0aSdFg"

_VOLATILE = re.compile(
    r'"(\w*(?:_at|_s|_ns|_ms|trace_id|span_id|parent_id|time\w*|latency\w*|duration\w*))"'
    r':("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*)'
)
_HEX_IDS = re.compile(r"\b[0-9a-f]{32}\b|\b[0-9a-f]{16}\b")


@agenteval.tool
def lookup(query: str, api_key: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Look a thing up."""
    return {"hits": [query, {"deep": [1, 2.5, None, True]}], "token": SECRET, "password": "pw"}


_attempts: dict[str, int] = {}


async def agent(question: str) -> Any:
    _attempts[question] = _attempts.get(question, 0) + 1
    if question == "plain":
        return "Paris"
    if question == "dict":
        return {"answer": "Paris", "sources": ["a", "b"], "n": 3}
    if question == "secret":
        return f"the key is {SECRET}"
    if question == "tools":
        lookup("capital of France", api_key="k-123", options={"limit": 3, "secret": "x"})
        lookup("unicode é ✓", api_key=SECRET)
        agenteval.record_model_call("gpt-4o", input_tokens=812, output_tokens=64, duration_s=0.4)
        agenteval.record_wait(0.25)
        agenteval.record_retry("rate_limited")
        return "Paris"
    if question == "fails":
        raise ValueError(f"broken with {SECRET}")
    if question == "flaky-infra" and _attempts[question] % 2 == 1:
        raise ConnectionError("reset by peer")
    if question == "flaky-infra":
        return {"output": "Paris", "metadata": {"password": "pw", "ok": [1, {"a": None}]}}
    if question == "spans":
        from opentelemetry import trace

        tracer = trace.get_tracer("my-agent")
        with tracer.start_as_current_span("invoke_agent") as root:
            root.set_attribute("gen_ai.operation.name", "invoke_agent")
            with tracer.start_as_current_span("execute_tool search") as span:
                span.set_attribute("gen_ai.operation.name", "execute_tool")
                span.set_attribute("gen_ai.tool.name", "search")
                span.set_attribute("gen_ai.tool.call.arguments", '{"q": "Paris"}')
            with tracer.start_as_current_span("chat gpt-4o") as span:
                span.set_attribute("gen_ai.operation.name", "chat")
                span.set_attribute("gen_ai.request.model", "gpt-4o")
                span.set_attribute("gen_ai.usage.input_tokens", 10)
                span.set_attribute("gen_ai.usage.output_tokens", 5)
        return "Paris"
    return "Lyon"


def my_scorer(case: EvalCase, trial: agenteval.Trial) -> Score:
    return Score(
        name="mine",
        value=0.5,
        passed=None,
        reason="half",
        details={"seen": str(trial.output)[:20], "api_key": SECRET, "nested": {"a": [1, 2]}},
    )


def flat_scorer(case: EvalCase, trial: agenteval.Trial) -> Score:
    return Score(name="flat", value=1.0, passed=True, details={"k": 1, "s": "x", "f": 0.5})


CASES = [
    EvalCase(id="plain", input="plain", expected_output="Paris"),
    EvalCase(id="dict", input="dict", expected_output="Paris"),
    EvalCase(id="secret", input="secret", expected_output="Paris", metadata={"token": SECRET}),
    EvalCase(
        id="tools",
        input="tools",
        expected_output="Paris",
        expected_tools=["lookup"],
    ),
    EvalCase(id="fails", input="fails", expected_output="Paris"),
    EvalCase(id="flaky-infra", input="flaky-infra", expected_output="Paris"),
    EvalCase(id="spans", input="spans", expected_output="Paris"),
    EvalCase(id="wrong", input="wrong", expected_output="Paris"),
]


def normalised(text: str) -> str:
    return _HEX_IDS.sub("<id>", _VOLATILE.sub(r'"\1":"<v>"', text))


def stored_rows(store: Path) -> dict[str, Any]:
    """The rows of a run of `CASES` (2 trials each) in a new store at `store`."""
    _attempts.clear()
    agenteval.evaluate(
        agent,
        CASES,
        ["exact_match", my_scorer, flat_scorer],
        trials=2,
        concurrency=1,
        retries=2,
        infrastructure_errors=[ConnectionError],
        # The run's tools named, so the tools other tests of the process declared (`@tool`
        # is process-wide) change no score's text.
        tools={
            "lookup": ToolSpec(name="lookup", parameters={"type": "object"}),
            "search": ToolSpec(name="search", description="Search."),
        },
        store=store,
    )
    conn = sqlite3.connect(store)
    try:
        trials = conn.execute(
            "SELECT case_id, trial, data FROM trials ORDER BY case_id, trial"
        ).fetchall()
        scores = conn.execute(
            "SELECT case_id, trial, name, data FROM scores ORDER BY case_id, trial, name"
        ).fetchall()
    finally:
        conn.close()
    return {
        "trials": [[c, t, normalised(d)] for c, t, d in trials],
        "scores": [[c, t, n, normalised(d)] for c, t, n, d in scores],
    }


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        rows = stored_rows(Path(tmp) / "golden.db")
    Path(sys.argv[1]).write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
