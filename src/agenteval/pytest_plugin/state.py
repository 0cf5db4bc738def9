"""A pytest session's runs: the state one process keeps of them, and how the session ends
them (`finished`, or `partial` when some of their cases never ran or were not stored)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agenteval.records import RunInfo, RunStatus

__all__ = ["Ended", "Session", "end_runs"]


@dataclass(frozen=True)
class Ended:
    """A run as the session left it, for the terminal summary: how many of its cases the
    session evaluated, how many trials of those it lacks, and its status (`finished`, or
    `partial` when some never ran or were not stored)."""

    run_id: str
    test: str
    cases: int
    ran: int
    trials: int
    unstored: int
    """Trials of the evaluated cases with no stored result (the store lost them)."""
    status: RunStatus


@dataclass
class Session:
    """The plugin's state for one pytest session (one process)."""

    token: str
    store: Path
    created: set[str] = field(default_factory=set)
    runs: dict[str, set[str]] = field(default_factory=dict)
    """The runs the session wrote to, each with the cases it evaluated to the end: in this
    process, or (the controller under xdist) as the workers' reports and outputs name them."""

    def ran(self, run_id: str, case_id: str | None = None) -> None:
        """Note the run, and a case of it evaluated to the end."""
        cases = self.runs.setdefault(run_id, set())
        if case_id is not None:
            cases.add(case_id)

    ended: list[Ended] = field(default_factory=list)

    def run_id(self, test: str) -> str:
        """The run of one decorated test in this session: the same in every xdist worker, and
        shaped like any run id (it sorts by time)."""
        stamp = self.token.split("/", 1)[0]
        digest = hashlib.sha256(f"{self.token}|{test}".encode()).hexdigest()[:4]
        return f"{stamp}-{digest}"


def end_runs(state: Session) -> list[Ended]:
    """End each run the session wrote to: `finished` when every (case, trial) is stored,
    else `partial` (the session ran only some cases: `-k`, `--lf`, `-x`, Ctrl-C, a crashed
    worker). A pytest run is never resumed (the next session starts a new one), so leaving it
    `running` would say forever that something is still coming."""
    if not state.runs:
        return []
    from agenteval.errors import StoreError
    from agenteval.records import pytest_test_of
    from agenteval.store import RunStore

    ended: list[Ended] = []
    try:
        store = RunStore(state.store, create=False)
    except StoreError:
        return []  # the store went away: the tests that wrote to it said so already
    with store:
        for run_id in sorted(state.runs):
            try:
                info = store.change_info(run_id, lambda info: _ended_info(store, info))
                missing = store.missing_trials(run_id, examples=0).count
                cases = store.count_cases(run_id)
            except StoreError:
                # Never stored (its first case failed before the run was made), or the store
                # is damaged (its tests said so): pytest's own summary must still print.
                continue
            test = pytest_test_of(info.target) or run_id
            ran = len(state.runs[run_id])
            # Trials missing beyond the cases never run: the store lost them (at most: a
            # stopped case may have stored some of its trials).
            unstored = max(missing - (cases - ran) * info.trials, 0)
            ended.append(Ended(run_id, test, cases, ran, info.trials, unstored, info.status))
    return ended


def _ended_info(store: Any, info: RunInfo) -> RunInfo:
    """The run's settings as the session ends it (see `end_runs`); a run already finished,
    or that another process resumed or ended, is left as it is. Called inside the store's
    write transaction, so the count of stored trials is the one the status is stored with."""
    from agenteval.agents.tools import known_tools
    from agenteval.records import RunStatus
    from agenteval.trace import utc_now

    if info.status is not RunStatus.RUNNING or info.settings.get("pytest") is None:
        return info
    complete = store.missing_trials(info.run_id, examples=0).count == 0
    return info.model_copy(
        update={
            "status": RunStatus.FINISHED if complete else RunStatus.PARTIAL,
            "finished_at": utc_now(),
            "tools": {**info.tools, **known_tools()},
        }
    )
