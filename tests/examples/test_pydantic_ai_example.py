"""`examples/pydantic_ai_agent`: `agenteval run examples/pydantic_ai_agent` from a fresh clone
(the committed state, HEAD), offline and with no API key, leaving the clone as it was; and what
its run records, case by case, as its README says."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, assert_clean, cli_env
from tests.examples.clones import ROOT, git

from agenteval import RunStore

EXAMPLE = ROOT / "examples" / "pydantic_ai_agent"


def test_it_runs_from_a_fresh_clone_and_leaves_it_as_it_was(clone: Path) -> None:
    if not (clone / "examples" / "pydantic_ai_agent").exists():
        pytest.skip("the example is not committed yet")
    done = subprocess.run(
        [sys.executable, "-m", "agenteval", "run", "examples/pydantic_ai_agent"],
        cwd=clone,
        capture_output=True,
        text=True,
        env=cli_env(PYTHONPATH=str(clone / "src"), NO_PROXY="*"),
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert_clean(done.stderr)
    assert "10 trials, 10 completed, 0 failed" in done.stdout
    assert git("status", "--porcelain", "--untracked-files=all", cwd=clone) == ""


def test_each_case_records_what_the_readme_says(tmp_path: Path) -> None:
    example = tmp_path / "example"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("__pycache__", ".agenteval"))
    done = agenteval_cli(example, "run", ".", "--store", "runs.db", env=cli_env(NO_PROXY="*"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "tool_retry 2" in done.stdout
    with RunStore(example / "runs.db", create=False) as runs:
        results = list(runs.iter_results(runs.resolve_run_id("latest")))
    assert len(results) == 10
    for result in results:
        trial, case = result.trial, result.case.id
        assert trial.failure is None, case
        assert set(trial.tool_specs) == {"get_forecast", "convert"}
        assert trial.model_calls and all(c.model == "forecast-sim-1" for c in trial.model_calls)
        calls = [(c.name, c.arguments, c.result, c.error) for c in trial.tool_calls]
        if case == "two-cities":
            # Both calls asked in one response: one step, both answered.
            assert calls == [
                ("get_forecast", {"city": "Rome"}, "rainy, 17 C", None),
                ("get_forecast", {"city": "Oslo"}, "snow, -2 C", None),
            ]
            assert len(trial.model_calls) == 2
        elif case == "atlantis":
            assert calls == [
                (
                    "get_forecast",
                    {"city": "Atlantis"},
                    None,
                    "no forecast for 'Atlantis': ask about Paris, Rome or Oslo",
                )
            ]
            assert trial.retries == {"tool_retry": 1}
            assert result.scores["tool_execution"].passed is False
        elif case == "euros":
            assert calls == [
                ("convert", {"amount": 20.0, "source": "EUR", "target": "USD"}, 21.6, None)
            ]
        elif case == "follow-up":
            assert trial.metadata["turn_outputs"] == ["snow, -2 C.", "1160.0."]
            assert [[c.name for c in step.tool_calls] for step in trial.steps] == [
                ["get_forecast"],
                ["convert"],
            ]
        if case != "follow-up":
            assert result.scores["exact_match"].passed is True, case
