"""`ExecutorSettings`: where a run's trials run (`local`, `process`, `ray`) and with what.

Kept apart from the executors themselves so that settings can be checked and stored without
importing a pool library or Ray."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

__all__ = ["EXECUTORS", "READ_BY", "ExecutorSettings"]

EXECUTORS: Final = ("local", "process", "ray")
"""The executors a run may name: `local` runs trials as tasks of the driver's event loop
(the default, and the fastest); `process` in a pool of worker processes on this machine;
`ray` as tasks of a Ray cluster."""

READ_BY: Final = {
    "workers": ("process", "ray"),
    "ray_address": ("ray",),
    "worker_memory_mb": ("process",),
}
"""Each executor setting and the executors that read it."""


@dataclass(frozen=True)
class ExecutorSettings:
    """Where trials run. Only the driver (the process that planned the run) writes the store
    and scores; workers run attempts of trials and send their records back.

    `workers`: worker processes (`process`, default: the run's concurrency) or Ray actors
    (`ray`, default: the cluster's CPUs). `ray_address`: the cluster to join (`ray`, default
    `RAY_ADDRESS`, else a local Ray instance started for the run). `memory_limit_mb`: a
    `process` worker whose resident memory passes it is killed, its trial `worker_crashed`.
    """

    kind: str = "local"
    workers: int | None = None
    ray_address: str | None = None
    memory_limit_mb: int | None = None

    @property
    def is_local(self) -> bool:
        """Whether trials run in the driver's own event loop."""
        return self.kind == "local"

    def stored(self) -> dict[str, Any]:
        """What the run records of its executor (`RunInfo.settings["executor"]`); not the
        cluster's address, which may carry a token and says nothing of the results."""
        values: dict[str, Any] = {"kind": self.kind}
        if self.workers is not None:
            values["workers"] = self.workers
        if self.memory_limit_mb is not None:
            values["memory_limit_mb"] = self.memory_limit_mb
        return values
