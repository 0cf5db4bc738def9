"""The benchmark's fake agents as module-level functions, for the executors' workers.

A `process` or `ray` worker gets the agent pickled by reference (its module and name), so the
agent must be importable there: this module, found through the `PYTHONPATH` that
`bench/executors.py` gives every process a run starts. A closure (as `agenteval_workload.py`
made before executors existed) would not pickle. Stdlib only: a worker imports it on its first
trial, and nothing here should cost it more than the agent itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

ANSWER = "Paris"
"""What every agent answers and every case expects (as `peers/protocol.py`)."""


async def paris_0ms(_input: str) -> str:
    """W1, W3: no await at all, so a trial's time is all the harness's."""
    return ANSWER


async def paris_100ms(_input: str) -> str:
    """W2: 100 ms of waiting, as a model call would be, with no CPU."""
    await asyncio.sleep(0.1)
    return ANSWER


async def paris_500ms(_input: str) -> str:
    """The Ray scale test: 500 ms of waiting, so that throughput is set by the worker slots."""
    await asyncio.sleep(0.5)
    return ANSWER


AGENTS: dict[float, Callable[[str], Awaitable[str]]] = {
    0.0: paris_0ms,
    100.0: paris_100ms,
    500.0: paris_500ms,
}
"""The agent for each latency (ms) the workloads use."""
