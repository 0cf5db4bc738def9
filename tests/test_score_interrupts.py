"""`agenteval score` stops as `agenteval run` does (tests/test_cli_interrupts.py): Ctrl-C, even
twice with the second landing inside a task, ends in one line and exit 130; a `BaseException`
that is not an `Exception` escaping the engine (a `SystemExit` from a task a scorer started and
left) in one line and exit 1. No traceback, no "Task was destroyed but it is pending!", and
every trial scored before it is stored."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


def _env(**extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "COLUMNS": "200",
        **extra,
    }


def _traces(folder: Path, count: int) -> None:
    """A case file and one recorded trial per case (agenteval trial JSONL)."""
    (folder / "cases.json").write_text(
        json.dumps(
            [
                {"id": f"c{i:03d}", "input": f"q{i}", "expected_output": f"Q{i}"}
                for i in range(count)
            ]
        )
    )
    (folder / "trials.jsonl").write_text(
        "".join(
            json.dumps({"case_id": f"c{i:03d}", "output": f"Q{i}"}) + "\n" for i in range(count)
        )
    )


def _assert_clean(err: str) -> None:
    for noise in ("Traceback", "Task was destroyed", "never retrieved", "Exception ignored"):
        assert noise not in err, err


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
    process = subprocess.Popen(
        [sys.executable, "-m", "agenteval", *ARGS, "--scorer", "scorers.py:slow"],
        cwd=tmp_path,
        env=_env(CANCELLED=str(cancelled)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell running the tests in the background ignores SIGINT, and children inherit
        # that; the user at a terminal does not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        stored = 0
        while stored < 20:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
            if store.exists():
                with RunStore(store) as runs:
                    rows = runs.list_runs()
                    stored = rows[0].trials_done if rows else 0
        process.send_signal(signal.SIGINT)
        while not cancelled.exists():
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.01)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    _assert_clean(err)
    message = " ".join(err.split())
    assert "interrupted: every finished trial is stored" in message
    assert "score the traces again" in message
    status, done = _stored(store)
    assert status is RunStatus.RUNNING and 20 <= done < 2000


def test_a_base_exception_stops_score_with_one_message(tmp_path: Path) -> None:
    (tmp_path / "scorers.py").write_text(EXITING_SCORER)
    _traces(tmp_path, 200)
    done = subprocess.run(
        [sys.executable, "-m", "agenteval", *ARGS, "--scorer", "scorers.py:stop_at_40"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    _assert_clean(done.stderr)
    message = " ".join(done.stderr.split())
    assert "the run stopped: SystemExit: a background task called sys.exit" in message
    assert "every finished trial is stored" in message
    status, stored = _stored(tmp_path / "runs.db")
    assert status is RunStatus.RUNNING and stored < 200
