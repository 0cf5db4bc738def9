"""`agenteval gate` refuses two names for one run: a run compared with itself has no change,
so every rule holds and nothing was checked (one name given twice is deliberate: a policy's
thresholds for one run).

Before, `agenteval gate BASE latest` after a candidate run that never started (its agent did
not import, say: `agenteval run` exits 2 and stores nothing) compared the base with itself,
since `latest` is the newest run stored, and printed "gate passed" (exit 0). Real `agenteval
run` and `agenteval gate` processes over a real store.
"""

from __future__ import annotations

from pathlib import Path

from tests.review.cli import agenteval, project, run_id

AGENT = """
def answer(question: str) -> str:
    return "right"
"""


def test_a_gate_of_a_run_against_itself_is_refused(tmp_path: Path) -> None:
    folder = project(tmp_path / "p", AGENT, [{"id": "c", "input": "q", "expected_output": "right"}])
    base = agenteval(folder, "run", ".")
    assert base.returncode == 0, base.stdout + base.stderr
    # The candidate's run does not start: its agent fails to import.
    (folder / "agent.py").write_text("import not_installed_anywhere\n", encoding="utf-8")
    candidate = agenteval(folder, "run", ".")
    assert candidate.returncode == 2, candidate.stdout + candidate.stderr
    gate = agenteval(folder, "gate", run_id(base), "latest")
    assert gate.returncode == 2, gate.stdout + gate.stderr  # 0 before: "gate passed"
    said = gate.stdout + gate.stderr
    assert f"the base and the candidate are the same run, {run_id(base)}" in said
    assert "gate passed" not in said
    # One name given twice is deliberate: the policy's thresholds alone, for one run.
    alone = agenteval(folder, "gate", run_id(base), run_id(base))
    assert alone.returncode == 0, alone.stdout + alone.stderr
    # compare says what it compares, and still shows it (a look, not a verdict).
    assert agenteval(folder, "compare", run_id(base), "latest").returncode == 0
