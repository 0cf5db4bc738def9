"""Ctrl-C, and anything else that stops `agenteval run` from outside the engine's reach, ends
in the one clean message: no "Task was destroyed but it is pending!", no traceback, the same
exit code, and a run that resumes with every stored trial kept.

A KeyboardInterrupt raised inside a task (the second Ctrl-C, which asyncio raises wherever the
main thread is) escapes the event loop and used to leave the main task pending and a task's
exception unretrieved: asyncio printed both, with tracebacks, after the clean message.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, assert_clean, cli_env, ctrl_c_twice, write_cases

from agenteval import RunStore
from agenteval.run import RunStatus

# Slow trials; a trial cancelled by the first Ctrl-C takes its time to stop (as agents holding
# a connection do), so the second Ctrl-C lands in the middle of a task.
STUBBORN_AGENT = """
import asyncio, os, time
from pathlib import Path

async def answer(question: str) -> str:
    try:
        await asyncio.sleep(0.02)
    except asyncio.CancelledError:
        Path(os.environ["CANCELLED"]).touch()
        time.sleep(2)  # blocking: the second Ctrl-C arrives in here
        raise
    return question.upper()
"""

EXITING_AGENT = """
import asyncio

_background = []

async def answer(q):
    if q == "q40":
        async def leave():
            raise SystemExit("a background task called sys.exit")
        # A task the agent starts and leaves: its SystemExit is not the trial's to catch, as
        # asyncio raises it out of the event loop itself.
        _background.append(asyncio.create_task(leave()))
        await asyncio.sleep(0)
    return q.upper()
"""

# An agent that cancels the store writer's task (found by its guard's own `who`): the writer
# cannot go on, so the run fails with a WorkerLostError, which the CLI used to print as a
# traceback.
WRITER_CANCELLING_AGENT = """
import asyncio

async def answer(q):
    if q == "q40":
        for task in asyncio.all_tasks():
            frame = getattr(task.get_coro(), "cr_frame", None)
            if frame is not None and frame.f_locals.get("who") == "the store writer":
                task.cancel()
        await asyncio.sleep(0)
    return q.upper()
"""


def _stored(store: Path) -> tuple[str, RunStatus, dict[tuple[str, int], str]]:
    with RunStore(store) as runs:
        (row,) = runs.list_runs()
        trials = {r.key: r.trial.model_dump_json() for r in runs.iter_results(row.run_id)}
        return row.run_id, row.status, trials


def _resume_keeps_every_trial(
    folder: Path,
    args: list[str],
    store: Path,
    run_id: str,
    before: dict[tuple[str, int], str],
    count: int,
) -> None:
    """With an agent that works, `agenteval ARGS --resume RUN_ID` finishes the run's `count`
    trials in `store`, and every trial stored `before` is kept as it was."""
    (folder / "agent.py").write_text("def answer(q):\n    return q.upper()\n")
    resumed = agenteval_cli(folder, *args, "--resume", run_id, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    _, status, after = _stored(store)
    assert status is RunStatus.FINISHED and len(after) == count
    assert all(after[key] == trial for key, trial in before.items())


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
def test_a_second_ctrl_c_inside_a_task_prints_only_the_clean_message(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(STUBBORN_AGENT)
    write_cases(tmp_path, 2000)
    store, cancelled = tmp_path / "runs.db", tmp_path / "cancelled"
    args = ["run", "cases.json", "--agent", "agent.py:answer", "--store", str(store)]
    code, err = ctrl_c_twice(
        [*args, "--concurrency", "4"],
        tmp_path,
        store,
        cancelled,
        cli_env(CANCELLED=str(cancelled)),
    )
    assert code == 130, err
    assert "interrupted: every finished trial is stored" in err
    assert_clean(err)

    run_id, status, before = _stored(store)
    assert status is RunStatus.RUNNING and len(before) >= 20
    _resume_keeps_every_trial(tmp_path, args, store, run_id, before, 2000)


def test_a_base_exception_escaping_the_engine_ends_in_one_message(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(EXITING_AGENT)
    write_cases(tmp_path, 200)
    store = tmp_path / "runs.db"
    args = [
        "run",
        "cases.json",
        "--agent",
        "agent.py:answer",
        "--store",
        str(store),
        "--concurrency",
        "4",
    ]
    done = agenteval_cli(tmp_path, *args, timeout=300)
    assert done.returncode == 1, done.stderr  # as before: the run did not complete
    assert_clean(done.stderr)
    message = " ".join(done.stderr.split())
    assert "the run stopped: SystemExit: a background task called sys.exit" in message
    assert "every finished trial is stored" in message and "--resume" in message
    run_id, status, before = _stored(store)
    assert status is RunStatus.RUNNING and len(before) < 200
    _resume_keeps_every_trial(tmp_path, args, store, run_id, before, 200)


def test_an_engine_failure_ends_in_one_message_and_the_run_resumes(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(WRITER_CANCELLING_AGENT)
    write_cases(tmp_path, 200)
    store = tmp_path / "runs.db"
    args = ["run", "cases.json", "--agent", "agent.py:answer", "--store", str(store)]
    done = agenteval_cli(tmp_path, *args, "--concurrency", "4", timeout=300)
    assert done.returncode == 1, done.stderr
    assert_clean(done.stderr)
    message = " ".join(done.stderr.split())
    assert "the run stopped: WorkerLostError: the store writer ended" in message
    assert "every finished trial is stored" in message and "--resume" in message
    run_id, status, before = _stored(store)
    assert status is not RunStatus.FINISHED and len(before) < 200
    _resume_keeps_every_trial(tmp_path, args, store, run_id, before, 200)
