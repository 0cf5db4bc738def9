"""examples/simulated_users, run as its README says from a fresh clone, offline: the fixed list
of turns fails (it answers before the agent asks), the scripted customers pass, each trial's
conversation recorded turn by turn with its end reason; run from another directory too (the
scripts are found beside the case file), and the clone left as it was."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.cli_process import assert_clean, cli_env
from tests.examples.clones import git

from agenteval.datasets import load_cases
from agenteval.store import RunStore
from agenteval.trace import EndReason, Trial

EXAMPLE = "examples/simulated_users"
CONFIRMED = "Refund issued for order 8812; confirmation sent to ana@example.com."


def _run(clone: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=cli_env(PYTHONPATH=str(clone / "src"), NO_PROXY="*"),
        timeout=300,
    )


def _trials(store: Path) -> dict[tuple[str, int], Trial]:
    with RunStore(store, create=False) as runs:
        (row,) = runs.list_runs()
        return {(r.case.id, r.trial.trial): r.trial for r in runs.iter_results(row.run_id)}


def test_scripted_customers_pass_where_the_fixed_script_fails(clone: Path, tmp_path: Path) -> None:
    store, document = tmp_path / "runs.db", tmp_path / "run.json"
    done = _run(clone, clone, "run", EXAMPLE, "--store", str(store), "--json", str(document))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert_clean(done.stderr)
    assert git("status", "--porcelain", "--untracked-files=all", cwd=clone) == ""

    written = json.loads(document.read_text())
    # As the README says: the scripted customers' trials pass, the fixed script's fail.
    assert (written["summary"]["passed"]["count"], written["summary"]["passed"]["total"]) == (6, 8)
    results: list[dict[str, Any]] = written["results"]
    assert len(results) == 8  # four cases, two trials each
    verdicts = {
        (r["case_id"], r["trial"]): (r["scores"]["exact_match"]["passed"], r["failure"])
        for r in results
    }
    for (case_id, _), (passed, failure) in verdicts.items():
        assert failure is None, (case_id, failure)
        assert passed is (case_id != "fixed-script"), case_id

    trials = _trials(store)
    fixed = trials[("fixed-script", 0)]
    # It answered the email before the question, so the agent asked for it again at the end.
    assert fixed.output == "What is the email address on the order?"
    assert fixed.simulation is None  # a written conversation: no simulated user
    for index in (0, 1):
        played = trials[("customer-answers-when-asked", index)]
        assert played.output == CONFIRMED
        simulation = played.simulation
        assert simulation is not None
        assert [(turn.source, turn.user) for turn in simulation.turns] == [
            ("written", "My order arrived broken."),
            ("scripted", "8812"),
            ("scripted", "ana@example.com"),
        ]
        assert simulation.turns[-1].agent == CONFIRMED
        assert simulation.end_reason is EndReason.GOAL_ACHIEVED
        assert simulation.turns_to_goal == 3
        assert simulation.user.endswith("users.py:customer")
    typo = trials[("customer-mistypes-the-email", 0)].simulation
    assert typo is not None
    assert [turn.user for turn in typo.turns][1:] == ["8812", "ana@exmaple.com", "ana@example.com"]
    assert typo.end_reason is EndReason.GOAL_ACHIEVED


def test_the_scripts_are_found_beside_the_case_file_from_anywhere(
    clone: Path, tmp_path: Path
) -> None:
    store = tmp_path / "runs.db"
    done = _run(clone, tmp_path, "run", str(clone / EXAMPLE), "--store", str(store))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]

    trials = _trials(store)
    assert trials[("chatty-customer", 1)].output == CONFIRMED
    assert git("status", "--porcelain", "--untracked-files=all", cwd=clone) == ""


def test_the_exploration_cases_leave_the_user_to_the_model(clone: Path) -> None:
    cases = load_cases(clone / EXAMPLE / "explore.yaml")

    assert len(cases) == 3
    for case in cases:
        assert case.user_simulation is not None
        assert case.user_simulation.script is None and case.user_simulation.goal
