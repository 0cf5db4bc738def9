"""`agenteval score` stops as `agenteval run` does (tests/test_cli_interrupts.py): Ctrl-C, even
twice with the second landing inside a task, ends in one line and exit 130; a `BaseException`
that is not an `Exception` escaping the engine (a `SystemExit` from a task a scorer started and
left) in one line and exit 1. No traceback, no "Task was destroyed but it is pending!", and
every trial scored before it is stored."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, assert_clean, cli_env, ctrl_c_twice, write_cases

from agenteval import RunStore
from agenteval.run import RunStatus

# A scorer that takes its time, and, cancelled by the first Ctrl-C, takes more to stop (as a
# judge holding a connection does), so the second Ctrl-C lands in the middle of a task.
STUBBORN_SCORER = """
import asyncio, os, time
from pathlib import Path

async def slow(case, trial):
    try:
        await asyncio.sleep(0.02)
    except asyncio.CancelledError:
        Path(os.environ["CANCELLED"]).touch()
        time.sleep(2)  # blocking: the second Ctrl-C arrives in here
        raise
    return True
"""

EXITING_SCORER = """
import asyncio

_background = []

async def stop_at_40(case, trial):
    if case.id == "c040":
        async def leave():
            raise SystemExit("a background task called sys.exit")
        # A task the scorer starts and leaves: its SystemExit is not the score's to catch, as
        # asyncio raises it out of the event loop itself.
        _background.append(asyncio.create_task(leave()))
        await asyncio.sleep(0)
    return True
"""


def _traces(folder: Path, count: int) -> None:
    """A case file and one recorded trial per case (agenteval trial JSONL)."""
    write_cases(folder, count)
    (folder / "trials.jsonl").write_text(
        "".join(
            json.dumps({"case_id": f"c{i:03d}", "output": f"Q{i}"}) + "\n" for i in range(count)
        )
    )


def _stored(store: Path) -> tuple[RunStatus, int]:
    with RunStore(store) as runs:
        (row,) = runs.list_runs()
        return row.status, row.trials_done


ARGS = ["score", "trials.jsonl", "--cases", "cases.json", "--store", "runs.db"]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
def test_ctrl_c_twice_stops_score_with_one_message(tmp_path: Path) -> None:
    (tmp_path / "scorers.py").write_text(STUBBORN_SCORER)
    _traces(tmp_path, 2000)
    store, cancelled = tmp_path / "runs.db", tmp_path / "cancelled"
    code, err = ctrl_c_twice(
        [*ARGS, "--scorer", "scorers.py:slow"],
        tmp_path,
        store,
        cancelled,
        cli_env(CANCELLED=str(cancelled)),
    )
    assert code == 130, err
    assert_clean(err)
    message = " ".join(err.split())
    assert "interrupted: every finished trial is stored" in message
    assert "score the traces again" in message
    status, done = _stored(store)
    assert status is RunStatus.RUNNING and 20 <= done < 2000


def test_a_base_exception_stops_score_with_one_message(tmp_path: Path) -> None:
    (tmp_path / "scorers.py").write_text(EXITING_SCORER)
    _traces(tmp_path, 200)
    done = agenteval_cli(tmp_path, *ARGS, "--scorer", "scorers.py:stop_at_40", timeout=300)
    assert done.returncode == 1, done.stderr
    assert_clean(done.stderr)
    message = " ".join(done.stderr.split())
    assert "the run stopped: SystemExit: a background task called sys.exit" in message
    assert "every finished trial is stored" in message
    status, stored = _stored(tmp_path / "runs.db")
    assert status is RunStatus.RUNNING and stored < 200
