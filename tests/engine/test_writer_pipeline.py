"""The writer takes and encodes batches while earlier ones are written (and while the run and
its cases are stored): a store that cannot be written still stops the run at once, as when the
writer waited for each write, not batches later; and a run whose writes are slow still stores
every result, in order, each reported once."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval.case import EvalCase
from agenteval.errors import StoreError
from agenteval.records import TrialResult
from agenteval.store import RunStore

calls: list[str] = []


async def slow_agent(prompt: str) -> str:
    calls.append(prompt)
    await asyncio.sleep(0.2)
    return prompt


@pytest.mark.parametrize("failing", ["create_run", "write_results"])
def test_a_failing_write_stops_the_run_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    def refuse(self: RunStore, *args: Any) -> None:
        raise StoreError("database or disk is full", file=tmp_path / "runs.db")

    monkeypatch.setattr(RunStore, failing, refuse)
    calls.clear()
    cases = [EvalCase(id=f"c{i}", input=f"q{i}") for i in range(20)]
    with pytest.raises(StoreError, match="disk is full"):
        agenteval.evaluate(slow_agent, cases, concurrency=1, store=tmp_path / "runs.db")
    # One trial at a time, 200 ms each: the failure (at once, or at the first result's write)
    # stops the run within the trial it fails in, not after the writer's batches ahead.
    assert len(calls) <= 2, calls


def test_slow_writes_store_and_report_every_result_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_results = RunStore.write_results
    batches: list[int] = []

    def slow_write(self: RunStore, run_id: str, encoded: Any) -> None:
        time.sleep(0.01)
        batches.append(len(encoded.keys))
        write_results(self, run_id, encoded)

    monkeypatch.setattr(RunStore, "write_results", slow_write)
    reported: list[TrialResult] = []
    cases = [EvalCase(id=f"c{i}", input=f"q{i}", expected_output=f"q{i}") for i in range(300)]
    run = agenteval.evaluate(
        lambda prompt: prompt,
        cases,
        ["exact_match"],
        trials=2,
        concurrency=20,
        store=tmp_path / "runs.db",
        on_result=reported.append,
    )
    assert len(batches) > 1 and sum(batches) == 600
    assert len(reported) == 600 == len({r.key for r in reported})
    with RunStore(tmp_path / "runs.db") as store:
        stored = [(r.key, r.scores["exact_match"].passed) for r in store.iter_results(run.run_id)]
        conn_rows = store.count_results(run.run_id)
    assert conn_rows == 600
    assert stored == sorted(stored, key=lambda item: (int(item[0][0][1:]), item[0][1]))
    assert all(passed for _, passed in stored)
