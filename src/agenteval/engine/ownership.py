"""Which process is running a run, so that `--resume` never runs a live run's trials twice.

Claiming a stored run is one write transaction (`RunStore.change_info`): the owner is read,
checked and replaced with the file locked for writing, so of several processes resuming the
same run at once exactly one claims it and the others refuse.
"""

from __future__ import annotations

import os
import socket

from agenteval.errors import ConfigError
from agenteval.owners import current_owner, process_alive
from agenteval.records import RunInfo, RunStatus, pytest_test_of
from agenteval.store import RunStore

__all__ = ["RunInUse", "claim", "claim_run", "running_elsewhere"]


class RunInUse(ConfigError):
    """The run to resume is being run by another live process on this machine."""


def running_elsewhere(info: RunInfo) -> bool:
    """Whether another live process on this machine is running the run (a killed run's
    process is gone, so it can be resumed)."""
    owner = info.settings.get("owner")
    return (
        info.status is RunStatus.RUNNING
        and isinstance(owner, dict)
        and owner.get("host") == socket.gethostname()
        and isinstance(owner.get("pid"), int)
        and owner["pid"] != os.getpid()
        and process_alive(owner["pid"])
    )


def refuse_pytest_resume(info: RunInfo) -> None:
    """Resuming a run a pytest session made: nothing resumes those (the next session is a new
    run), so say what does work rather than name a target `agenteval run` cannot take."""
    test = pytest_test_of(info.target)
    if test is None:
        return
    raise ConfigError(
        f"run {info.run_id} was made by a pytest session ({info.status.value}); a pytest "
        "session's run cannot be resumed",
        hint=f"`pytest {test}` runs every case again, as a new run; `agenteval show "
        f"{info.run_id}` shows what it stored",
    )


def claim(info: RunInfo) -> RunInfo:
    """The run, running and owned by this process; refused while another live process on this
    machine still runs it, and for a pytest session's run, which nothing resumes."""
    refuse_pytest_resume(info)
    if running_elsewhere(info):
        raise RunInUse(
            f"run {info.run_id} is still running (process {info.settings['owner']['pid']})",
            hint="wait for it to finish, or stop it, then resume it",
        )
    return info.model_copy(
        update={
            "status": RunStatus.RUNNING,
            "finished_at": None,
            "settings": {**info.settings, "owner": current_owner()},
        }
    )


def claim_run(store: RunStore, run_id: str) -> RunInfo:
    """Claim the stored run for this process in one transaction (see `claim`)."""
    return store.change_info(run_id, claim)
