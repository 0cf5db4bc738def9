"""`ToolCallAccuracy`'s settings by name: `tool_call_accuracy[penalize_unexpected]` in
`--scorer`, `{name: tool_call_accuracy, penalize_unexpected: true}` in `agenteval.yaml`, the
names its scores carry, and a rescore loading the same settings again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import agenteval
from agenteval import AgentStep, EvalCase, ToolCall, ToolCallAccuracy
from agenteval.catalog import resolve_scorers, scorer_reference

REFUND = EvalCase(
    id="no-refund",
    input="Order 7 was already refunded; check it",
    agent_trace=[
        AgentStep(tool_calls=[ToolCall(name="lookup_order"), ToolCall(name="refund_order")]),
        AgentStep(tool_calls=[ToolCall(name="lookup_order")]),
        AgentStep(output="Refunded again."),
    ],
    expected_tool_calls=["lookup_order", "lookup_order"],
)
"""Expected: look the order up (listed twice); the agent also refunded it, which nobody asked."""

NO_TOOLS = EvalCase(
    id="no-tools",
    input="Say hello",
    agent_trace=[AgentStep(tool_calls=[ToolCall(name="search")]), AgentStep(output="hello")],
    expected_tool_calls=[],
)


@pytest.mark.parametrize(
    ("ref", "name", "settings"),
    [
        (
            "tool_call_accuracy[penalize_unexpected]",
            "tool_call_accuracy[penalize_unexpected]",
            {"penalize_unexpected": True},
        ),
        (
            "tool_call_accuracy[penalize_unexpected,require_order]",
            "tool_call_accuracy[require_order,penalize_unexpected]",
            {"require_order": True, "penalize_unexpected": True},
        ),
        (
            {"name": "tool_call_accuracy", "count_repeats": True},
            "tool_call_accuracy[count_repeats]",
            {"count_repeats": True},
        ),
        (
            {"name": "tool_call_accuracy", "penalize_unexpected": True, "threshold": 0.9},
            "tool_call_accuracy[threshold=0.9,penalize_unexpected]",
            {"threshold": 0.9, "penalize_unexpected": True},
        ),
    ],
)
def test_settings_resolve_by_name_and_come_back_as_the_same_reference(
    ref: str | dict[str, object], name: str, settings: dict[str, object]
) -> None:
    (scorer,) = resolve_scorers([ref], builtins=False)
    assert isinstance(scorer, ToolCallAccuracy)
    assert scorer.name == name
    assert scorer_reference(scorer) == {"name": "tool_call_accuracy", **settings}
    # The name a score carries reads back into the same scorer.
    (again,) = resolve_scorers([name], builtins=False)
    assert again == scorer


def test_three_settings_in_one_run_keep_apart_and_rescore_alike(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run = agenteval.evaluate(
        None,
        [REFUND, NO_TOOLS],
        scorers=[
            "tool_call_accuracy",
            "tool_call_accuracy[penalize_unexpected]",
            {"name": "tool_call_accuracy", "count_repeats": True, "penalize_unexpected": True},
        ],
        builtins=False,
        rubrics=[],
        store=store,
    )
    by_case = {result.case.id: result.scores for result in run.results}
    refund = by_case["no-refund"]
    assert refund["tool_call_accuracy"].value == 1.0
    assert refund["tool_call_accuracy[penalize_unexpected]"].value == 0.5
    # 2 expected calls matched, 1 unexpected call: 2 / 3.
    counted = refund["tool_call_accuracy[penalize_unexpected,count_repeats]"]
    assert counted.value == pytest.approx(2 / 3)
    assert "refund_order" in (refund["tool_call_accuracy"].reason or "")
    assert {score.value for score in by_case["no-tools"].values()} == {0.0}

    rescored = agenteval.rescore(run.run_id, store=store)
    again = {result.case.id: result.scores for result in rescored.results}
    assert {
        case: {name: score.value for name, score in scores.items()}
        for case, scores in again.items()
    } == {
        case: {name: score.value for name, score in scores.items()}
        for case, scores in by_case.items()
    }


AGENT = """
def answer(question):
    return "Refunded again."
"""


def test_from_agenteval_yaml_and_the_scorer_flag(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    cases = [c.model_dump(mode="json", exclude_defaults=True) for c in (REFUND, NO_TOOLS)]
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases, sort_keys=False))
    config = {
        "dataset": "cases.yaml",
        "agent": "agent.py:answer",
        "builtins": False,
        "rubrics": [],
        "scorers": [{"name": "tool_call_accuracy", "penalize_unexpected": True}],
    }
    (tmp_path / "agenteval.yaml").write_text(yaml.safe_dump(config))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agenteval",
            "run",
            ".",
            "--scorer",
            "tool_call_accuracy[require_order,penalize_unexpected]",
            "--json",
            "run.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "160"},
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    results = json.loads((tmp_path / "run.json").read_text())["results"]
    scores = {result["case_id"]: result["scores"] for result in results}
    strict = scores["no-refund"]["tool_call_accuracy[penalize_unexpected]"]
    assert strict["value"] == 0.5 and strict["passed"] is False
    assert "refund_order" in strict["reason"]
    ordered = scores["no-refund"]["tool_call_accuracy[require_order,penalize_unexpected]"]
    assert ordered["value"] == pytest.approx(2 / 3)
    assert scores["no-tools"]["tool_call_accuracy[penalize_unexpected]"]["value"] == 0.0
