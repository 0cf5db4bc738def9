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


def _deep_result(levels: int, leaf: Any) -> dict[str, Any]:
    value: Any = {"leaf": leaf}
    for _ in range(levels):
        value = {"child": value}
    return value


@agenteval.tool
def org_chart(team: str) -> dict[str, Any]:
    """A tree deeper than a stored record keeps (a DOM, a file tree, an org chart)."""
    return _deep_result(100, 42)


def _asks_the_chart(question: str) -> str:
    org_chart("platform")
    return "42"


def test_a_number_in_the_part_of_a_result_cut_for_depth_is_undecided_not_unsupported(
    tmp_path: Path,
) -> None:
    # A result nested deeper than 64 is stored, and scored, with its depths past 64 cut: the 42
    # the answer took from it is gone. Before: "1 of 1 numbers in the answer appear in no tool
    # result: 42", a failure of a faithful answer.
    run = agenteval.evaluate(
        _asks_the_chart,
        [EvalCase(id="c", input="How many engineers?", expected_output="42")],
        store=tmp_path / "runs.db",
    )
    (result,) = run.results
    assert "<cut: nested deeper than 64>" in str(result.trial.tool_calls[0].result)
    faithful = result.scores["tool_faithfulness"]
    assert (faithful.value, faithful.passed) == (None, None)
    assert faithful.reason == (
        "not decided: a tool result was cut before it was stored (nested deeper than 64), and "
        "what the answer says may be in the part cut: 42"
    )


def test_a_cut_result_still_supports_what_its_kept_part_holds_and_fails_a_circular_one(
    tmp_path: Path,
) -> None:
    kept = ToolCall(name="org_chart", result={"total": 42, "tree": _deep_result(100, 7)})
    trial = Trial(output="42", tool_calls=[kept])
    assert scores(trial, tmp_path)["tool_faithfulness"].passed is True
    # A circular reference cuts nothing away (the data is the same again): still a failure.
    looped = Trial(output="43", tool_calls=[ToolCall(name="org_chart", result=circular())])
    found = scores(looped, tmp_path / "again")["tool_faithfulness"]
    assert found.passed is False


@agenteval.tool
def apply_patch(tree: dict[str, Any]) -> str:
    """A tool whose argument is a tree deeper than a stored record keeps."""
    return "ok"


def _patches_twice(question: str) -> str:
    apply_patch(_deep_result(80, 1))
    apply_patch(_deep_result(80, 2))  # another patch: they differ only past depth 64
    return "done"


def test_calls_whose_arguments_differ_only_in_their_cut_part_are_not_a_repeat(
    tmp_path: Path,
) -> None:
    run = agenteval.evaluate(
        _patches_twice,
        [EvalCase(id="c", input="Patch it", expected_output="done")],
        store=tmp_path / "runs.db",
    )
    (result,) = run.results
    redundant = result.scores["redundant_calls"]
    # Before: 0.0, "call 2 (apply_patch) repeats call 1, which had already worked".
    assert (redundant.value, redundant.passed) == (None, None)
    assert redundant.reason == (
        "not decided: call 2 (apply_patch) reads the same as call 1 as stored, but its "
        "arguments were cut before they were stored (nested deeper than 64): whether it "
        "repeats it cannot be told"
    )
