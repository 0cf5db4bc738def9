"""Which process is running a run, so that `--resume` never runs a live run's trials twice."""

from __future__ import annotations

import os
import socket
from typing import Any

from agenteval.errors import ConfigError
from agenteval.run import RunInfo, RunStatus

__all__ = ["claim", "current_owner"]


def current_owner() -> dict[str, Any]:
    """This process, as a run records its owner."""
    return {"pid": os.getpid(), "host": socket.gethostname()}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def claim(info: RunInfo) -> RunInfo:
    """The run, owned by this process; refused while another live process on this machine
    still runs it (a killed run's process is gone, so it can be resumed)."""
    owner = info.settings.get("owner")
    if (
        info.status is RunStatus.RUNNING
        and isinstance(owner, dict)
        and owner.get("host") == socket.gethostname()
        and isinstance(owner.get("pid"), int)
        and owner["pid"] != os.getpid()
        and _alive(owner["pid"])
    ):
        raise ConfigError(
            f"run {info.run_id} is still running (process {owner['pid']})",
            hint="wait for it to finish, or stop it, then resume it",
        )
    return info.model_copy(update={"settings": {**info.settings, "owner": current_owner()}})
