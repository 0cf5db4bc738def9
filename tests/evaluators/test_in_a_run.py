"""The evaluators inside `agenteval.evaluate`, by name from `agenteval.yaml` and `--scorer`, and
rescored from a stored run: the run's judge reaches them, their names stay apart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.evaluators.conftest import Script, block, judge_config
from tests.judge.fakes import FakeOpenAI

import agenteval
from agenteval import (
    AgentStep,
    EvalCase,
    ToolCall,
    ToolCallAccuracy,
    ToolCallNecessity,
    TrajectoryEfficiency,
)
from agenteval.catalog import resolve_scorers, scorer_reference
from agenteval.errors import ScorerError

SEARCH = EvalCase(
    id="repeated-search",
    input="Find the latest Python release",
    agent_trace=[
        AgentStep(
            tool_calls=[ToolCall(name="search", arguments={"query": "Python latest release"})]
        ),
        AgentStep(
            tool_calls=[ToolCall(name="search", arguments={"query": "Python latest release"})]
        ),
        AgentStep(output="Python 3.13 was released in October 2024."),
    ],
    expected_tool_calls=["send_email", "search", "book"],
)


def first_call_only(body: dict[str, Any]) -> float:
    return 1.0 if (block(body, "prior_calls") or "").startswith("(none") else 0.0


def scores_of(run: agenteval.Run) -> dict[str, agenteval.Score]:
    (result,) = run.results
    return result.scores


def test_inside_evaluate_the_run_s_judge_reaches_the_evaluators(
    script: Script, fake: FakeOpenAI, tmp_path: Path
) -> None:
    script.set(tool_call_necessity=first_call_only)
    run = agenteval.evaluate(
        None,
        [SEARCH],
        scorers=[ToolCallNecessity(), ToolCallAccuracy(), ToolCallAccuracy(require_order=True)],
        builtins=False,
        judge=judge_config(fake, tmp_path),
        rubrics=[],
        store=tmp_path / "runs.db",
    )
    scores = scores_of(run)
    assert scores["tool_call_necessity"].value == 0.5
    assert scores["tool_call_necessity"].judge is not None
    assert scores["tool_call_accuracy"].value == pytest.approx(1 / 3)
    assert scores["tool_call_accuracy[require_order]"].value == pytest.approx(1 / 3)
    assert run.info.scorers == [
        "tool_call_necessity",
        "tool_call_accuracy",
        {"name": "tool_call_accuracy", "require_order": True},
    ]
    document = run.to_json()
    assert document["summary"]["scorers"]["tool_call_necessity"]["mean"] == 0.5

    # Rescoring loads every one of them again by name, with the stored judge.
    rescored = agenteval.rescore(run.run_id, store=tmp_path / "runs.db")
    assert set(scores_of(rescored)) == set(scores)
    assert scores_of(rescored)["tool_call_necessity"].value == 0.5


def test_names_and_settings_resolve_as_yaml_and_flags_give_them() -> None:
    scorers = resolve_scorers(
        [
            "tool_call_accuracy",
            {"name": "tool_call_accuracy", "require_order": True},
            "task_completion[threshold=0.85]",
            {"name": "trajectory_efficiency", "threshold": 0.5},
            "agent_memory_eval",
        ],
        builtins=False,
    )
    names = [s.name for s in scorers]
    assert names == [
        "tool_call_accuracy",
        "tool_call_accuracy[require_order]",
        "task_completion[threshold=0.85]",
        "trajectory_efficiency[threshold=0.5]",
        "agent_memory_eval",
    ]
    assert isinstance(scorers[3], TrajectoryEfficiency) and scorers[3].threshold == 0.5
    assert [scorer_reference(s) for s in scorers] == [
        "tool_call_accuracy",
        {"name": "tool_call_accuracy", "require_order": True},
        {"name": "task_completion", "threshold": 0.85},
        {"name": "trajectory_efficiency", "threshold": 0.5},
        "agent_memory_eval",
    ]
    # A name set by hand cannot be loaded again by name: no reference (its scores are kept).
    assert scorer_reference(ToolCallAccuracy(name="tools_ok")) is None


def test_a_misspelt_evaluator_or_setting_is_one_clear_error() -> None:
    with pytest.raises(ScorerError, match="did you mean 'tool_call_accuracy'"):
        resolve_scorers(["tool_call_acuracy"], builtins=False)
    with pytest.raises(ScorerError, match="has no setting 'order'"):
        resolve_scorers([{"name": "tool_call_accuracy", "order": True}], builtins=False)
    with pytest.raises(ScorerError, match="has no setting 'judge'"):
        resolve_scorers([{"name": "plan_quality", "judge": "openai:gpt-4o"}], builtins=False)
    with pytest.raises(ScorerError, match="cannot read"):
        resolve_scorers(["tool_call_accuracy[require_order"], builtins=False)


AGENT = """
def answer(question):
    return "Python 3.13 was released in October 2024."
"""


def test_from_agenteval_yaml_and_scorer_flags(
    script: Script, fake: FakeOpenAI, tmp_path: Path
) -> None:
    script.set(
        tool_call_necessity=first_call_only,
        task_completion=1.0,
        trajectory_efficiency_detours=1.0,
        trajectory_efficiency_proportionate=1.0,
        trajectory_efficiency_repeats=0.0,
    )
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "cases.yaml").write_text(
        yaml.safe_dump([SEARCH.model_dump(mode="json", exclude_defaults=True)], sort_keys=False)
    )
    config = {
        "dataset": "cases.yaml",
        "agent": "agent.py:answer",
        "builtins": False,
        "judge": {"model": "openai:gpt-4o-mini", "base_url": fake.base_url},
        "rubrics": [],
        "scorers": [
            "tool_call_necessity",
            {"name": "tool_call_accuracy", "require_order": True},
        ],
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
            "trajectory_efficiency",
            "--scorer",
            "task_completion[threshold=0.9]",
            "--json",
            "run.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "COLUMNS": "160", "NO_PROXY": "127.0.0.1"},
    )
    assert done.returncode == 0, done.stderr
    (result,) = json.loads((tmp_path / "run.json").read_text())["results"]
    scores = result["scores"]
    assert scores["tool_call_necessity"]["value"] == 0.5
    assert scores["tool_call_accuracy[require_order]"]["value"] == pytest.approx(1 / 3)
    assert scores["trajectory_efficiency"]["value"] == pytest.approx(2 / 3)
    assert scores["task_completion[threshold=0.9]"]["value"] == 1.0
    assert scores["task_completion[threshold=0.9]"]["passed"] is True
    # The agent answered; the evaluators read the case's recorded trace for its steps.
    task = next(body for t, body in script.asked if t == "task_completion")
    assert "search" in (block(task, "trace") or "")
    assert block(task, "answer") == "Python 3.13 was released in October 2024."
