"""The built-in scorers over tool calls take data of any shape: a tool result that is JSON text
nested past what Python's parser reads, and arguments nested thousands deep or containing
themselves, are scored, never a scorer's RecursionError (which would fail the trial as
`errors = the scorer itself failed`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import agenteval
from agenteval import EvalCase, ToolCall, Trial

DEEP_TEXT = "[" * 5_000 + "]" * 5_000


@agenteval.tool
def deep_text_source() -> str:
    """A tool the run knows (as every tool registered in the process), so its call is checked."""
    return DEEP_TEXT


def nested(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


def circular() -> dict[str, Any]:
    value: dict[str, Any] = {"q": "x"}
    value["self"] = value
    return value


def scores(trial: Trial, tmp_path: Path, **case: Any) -> dict[str, Any]:
    run = agenteval.evaluate(
        lambda question: trial,
        [EvalCase(id="c", input="Go", expected_output="Paris", **case)],
        store=tmp_path / "runs.db",
        retries=0,
    )
    (result,) = run.results
    return result.scores


def test_a_result_of_json_text_too_deep_to_read_is_text_and_the_call_worked(
    tmp_path: Path,
) -> None:
    trial = Trial(output="Paris", tool_calls=[ToolCall(name="deep_text_source", result=DEEP_TEXT)])
    found = scores(trial, tmp_path)
    assert {name: s.error for name, s in found.items() if s.error} == {}
    assert found["tool_execution"].passed is True
    assert found["redundant_calls"].passed is True


def test_arguments_nested_thousands_deep_or_circular_are_compared(tmp_path: Path) -> None:
    deep, loop = {"q": nested(3_000)}, circular()
    trial = Trial(
        output="Paris",
        tool_calls=[
            ToolCall(name="deep_args_find", arguments=deep, result="ok"),
            ToolCall(name="deep_args_find", arguments=deep, result="ok"),
            ToolCall(name="deep_args_look", arguments=loop, result="ok"),
        ],
    )
    # A case file holds at most 64 levels: the expected arguments are shallow.
    expected = [{"name": "deep_args_find", "arguments": {"q": nested(10)}}]
    found = scores(trial, tmp_path, expected_trajectory=expected)
    assert {name: s.error for name, s in found.items() if s.error} == {}
    # The same deep arguments twice are a repeat, as they would be if shallow.
    assert found["redundant_calls"].passed is False
    assert "call 2 (deep_args_find) repeats call 1" in (found["redundant_calls"].reason or "")
    assert found["trajectory_order"].passed is False
