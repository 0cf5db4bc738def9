"""`agenteval run` ends with "stored in STORE · `agenteval show ID` shows it again". With the run
stored elsewhere than `agenteval show` looks from here (`--store other.db`, or a case file whose
agenteval.yaml beside it sets `store:`), that command failed: 'no stored run'. The command the
line suggests, run as written from the same folder, must show the run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.review.cli import agenteval

AGENT = "def answer(text):\n    return 'ok'\n"
CASES = "- {id: a, input: x, expected_output: ok}\n"


def _suggested(stdout: str) -> list[str]:
    flat = " ".join(stdout.split())
    found = re.search(r"`agenteval (show [^`]+)` shows it again", flat)
    assert found is not None, stdout
    return shlex.split(found.group(1))


def _follow(cwd: Path, *run_args: str) -> str:
    done = agenteval(cwd, "run", *run_args)
    assert done.returncode == 0, done.stdout + done.stderr
    command = _suggested(done.stdout)
    shown = agenteval(cwd, *command)
    assert shown.returncode == 0, (command, shown.stderr)
    assert command[1] in shown.stdout
    return " ".join(command)


def test_a_store_given_with_the_flag(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "cases.yaml").write_text(CASES)
    _follow(tmp_path, "cases.yaml", "--agent", "agent.py:answer", "--store", "other.db")


def test_a_store_set_beside_a_case_file(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "agent.py").write_text(AGENT)
    (evals / "cases.yaml").write_text(CASES)
    (evals / "agenteval.yaml").write_text("agent: agent.py:answer\nstore: mystore.db\n")
    _follow(tmp_path, "evals/cases.yaml")


def test_the_usual_store_needs_no_flag(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "cases.yaml").write_text(CASES)
    assert "--store" not in _follow(tmp_path, "cases.yaml", "--agent", "agent.py:answer")
