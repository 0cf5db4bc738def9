"""A run is finished only when every (case, trial) has a stored result.

Trials that go missing (a writer that loses a batch, an agent whose `CancelledError` ends a
worker, a store edited by hand, a store written by an older agenteval) leave the run resumable
and are named by `run`, `show`, `report`, `compare` and `gate`; `gate` refuses such a run even
when its stored status says finished.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli

import agenteval
from agenteval import RunStore
from agenteval.case import EvalCase
from agenteval.run import RunStatus

CASES = [EvalCase(id=f"c{i}", input=f"q{i}", expected_output=f"Q{i}") for i in range(10)]


def upper(question: str) -> str:
    return question.upper()


def test_missing_trials_counts_and_names_the_pairs_without_a_stored_trial(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run = agenteval.evaluate(upper, CASES, trials=2, store=store)
    with RunStore(store) as runs:
        complete = runs.missing_trials(run.run_id)
    assert (complete.count, complete.expected, complete.stored) == (0, 20, 20)
    with sqlite3.connect(store) as db:
        db.execute("DELETE FROM trials WHERE case_id IN ('c3', 'c7') AND trial = 1")
        db.execute("DELETE FROM trials WHERE case_id = 'c5'")
    db.close()
    with RunStore(store) as runs:
        missing = runs.missing_trials(run.run_id, examples=3)
    assert (missing.count, missing.expected, missing.stored) == (4, 20, 16)
    assert missing.examples == (("c3", 1), ("c5", 0), ("c5", 1))
    assert missing.describe() == (
        "4 of 20 trials have no stored result (case 'c3' trial 1, case 'c5' trials 0, 1 and 1 more)"
    )


def test_a_writer_that_loses_a_batch_leaves_the_run_resumable_not_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store-level check: whatever loses trials, finishing counts what is stored."""
    store = tmp_path / "runs.db"
    real_write = RunStore.write_results
    dropped: list[int] = []

    def lossy_write(self: RunStore, run_id: str, encoded: object) -> None:
        if not dropped:  # the first batch vanishes without a word
            dropped.append(len(encoded.keys))  # type: ignore[attr-defined]
            return
        real_write(self, run_id, encoded)  # type: ignore[arg-type]

    monkeypatch.setattr(RunStore, "write_results", lossy_write)
    warnings: list[str] = []

    async def slow_upper(question: str) -> str:
        await asyncio.sleep(0.01 * int(question[1:]))  # one trial per batch
        return question.upper()

    run = asyncio.run(
        agenteval.evaluate_async(
            slow_upper, CASES, store=store, concurrency=10, on_warning=warnings.append
        )
    )
    assert dropped and dropped[0] >= 1
    assert not run.complete
    assert run.info.status is RunStatus.RUNNING
    assert run.missing is not None and run.missing.count == dropped[0]
    assert any(f"{dropped[0]} of 10 trials have no stored result" in w for w in warnings)
    with RunStore(store) as runs:
        (row,) = runs.list_runs()
        assert row.status is RunStatus.RUNNING  # resumable
    monkeypatch.setattr(RunStore, "write_results", real_write)
    resumed = agenteval.evaluate_async(slow_upper, CASES, store=store, resume=run.run_id)
    finished = asyncio.run(resumed)
    assert finished.complete and finished.info.status is RunStatus.FINISHED
    assert finished.summary.trials == 10


CANCELLING_AGENT = """
import asyncio

async def answer(question: str) -> str:
    if question in ("q2", "q6"):
        # What a library does when its own task is cancelled: the error escapes the agent.
        raise asyncio.CancelledError()
    return question.upper()
"""


def test_an_agent_raising_cancelled_error_never_gives_a_finished_run_with_exit_0(
    tmp_path: Path,
) -> None:
    """The issue's reproduction. Today the two trials vanish and the run says finished, exit 0;
    either every trial is stored (the agent's failure recorded) or the run says what is
    missing, stays resumable and exits 3."""
    (tmp_path / "agent.py").write_text(CANCELLING_AGENT)
    (tmp_path / "cases.json").write_text(
        json.dumps(
            [{"id": f"c{i}", "input": f"q{i}", "expected_output": f"Q{i}"} for i in range(10)]
        )
    )
    done = agenteval_cli(
        tmp_path,
        "run",
        "cases.json",
        "--agent",
        "agent.py:answer",
        "--store",
        "runs.db",
        "--concurrency",
        "4",
    )
    assert "Traceback" not in done.stderr, done.stderr
    with RunStore(tmp_path / "runs.db") as runs:
        (row,) = runs.list_runs()
        missing = runs.missing_trials(row.run_id)
    if done.returncode == 0:
        assert row.status is RunStatus.FINISHED and missing.count == 0, done.stderr
    else:
        assert done.returncode == 3, done.stderr
        assert row.status is RunStatus.RUNNING
        assert f"{missing.count} of 10 trials have no stored result" in done.stderr
        assert f"--resume {row.run_id}" in done.stderr


def _finished_run_with_lost_trials(tmp_path: Path) -> tuple[Path, str, str]:
    """A base and a candidate, both stored as finished; the candidate then loses two trials
    the way a store written by agenteval 0.x could: status finished, rows absent."""
    store = tmp_path / "runs.db"
    base = agenteval.evaluate(upper, CASES, store=store)
    candidate = agenteval.evaluate(upper, CASES, store=store)
    with sqlite3.connect(store) as db:
        db.execute(
            "DELETE FROM trials WHERE run_id = ? AND case_id IN ('c1', 'c4')", (candidate.run_id,)
        )
        db.execute(
            "DELETE FROM scores WHERE run_id = ? AND case_id IN ('c1', 'c4')", (candidate.run_id,)
        )
    db.close()
    with RunStore(store) as runs:
        assert runs.get_info(candidate.run_id).status is RunStatus.FINISHED
    return store, base.run_id, candidate.run_id


def test_gate_refuses_a_candidate_with_missing_trials_even_if_marked_finished(
    tmp_path: Path,
) -> None:
    store, base, candidate = _finished_run_with_lost_trials(tmp_path)
    gated = agenteval_cli(tmp_path, "gate", base, candidate, "--store", str(store))
    assert gated.returncode == 1, gated.stdout + gated.stderr
    out = " ".join(gated.stdout.split())
    assert "gate failed" in out
    assert f"the candidate run {candidate} is missing 2 of 10 trials" in out
    assert "case 'c1' trial 0, case 'c4' trial 0" in out
    # And as the base: a base with holes says nothing about the cases it lacks either.
    swapped = agenteval_cli(tmp_path, "gate", candidate, base, "--store", str(store))
    assert swapped.returncode == 1
    assert f"the base run {candidate} is missing 2 of 10 trials" in " ".join(swapped.stdout.split())
    # A complete pair passes: the rule blocks on the holes, not on anything else.
    again = agenteval.evaluate(upper, CASES, store=store).run_id
    whole = agenteval_cli(tmp_path, "gate", base, again, "--store", str(store))
    assert whole.returncode == 0, whole.stdout


def test_show_report_and_compare_say_how_many_trials_are_missing_and_which(
    tmp_path: Path,
) -> None:
    store, base, candidate = _finished_run_with_lost_trials(tmp_path)
    named = "2 of 10 trials have no stored result (case 'c1' trial 0, case 'c4' trial 0)"
    shown = agenteval_cli(tmp_path, "show", candidate, "--store", str(store))
    assert shown.returncode == 0, shown.stderr
    assert named in " ".join(shown.stderr.split())
    # Made from Python, so resumed from Python (never `agenteval run python:... --resume`).
    assert f'resume="{candidate}"' in " ".join(shown.stderr.split())
    clean = agenteval_cli(tmp_path, "show", base, "--store", str(store))
    assert "no stored result" not in clean.stderr
    reported = agenteval_cli(
        tmp_path, "report", candidate, "--html", "r.html", "--store", str(store)
    )
    assert reported.returncode == 0, reported.stderr
    assert named in " ".join(reported.stderr.split())
    compared = agenteval_cli(tmp_path, "compare", base, candidate, "--store", str(store))
    assert compared.returncode == 0, compared.stderr
    assert f"the candidate run {candidate}: {named}" in " ".join(compared.stdout.split())
