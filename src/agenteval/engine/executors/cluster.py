"""The `cluster` executor: trials run in a Ray cluster. (Being built: issue 19.)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agenteval.engine.executors.remote import Attempts, TrialRecipe
from agenteval.engine.executors.settings import ExecutorSettings
from agenteval.errors import ConfigError

__all__ = ["open_pool"]


@asynccontextmanager
async def open_pool(
    recipe: TrialRecipe, executor: ExecutorSettings, concurrency: int
) -> AsyncIterator[Attempts]:
    """The run's workers, started for it and stopped however it ends."""
    del recipe, concurrency
    raise ConfigError(f"the {executor.kind} executor is not available yet")
    yield
