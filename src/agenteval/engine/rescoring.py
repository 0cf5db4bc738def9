"""Scoring stored trials again, without the agent: a bounded pool of scorers over the store,
with the new scores written back in batches."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from agenteval.engine.scheduler import score_trial
from agenteval.run import TrialResult
from agenteval.store import RunStore

__all__ = ["score_stored"]

_WRITE_BATCH = 200


async def score_stored(
    store: RunStore,
    run_id: str,
    scorers: Sequence[Any],
    *,
    concurrency: int,
    merge: bool,
    on_result: Callable[[TrialResult], None] | None = None,
) -> None:
    """Score every stored trial of the run with `scorers`, `concurrency` trials at a time.

    With `merge`, the new scores are added to (or replace, by name) the stored ones; without,
    they replace the trial's whole score set.
    """
    results = store.iter_results(run_id)
    scored: asyncio.Queue[TrialResult | None] = asyncio.Queue(maxsize=4 * concurrency)

    async def work() -> None:
        for result in results:
            scores = await score_trial(scorers, result.case, result.trial)
            await scored.put(TrialResult(case=result.case, trial=result.trial, scores=scores))

    async def produce() -> None:
        async with asyncio.TaskGroup() as workers:
            for _ in range(concurrency):
                workers.create_task(work())
        await scored.put(None)

    async def write() -> None:
        batch: list[TrialResult] = []
        while (item := await scored.get()) is not None:
            batch.append(item)
            if on_result is not None:
                on_result(item)
            if len(batch) >= _WRITE_BATCH or scored.empty():
                await _flush(batch)
                batch = []
        await _flush(batch)

    async def _flush(batch: list[TrialResult]) -> None:
        if batch:
            items = [(r.case.id, r.trial.trial, r.scores) for r in batch]
            await asyncio.to_thread(store.replace_scores_many, run_id, items, merge=merge)

    async with asyncio.TaskGroup() as group:
        group.create_task(produce())
        group.create_task(write())
