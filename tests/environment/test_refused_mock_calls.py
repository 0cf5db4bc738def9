"""A mocked call whose arguments do not fit the tool's schema is refused before the mock
answers: it takes no answer from a `sequence` and applies no `set_state`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import agenteval
from agenteval import EvalCase


@agenteval.tool
def refund(amount: int) -> dict[str, Any]:
    raise AssertionError("mocked: never runs")


def careless_then_careful(prompt: str) -> str:
    said = []
    for amount in ("ten", 10):
        try:
            said.append(str(refund(amount)))  # type: ignore[arg-type]
        except ValueError as exc:
            said.append(type(exc).__name__)
    return "; ".join(said)


def test_a_refused_call_takes_no_answer_and_changes_no_state(tmp_path: Path) -> None:
    mocks = {
        "refund": {
            "sequence": [
                {"result": {"n": 1}, "set_state": {"refunded": 1}},
                {"result": {"n": 2}, "set_state": {"refunded": 2}},
            ]
        }
    }
    case = EvalCase(id="c", input="x", tool_mocks=mocks, expected_state={})
    rules = {
        "refund": [
            {"when": {"amount": 10}, "result": {"n": 9}, "set_state": {"r": 9}},
            {"result": {"n": 0}, "set_state": {"r": 0}},  # what "ten" would take
        ]
    }
    by_rule = EvalCase(id="r", input="x", tool_mocks=rules, expected_state={})
    run = agenteval.evaluate(careless_then_careful, [case, by_rule], store=tmp_path / "r.db")
    trials = {result.case.id: result.trial for result in run.results}
    assert trials["c"].output == "ToolArgumentsError; {'n': 1}"
    assert trials["c"].state == {"refunded": 1}
    assert trials["r"].output == "ToolArgumentsError; {'n': 9}"
    assert trials["r"].state == {"r": 9}
