"""A run made from Python (`agenteval.evaluate`, target `python:NAME`) that stopped part way:
every command that says how to finish it must say something that works. `agenteval run
python:NAME --resume ID` cannot (there is no such file), so no hint may suggest it; the one
that is suggested, run as written, finishes the run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.review.cli import HANG_GUARD_S, agenteval, environment

SCRIPT = """
import os, sqlite3, sys, time
import agenteval
from agenteval import EvalCase

def my_agent(text):
    if text == "die" and len(sys.argv) < 2:
        # The process dies mid-run, once the earlier trials are committed: the run stays
        # unfinished with 3 of its 4 trials stored.
        for _ in range(600):
            try:
                with sqlite3.connect(".agenteval/runs.db") as db:
                    if db.execute("select count(*) from trials").fetchone()[0] >= 3:
                        break
            except sqlite3.Error:
                pass
            time.sleep(0.05)
        os._exit(1)
    return "ok"

agent = my_agent  # the name the hint gives it
cases = [EvalCase(id=f"c{i}", input="x", expected_output="ok") for i in range(3)]
cases.append(EvalCase(id="d", input="die", expected_output="ok"))
if len(sys.argv) < 2:
    agenteval.evaluate(my_agent, cases, concurrency=1)
else:
    exec(sys.argv[1])  # the Python a hint suggested, as written
"""


def _python(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "make_run.py", *args],
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )


def _unfinished_python_run(tmp_path: Path) -> str:
    (tmp_path / "make_run.py").write_text(SCRIPT)
    died = _python(tmp_path)
    assert died.returncode == 1, died.stderr
    runs = agenteval(tmp_path, "runs")
    found = re.search(r"(\d{8}-\d{6}-[0-9a-f]{4})", runs.stdout)
    # Unfinished, and its process (the script above) gone: interrupted, resumable.
    assert found is not None and "interrupted" in runs.stdout, runs.stdout
    return found.group(1)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_no_command_suggests_agenteval_run_of_a_python_target(tmp_path: Path) -> None:
    run_id = _unfinished_python_run(tmp_path)
    outputs = {
        "show": agenteval(tmp_path, "show", run_id),
        "report": agenteval(tmp_path, "report", run_id, "--html", "r.html"),
        "rescore": agenteval(tmp_path, "rescore", run_id),
        "gate": agenteval(tmp_path, "gate", run_id, run_id),
    }
    for command, done in outputs.items():
        said = _flat(done.stdout + done.stderr)
        assert run_id in said, (command, said)
        assert "agenteval run python:" not in said, (command, said)


def test_the_python_a_hint_suggests_finishes_the_run(tmp_path: Path) -> None:
    run_id = _unfinished_python_run(tmp_path)
    said = _flat(agenteval(tmp_path, "show", run_id).stderr)
    found = re.search(r"`(agenteval\.evaluate\([^`]*\))`", said)
    assert found is not None, said
    call = found.group(1).replace("AGENT", "my_agent").replace("CASES", "cases")
    finished = _python(tmp_path, call)
    assert finished.returncode == 0, finished.stderr
    runs = agenteval(tmp_path, "runs").stdout
    assert "finished" in runs and "4/4" in runs, runs


def test_resume_of_a_python_run_from_the_cli_says_what_works(tmp_path: Path) -> None:
    run_id = _unfinished_python_run(tmp_path)
    (tmp_path / "cases.yaml").write_text("- {id: a, input: x}\n")
    (tmp_path / "agent.py").write_text("def answer(text):\n    return 'ok'\n")
    done = agenteval(
        tmp_path, "run", "cases.yaml", "--agent", "agent.py:answer", "--resume", run_id
    )
    said = _flat(done.stderr)
    assert done.returncode == 2, said
    assert "agenteval run python:" not in said, said
    assert "agenteval.evaluate(" in said, said


def test_a_python_or_pytest_target_given_to_agenteval_run_says_what_runs_it(
    tmp_path: Path,
) -> None:
    python = _flat(agenteval(tmp_path, "run", "python:my_agent", "--resume").stderr)
    assert "agenteval.evaluate(" in python and "check the path" not in python, python
    pytest_target = "pytest:tests/test_x.py::test_support"
    said = _flat(agenteval(tmp_path, "run", pytest_target).stderr)
    assert "`pytest tests/test_x.py::test_support`" in said, said
    assert "check the path" not in said, said
