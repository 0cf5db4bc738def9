"""A run stopped while a batch of results is being written: the write, in its thread, still
lands, and every result it stored reaches `on_result` (the OTLP score export, the CLI's
progress): a stored trial is never one the run did not report."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

import agenteval
from agenteval.case import EvalCase
from agenteval.records import TrialResult
from agenteval.store import RunStore


async def test_results_stored_by_a_write_the_stop_interrupted_are_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = threading.Event()
    original = RunStore.write_results

    def slow_write(self: RunStore, run_id: str, encoded: object) -> None:
        original(self, run_id, encoded)  # type: ignore[arg-type]
        written.set()
        time.sleep(0.3)  # the stop arrives here: the batch is stored, the thread not back yet

    monkeypatch.setattr(RunStore, "write_results", slow_write)
    reported: list[TrialResult] = []
    store = tmp_path / "runs.db"
    run = asyncio.create_task(
        agenteval.evaluate_async(
            lambda prompt: prompt.upper(),
            [EvalCase(id=f"c{i}", input=f"q{i}") for i in range(40)],
            concurrency=1,
            store=store,
            on_result=reported.append,
        )
    )
    await asyncio.to_thread(written.wait)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    with RunStore(store) as runs:
        run_id = runs.list_runs()[0].run_id
        stored = {(r.trial.case_id, r.trial.trial) for r in runs.iter_results(run_id)}
    assert stored
    assert stored <= {(r.trial.case_id, r.trial.trial) for r in reported}
