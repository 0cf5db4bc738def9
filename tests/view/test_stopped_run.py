"""A stopped run (every trial stored, never marked finished: its process was killed after its
last trial) is not live: the viewer neither lists it as live nor has its page poll. Before, the
runs list and the run page polled it every second for ever, its duration "running"."""

from __future__ import annotations

from pathlib import Path

from tests.view.server import running_viewer, wait_until

from agenteval import EvalCase, RunStore, evaluate
from agenteval.records import RunStatus


def _ok(question: str) -> str:
    return "ok"


def test_a_stopped_run_is_neither_listed_live_nor_polled(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    cases = [EvalCase(id=f"c{i}", input=f"q{i}", expected_output="ok") for i in range(3)]
    run = evaluate(_ok, cases, store=path)
    with RunStore(path) as opened:
        opened.set_status(run.run_id, RunStatus.RUNNING)
    with running_viewer(path) as running:
        wait_until(lambda: not any(row["pending"] for row in running.get("/api/runs").json()))
        (row,) = running.get("/api/runs").json()
        assert row["status"] == "stopped"
        assert row["live"] is False  # before: True, so the list kept polling
        assert row["duration"] != "running"
        progress = running.get(f"/api/runs/{run.run_id}/progress").json()
        assert progress["status"] == "stopped"  # before: "running", so the page kept polling
        assert 'data-poll="/api/runs"' not in running.get("/").text
