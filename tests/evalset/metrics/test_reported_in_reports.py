"""A reported metric in agenteval's own reports and gate: the run's terminal summary, `--json`
and `--html` show its measured mean as `reported`; the candidate run of `agenteval gate` may
make ten times the tool calls and still pass (a measurement is no rule), while the pass rate
counts only the judged scorers. Run as a user runs them: in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import agenteval
from agenteval import EvalCase
from agenteval.agents.recorder import record_model_call

CASES = [EvalCase(id=f"q{i}", input=f"q{i}", expected_output="42") for i in range(3)]
SCORERS: list[Any] = ["exact_match", "tool_call_count_v1", "token_usage_v1"]


@agenteval.tool
def look_up(question: str) -> str:
    """The answer."""
    return "42"


def lean(question: str) -> str:
    record_model_call("gpt-4o-mini", input_tokens=100, output_tokens=10)
    look_up(question)
    return "42"


def wasteful(question: str) -> str:
    for _ in range(10):
        record_model_call("gpt-4o-mini", input_tokens=1_000, output_tokens=100)
        look_up(question)
    return "42"


def agenteval_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "COLUMNS": "200",
            "PYTHONPATH": str(Path(agenteval.__file__).parents[1]),
        },
    )


def test_reported_in_the_run_reports_and_never_in_the_gate(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    base = agenteval.evaluate(lean, CASES, SCORERS, builtins=False, store=store)
    candidate = agenteval.evaluate(wasteful, CASES, SCORERS, builtins=False, store=store)
    assert candidate.summary is not None
    calls = candidate.summary.scorers["tool_call_count_v1"]
    assert (calls.reported, calls.reported_mean, calls.unit) == (3, 10.0, "tool calls per turn")
    assert (calls.scored, calls.pass_rate, calls.skipped) == (0, None, 0)
    assert candidate.summary.passed.count == 3  # exact_match alone decides

    shown = agenteval_cli(
        tmp_path,
        "show",
        candidate.run_id,
        "--store",
        str(store),
        "--json",
        str(tmp_path / "run.json"),
    )
    assert shown.returncode == 0, shown.stderr
    row = next(line for line in shown.stdout.splitlines() if "tool_call_count_v1" in line)
    assert row.split()[:3] == ["tool_call_count_v1", "10.00", "reported"]
    assert "reported = measured, never a pass or a fail" in shown.stdout
    document = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    tokens = document["summary"]["scorers"]["token_usage_v1"]
    assert (tokens["reported"], tokens["reported_mean"], tokens["pass_rate"]) == (3, 11_000.0, None)

    page = agenteval_cli(
        tmp_path, "report", candidate.run_id, "--store", str(store), "--html", "run.html"
    )
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert 'title="measured in tool calls per turn, never a pass or a fail">reported<' in html

    gate = agenteval_cli(tmp_path, "gate", base.run_id, candidate.run_id, "--store", str(store))
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "tool_call_count_v1" not in gate.stdout
