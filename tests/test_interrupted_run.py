"""A run whose process was killed with trials still to run is `interrupted`, not `running` for
ever: `agenteval runs`, `show` (its note and `--json`) and the viewer (its list and the run
page's poll) said `running`, and the viewer polled it every second until restarted. While its
process lives it is `running`; once its process is gone from this machine nothing more is
coming until a resume, which claims it as before. Real `agenteval run` processes, SIGKILLed;
a real store; the real viewer over HTTP."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.review.cli import agenteval, environment
from tests.view.server import running_viewer, wait_until

from agenteval import RunStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")

AGENT = """
import time

def answer(question: str) -> str:
    if question != "q0":
        time.sleep(3600)  # the run never gets past its first trial: killed while it waits
    return "ok"
"""


def _run_args(store: Path) -> list[str]:
    return ["run", "cases.json", "--agent", "agent.py:answer", "--store", str(store)]


def _row(store: Path, cwd: Path) -> str:
    listed = agenteval(cwd, "runs", "--store", str(store))
    assert listed.returncode == 0, listed.stderr
    (row,) = [line for line in listed.stdout.splitlines() if "/3" in line]
    return row


@pytest.fixture
def killed_run(tmp_path: Path) -> Iterator[tuple[Path, str, int]]:
    """A run of three cases killed after storing the first: (its store, its id, its pid)."""
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    cases = [{"id": f"c{i}", "input": f"q{i}", "expected_output": "ok"} for i in range(3)]
    (tmp_path / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    store = tmp_path / "runs.db"
    process = subprocess.Popen(
        [sys.executable, "-m", "agenteval", *_run_args(store)],
        cwd=tmp_path,
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if store.exists():
                with RunStore(store, create=False) as runs:
                    rows = runs.list_runs()
                if rows and rows[0].trials_done >= 1:
                    break
            time.sleep(0.05)
        else:
            raise AssertionError("the run stored no trial")
        (run,) = rows
        assert " running " in _row(store, tmp_path)  # its process lives: still going
        process.send_signal(signal.SIGKILL)
        process.wait()
        yield store, run.run_id, process.pid
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_runs_and_show_say_a_killed_run_was_interrupted(
    killed_run: tuple[Path, str, int], tmp_path: Path
) -> None:
    store, run_id, pid = killed_run
    row = _row(store, tmp_path)
    assert " interrupted " in row and "1/3" in row  # before: running
    shown = agenteval(tmp_path, "show", run_id, "--store", str(store), "--json", "run.json")
    assert shown.returncode == 0, shown.stderr
    assert f"run {run_id} was interrupted (its process {pid} is gone)" in shown.stderr
    document = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert (document["status"], document["complete"]) == ("interrupted", False)


def test_the_viewer_neither_lists_nor_polls_a_killed_run_as_live(
    killed_run: tuple[Path, str, int],
) -> None:
    store, run_id, _pid = killed_run
    with running_viewer(store) as viewer:
        wait_until(lambda: not any(row["pending"] for row in viewer.get("/api/runs").json()))
        (row,) = viewer.get("/api/runs").json()
        assert (row["status"], row["live"]) == ("interrupted", False)  # before: running, live
        progress = viewer.get(f"/api/runs/{run_id}/progress").json()
        assert progress["status"] == "interrupted"


def test_a_resume_claims_an_interrupted_run(
    killed_run: tuple[Path, str, int], tmp_path: Path
) -> None:
    store, run_id, _pid = killed_run
    (tmp_path / "agent.py").write_text("def answer(question: str) -> str:\n    return 'ok'\n")
    resumed = agenteval(tmp_path, *_run_args(store), "--resume", run_id)
    assert resumed.returncode == 0, resumed.stderr
    row = _row(store, tmp_path)
    assert " finished " in row and "3/3" in row
