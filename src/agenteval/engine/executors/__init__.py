"""Where a run's trials run: `local` (the driver's event loop), `process` (a pool of worker
processes, `executors/process.py`) or `ray` (a Ray cluster, `executors/cluster.py`).

The scheduler asks a `TrialSource` for each (case, trial) and scores and stores what comes
back; which executor stands behind it is chosen here, once per run (`open_trials`). The
`process` and `ray` executors are imported only when a run names them, so `import agenteval`
never imports a pool library or Ray."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol

from agenteval.case import EvalCase
from agenteval.engine.executors.remote import RemoteTrials, TrialRecipe
from agenteval.engine.executors.settings import EXECUTORS, ExecutorSettings
from agenteval.trace import Trial

__all__ = ["EXECUTORS", "ExecutorSettings", "TrialRecipe", "TrialSource", "open_trials"]


class TrialSource(Protocol):
    """Runs one (case, trial) and gives its record; never raises for what the agent or its
    worker did (`TrialRunner.run`), only for the run being stopped."""

    async def run(self, case: EvalCase, index: int) -> Trial: ...


@asynccontextmanager
async def open_trials(
    recipe: TrialRecipe, executor: ExecutorSettings, concurrency: int
) -> AsyncIterator[TrialSource]:
    """The run's trial source on `executor`, its workers started for the run and stopped
    (none left behind) however the run ends. `local` is the runner itself: no pool, no copy."""
    if executor.is_local:
        yield recipe.runner()
        return
    if executor.kind == "process":
        from agenteval.engine.executors.process import open_pool
    else:
        from agenteval.engine.executors.cluster import open_pool
    async with open_pool(recipe, executor, concurrency) as attempts:
        yield RemoteTrials(attempts, recipe.retry)
