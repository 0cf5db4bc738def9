"""`agenteval gate` on a candidate whose trials all failed for what agenteval counts as
infrastructure (a timeout, a connection error): nothing was judged, so nothing can regress,
and the gate passes with exit 0.

An agent change that makes every trial hang past `--timeout` (an `await` that never returns, a
retry loop that never ends) is recorded as `timeout`, retried, and left out of scoring, as the
README says. But the gate then sees "no shared case judged in both runs" and passes: the worst
regression there is ships green. A candidate that answered no case (or far fewer than the base)
says nothing about its quality; the gate must refuse it, as it refuses a run with missing
trials ("either run did not finish").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.review.cli import agenteval, project, run_id

CASES = [{"id": f"c{i}", "input": f"q{i}", "expected_output": "right"} for i in range(10)]

GOOD = """
def answer(question):
    return "right"
"""

HANGS = """
import asyncio

async def answer(question):
    await asyncio.sleep(30)  # the regression: the agent never answers
    return "right"
"""

BACKEND_DOWN = """
def answer(question):
    raise ConnectionRefusedError("the agent's own backend is gone")
"""


@pytest.mark.parametrize("candidate", [HANGS, BACKEND_DOWN], ids=["timeouts", "connection"])
def test_gate_refuses_a_candidate_whose_every_trial_failed_as_infrastructure(
    tmp_path: Path, candidate: str
) -> None:
    folder = project(tmp_path / "p", GOOD, CASES, "retries: 0\ntimeout: 0.5\nconcurrency: 10\n")
    base = agenteval(folder, "run", ".", "--store", "runs.db")
    assert base.returncode == 0, base.stderr
    (folder / "agent.py").write_text(candidate)
    cand = agenteval(folder, "run", ".", "--store", "runs.db")
    assert cand.returncode == 0, cand.stderr  # the run itself completed: every trial stored
    gate = agenteval(folder, "gate", run_id(base), run_id(cand), "--store", "runs.db")
    assert "Traceback" not in gate.stderr
    assert gate.returncode == 1, gate.stdout
    assert "✗ the candidate judged what the base judged" in gate.stdout


REGRESSED_ON_C9 = """
def answer(question):
    return "right" if question in ("q0", "q1") else "wrong"
"""

FINE_ON_C9 = """
def answer(question):
    return "right" if question in ("q0", "q1", "q9") else "wrong"
"""


def test_gate_refuses_a_candidate_that_left_out_most_of_the_base_cases(tmp_path: Path) -> None:
    folder = project(tmp_path / "p", FINE_ON_C9, CASES, "retries: 0\n")
    (folder / "easy.json").write_text(json.dumps(CASES[:2]))
    base = agenteval(folder, "run", ".", "--store", "runs.db")
    assert base.returncode == 0, base.stderr
    (folder / "agent.py").write_text(REGRESSED_ON_C9)  # c9 now fails: the regression
    cand = agenteval(folder, "run", "easy.json", "--agent", "agent.py:answer", "--store", "runs.db")
    assert cand.returncode == 0, cand.stderr
    gate = agenteval(folder, "gate", run_id(base), run_id(cand), "--store", "runs.db")
    assert "Traceback" not in gate.stderr
    assert gate.returncode == 1, gate.stdout
    assert "✗ the candidate judged what the base judged" in gate.stdout
    out = " ".join(gate.stdout.split())
    assert "8 not run in the candidate: c2, c3, c4, c5, c6 and 3 more" in out
    assert "--allow-subset" in out
    # Said on purpose, the subset is gated on the cases it ran (and what it leaves out is shown).
    allowed = agenteval(
        folder, "gate", run_id(base), run_id(cand), "--store", "runs.db", "--allow-subset"
    )
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "(allowed by --allow-subset)" in " ".join(allowed.stdout.split())
