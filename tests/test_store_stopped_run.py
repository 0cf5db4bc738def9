"""A run whose every trial is stored but that was never marked finished (its process was killed
after storing its last trial): `show --json` said `"status": "running", "complete": true`, and
`agenteval runs` listed it `running` with all its trials done. Its status is `stopped`: nothing
is missing (`complete` is true), and it is not finished (the gate still refuses it), which a
resume settles without running a trial. Real runs, a real store, the real `agenteval` command.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.review.cli import agenteval

import agenteval as ae
from agenteval import EvalCase, RunStore
from agenteval.records import RunStatus

CASES = [EvalCase(id=f"c{i}", input=f"q{i}", expected_output="ok") for i in range(3)]
ASKED: list[str] = []


def answer(question: str) -> str:
    ASKED.append(question)
    return "ok"


def _stopped_run(store: Path) -> str:
    run = ae.evaluate(answer, CASES, trials=2, store=store)
    # What a SIGKILL between the last trial's write and the finish leaves: every trial stored,
    # the run still marked running.
    with RunStore(store) as opened:
        opened.set_status(run.run_id, RunStatus.RUNNING)
    return run.run_id


def test_a_run_with_every_trial_stored_and_never_marked_finished_is_stopped(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    run_id = _stopped_run(store)
    shown = agenteval(tmp_path, "show", run_id, "--store", str(store), "--json", "run.json")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    document = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    # Before: "running" beside complete: true.
    assert (document["status"], document["complete"], document["missing"]) == (
        "stopped",
        True,
        None,
    )
    assert f"run {run_id} is stopped: every trial is stored" in shown.stderr
    listed = agenteval(tmp_path, "runs", "--store", str(store))
    assert listed.returncode == 0, listed.stderr
    (row,) = [line for line in listed.stdout.splitlines() if run_id in line]
    assert " stopped " in row and "6/6" in row and "running" not in row


def test_a_resume_finishes_a_stopped_run_without_running_a_trial(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run_id = _stopped_run(store)
    ASKED.clear()
    resumed = ae.evaluate(answer, CASES, trials=2, store=store, resume=run_id)
    assert ASKED == []
    assert resumed.info.status is RunStatus.FINISHED
    assert resumed.to_json()["status"] == "finished"
