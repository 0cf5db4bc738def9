"""Recording a tool call never changes what the agent sees and never raises into it: a circular
or very deep result reaches the agent as the very same object, and the trial is stored cut."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase
from agenteval.agents.recorder import TrialRecorder, recording
from agenteval.jsonsafe import CIRCULAR, CUT_NOTE, DEEP

CIRCULAR_RESULT: dict[str, Any] = {"name": "node"}
CIRCULAR_RESULT["self"] = CIRCULAR_RESULT


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": True}
    for _ in range(levels):
        value = {"x": value}
    return value


DEEP_RESULT = nested(1000)


@agenteval.tool
def circular_tool(query: str) -> dict[str, Any]:
    """Returns a dict that contains itself."""
    return CIRCULAR_RESULT


@agenteval.tool
def deep_tool(query: str) -> dict[str, Any]:
    """Returns a dict nested 1,000 deep."""
    return DEEP_RESULT


@agenteval.tool
async def async_circular_tool(query: str) -> dict[str, Any]:
    """The async form."""
    return CIRCULAR_RESULT


@agenteval.tool
def echo(value: Any) -> str:
    """Takes anything as its argument."""
    return "ok"


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("cannot print this error")


@agenteval.tool
def broken(query: str) -> str:
    """Raises an exception whose message cannot be printed."""
    raise Unprintable()


received: list[Any] = []


def agent(question: str) -> str:
    received.append(circular_tool(question))
    received.append(deep_tool(question))
    received.append(asyncio.run(async_circular_tool(question)))
    echo(CIRCULAR_RESULT)
    return "Paris"


def stored_trial(db: Path) -> dict[str, Any]:
    with sqlite3.connect(db) as conn:
        (row,) = conn.execute("SELECT data FROM trials").fetchall()
    data: dict[str, Any] = json.loads(row[0])
    return data


def test_circular_and_deep_results_reach_the_agent_unchanged_and_are_stored_cut(
    tmp_path: Path,
) -> None:
    received.clear()
    run = agenteval.evaluate(
        agent, [EvalCase(id="c", input="q", expected_output="Paris")], store=tmp_path / "s.db"
    )
    assert received[0] is CIRCULAR_RESULT
    assert received[1] is DEEP_RESULT
    assert received[2] is CIRCULAR_RESULT
    assert run.summary.scorers["exact_match"].passed == 1
    trial = stored_trial(tmp_path / "s.db")
    assert trial.get("failure") is None
    calls = trial["tool_calls"]
    assert [call["name"] for call in calls] == [
        "circular_tool",
        "deep_tool",
        "async_circular_tool",
        "echo",
    ]
    assert calls[0]["result"] == {"name": "node", "self": CIRCULAR}
    assert calls[2]["result"] == {"name": "node", "self": CIRCULAR}
    assert calls[3]["arguments"] == {"value": {"name": "node", "self": CIRCULAR}}
    assert DEEP in json.dumps(calls[1]["result"])
    assert trial["metadata"][CUT_NOTE] == [
        "tool_calls.0.result.self: circular reference",
        "tool_calls.1.result.x.x.…: nested deeper than 64",
        "tool_calls.2.result.self: circular reference",
        "tool_calls.3.arguments.value.self: circular reference",
    ]


def test_an_error_that_cannot_be_printed_reaches_the_agent_as_raised() -> None:
    recorder = TrialRecorder()
    with recording(recorder), pytest.raises(Unprintable):
        broken("q")
    assert recorder.tool_calls[0].error == "Unprintable: <the message could not be read>"


def test_recording_a_model_call_wait_or_retry_never_raises_into_the_agent() -> None:
    recorder = TrialRecorder()
    with recording(recorder):
        agenteval.record_model_call(
            object(),  # type: ignore[arg-type]
            input_tokens="many",  # type: ignore[arg-type]
            output_tokens=12.7,  # type: ignore[arg-type]
            duration_s=float("inf"),
        )
        agenteval.record_model_call("gpt", input_tokens=-3, duration_s=1e300)
        agenteval.record_wait("a while")  # type: ignore[arg-type]
        agenteval.record_wait(float("nan"))
        agenteval.record_wait(0.5)
        agenteval.record_retry(429)  # type: ignore[arg-type]
    first, second = recorder.model_calls
    assert first.model.startswith("<object object at")
    assert (first.usage.input_tokens, first.usage.output_tokens, first.duration_s) == (0, 12, None)
    assert (second.usage.input_tokens, second.started_at) == (0, None)
    assert recorder.waits_s == 0.5
    assert recorder.retries == {"429": 1}
