"""Finding a run again after its project folder moved (a CI job checking the repository out at
a new path, a renamed folder), so that `--resume` can finish it.

Runs are found for `--resume` by the absolute path of their target. When that path no longer
exists, a run is taken for the target given now only if everything that makes it the same
project matches: the target's file name, the agent reference as written, the dataset's file
name, and the very cases (the store keeps the run's own). A run whose old path still exists
is never taken (it is another project's, or the same project's in another place), nor one whose
cases differ in any way: a different project's run is never resumed by mistake, and at worst a
moved run is refused as before. A run found again is re-homed (its target, its `base_dir`, and
the file references of its scorers under the old folder now point at the new one), so the next
`--resume` finds it by path.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agenteval.config import Target
from agenteval.datasets import load_cases
from agenteval.errors import AgentEvalError
from agenteval.records import RunInfo, RunStatus
from agenteval.store import RunStore

__all__ = ["Relocated", "find_relocated", "rehome", "relocated"]


@dataclass(frozen=True)
class Relocated:
    """A run started on a target that no longer exists, taken for the target given now because
    `matched` (what made it the same project, said in one line)."""

    run_id: str
    old_target: str
    matched: str

    def describe(self) -> str:
        """The one line a resume says about it."""
        return (
            f"run {self.run_id} was started on {self.old_target}, which no longer exists; "
            f"resuming it here ({self.matched})"
        )


def relocated(
    store: RunStore, info: RunInfo, target: Target, agent_ref: str | None
) -> Relocated | None:
    """`info` (a stored run) found again at `target`, if it moved there (see the module)."""
    if info.target is None or info.target == target.key or Path(info.target).exists():
        return None
    if Path(info.target).name != target.path.name or info.agent != agent_ref:
        return None
    if target.dataset is None or info.dataset is None:
        return None
    if Path(info.dataset).name != target.dataset.name:
        return None
    try:
        now = load_cases(target.dataset)
    except AgentEvalError:
        return None  # the run itself then says what is wrong with the file
    if store.get_cases(info.run_id) != now:
        return None
    return Relocated(
        info.run_id,
        info.target,
        f"the same {Path(info.target).name}, agent {agent_ref} and {len(now)} cases of "
        f"{target.dataset.name}",
    )


def find_relocated(
    store: RunStore,
    target: Target,
    agent_ref: str | None,
    *,
    skip: Callable[[RunInfo], bool] | None = None,
) -> Relocated | None:
    """The newest unfinished run that moved to `target` (see `relocated`), passing over those
    `skip` names (runs another live process is running)."""
    name = target.path.name
    for row in store.list_runs():
        if row.status is not RunStatus.RUNNING or row.target is None:
            continue
        if Path(row.target).name != name or Path(row.target).exists():
            continue  # cheap checks first: most runs are another target's
        info = store.get_info(row.run_id)
        if skip is not None and skip(info):
            continue
        found = relocated(store, info, target, agent_ref)
        if found is not None:
            return found
    return None


def rehome(store: RunStore, moved: Relocated, target: Target) -> RunInfo:
    """Point the moved run at its new place: its target, its `base_dir`, and the file
    references of its scorers that were under its old folder."""
    old_dir = str(Path(moved.old_target).parent)
    new_dir = str(target.base_dir.resolve())

    def moved_path(value: str) -> str:
        if value == old_dir or value.startswith(old_dir + os.sep):
            return new_dir + value[len(old_dir) :]
        return value

    def change(info: RunInfo) -> RunInfo:
        settings = dict(info.settings)
        if isinstance(settings.get("base_dir"), str):
            settings["base_dir"] = moved_path(settings["base_dir"])
        scorers = [moved_path(ref) if isinstance(ref, str) else ref for ref in info.scorers]
        return info.model_copy(
            update={"target": target.key, "settings": settings, "scorers": scorers}
        )

    return store.change_info(moved.run_id, change)
