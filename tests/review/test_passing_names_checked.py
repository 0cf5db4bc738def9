"""`--passing NAME` (run, report, compare), `passing=` (evaluate) and a gate policy's
`trial_passes` naming a scorer the run does not have: no trial had a verdict, so "Trials
passing" vanished, `report --junit` wrote 0 failing for a run with a failing trial, and a
gate's trial-pass rule held vacuously (exit 0). Names shift with the rule that gives a second
scorer `NAME_2`, so such a name is an error (exit 2) naming it, with nothing run or written."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.review.cli import agenteval as cli
from tests.review.cli import run_id

import agenteval
from agenteval import EvalCase
from agenteval.errors import ConfigError

CASES = "- {id: a, input: x, expected_output: 'yes'}\n- {id: b, input: y, expected_output: 'no'}\n"


def _project(tmp_path: Path) -> str:
    (tmp_path / "agent.py").write_text("def answer(text):\n    return 'yes'\n")
    (tmp_path / "cases.yaml").write_text(CASES)
    done = cli(tmp_path, "run", "cases.yaml", "--agent", "agent.py:answer")
    assert done.returncode == 0, done.stderr
    return run_id(done)


def _refused(done: object, name: str) -> None:
    out = " ".join((done.stdout + done.stderr).split())  # type: ignore[attr-defined]
    assert done.returncode == 2, out  # type: ignore[attr-defined]
    assert f"no scorer named {name!r}" in out, out
    assert "exact_match" in out.replace(repr(name), ""), out


def test_run_with_an_unknown_passing_name_runs_nothing(tmp_path: Path) -> None:
    _project(tmp_path)
    done = cli(
        tmp_path, "run", "cases.yaml", "--agent", "agent.py:answer", "--passing", "exact_mach"
    )
    _refused(done, "exact_mach")
    assert cli(tmp_path, "runs").stdout.count("finished") == 1


def test_report_junit_with_an_unknown_passing_name_writes_nothing(tmp_path: Path) -> None:
    rid = _project(tmp_path)
    done = cli(tmp_path, "report", rid, "--passing", "exact_match_2", "--junit", "j.xml")
    _refused(done, "exact_match_2")
    assert not (tmp_path / "j.xml").exists()


def test_compare_with_an_unknown_passing_name(tmp_path: Path) -> None:
    rid = _project(tmp_path)
    _refused(cli(tmp_path, "compare", rid, rid, "--passing", "exact_mach"), "exact_mach")


def test_gate_policy_trial_passes_with_an_unknown_name(tmp_path: Path) -> None:
    rid = _project(tmp_path)
    (tmp_path / "gate.yaml").write_text("trial_passes: [exact_mach]\n")
    _refused(cli(tmp_path, "gate", rid, rid, "--policy", "gate.yaml"), "exact_mach")


def test_evaluate_with_an_unknown_passing_name(tmp_path: Path) -> None:
    cases = [EvalCase(id="a", input="x", expected_output="yes")]
    with pytest.raises(ConfigError, match="no scorer named 'exact_mach'"):
        agenteval.evaluate(
            lambda text: "no", cases, passing=["exact_mach"], store=tmp_path / "r.db"
        )


def test_known_passing_names_still_work(tmp_path: Path) -> None:
    rid = _project(tmp_path)
    done = cli(tmp_path, "report", rid, "--passing", "exact_match", "--junit", "j.xml")
    assert done.returncode == 0, done.stderr
    assert "1 failing" in done.stdout, done.stdout
    assert cli(tmp_path, "compare", rid, rid, "--passing", "exact_match").returncode == 0
