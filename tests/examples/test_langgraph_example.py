"""examples/langgraph_agent: `agenteval run examples/langgraph_agent` runs the LangGraph graph
offline, from a fresh clone, and each case scores as the example's README says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, assert_clean, cli_env
from tests.examples.clones import ROOT, git

from agenteval.run import TrialResult
from agenteval.store import RunStore

EXAMPLE = ROOT / "examples" / "langgraph_agent"

# Case id -> the scorers that fail on it (every other scorer that applies passes): the design
# the README's table describes.
FAILING = {
    "status-one": set(),
    "status-parallel": set(),
    "seat-free": set(),
    "seat-taken": {"tool_execution"},
    "fare-then-dollars": set(),
    "where-wrong": {"exact_match"},
    "amount-as-text": {"tool_arguments_valid"},
    "hello": set(),
}


def _results(store: Path) -> dict[tuple[str, int], TrialResult]:
    with RunStore(store, create=False) as runs:
        (row,) = runs.list_runs()
        return {(r.case.id, r.trial.trial): r for r in runs.iter_results(row.run_id)}


def test_each_case_scores_as_the_readme_says(tmp_path: Path) -> None:
    done = agenteval_cli(tmp_path, "run", str(EXAMPLE), env=cli_env(NO_PROXY="*"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert_clean(done.stderr)
    assert "DeprecationWarning" not in done.stderr
    results = _results(tmp_path / ".agenteval" / "runs.db")
    assert {case for case, _ in results} == set(FAILING)
    assert len(results) == 2 * len(FAILING)
    for (case, _), result in results.items():
        assert result.trial.failure is None, case
        failed = {name for name, score in result.scores.items() if score.passed is False}
        assert failed == FAILING[case], (case, {n: s.reason for n, s in result.scores.items()})

    parallel = results["status-parallel", 0].trial
    assert [(c.name, c.arguments, c.id) for c in parallel.tool_calls] == [
        ("flight_status", {"flight": "AT101"}, "call_flight_status_0"),
        ("flight_status", {"flight": "AT303"}, "call_flight_status_1"),
    ]
    assert all(c.result for c in parallel.tool_calls)
    assert parallel.node_visits == ["agent", "tools", "agent"]
    assert [c.model for c in parallel.model_calls] == ["travel-sim-1"] * 2
    assert parallel.usage.input_tokens > 0

    talk = results["fare-then-dollars", 1].trial
    assert talk.metadata["turn_outputs"] == ["AT101 costs 79 EUR.", "That is 85.32."]
    assert [[c.name for c in step.tool_calls] for step in talk.steps] == [
        ["flight_status"],
        ["convert"],
    ]
    (taken,) = results["seat-taken", 0].trial.tool_calls
    assert taken.error is not None
    assert "seat 1A on AT101 is taken" in taken.error
    assert "Cost\n  agent $" in done.stdout  # priced by agenteval.yaml's `prices:`


def test_the_example_runs_from_a_fresh_clone_and_leaves_it_as_it_was(clone: Path) -> None:
    if not (clone / "examples" / "langgraph_agent").is_dir():
        pytest.skip("the example is not committed yet")
    done = subprocess.run(
        [sys.executable, "-m", "agenteval", "run", "examples/langgraph_agent"],
        cwd=clone,
        capture_output=True,
        text=True,
        env=cli_env(PYTHONPATH=str(clone / "src"), NO_PROXY="*"),
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert_clean(done.stderr)
    assert git("status", "--porcelain", "--untracked-files=all", cwd=clone) == ""
