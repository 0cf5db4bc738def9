"""Which process owns a run, as the run records it, and whether that process still lives.

A run records its owner (`RunInfo.settings["owner"]`: the process id and the host name) when
it starts or is resumed. A `--resume` reads it so as never to run a live run's trials twice
(`engine/ownership.py`); `agenteval runs`, `show`, `--json` and the viewer read it so that a run
whose process was killed is shown `interrupted`, not `running` for ever.
"""

from __future__ import annotations

import os
import socket
from typing import Any

__all__ = ["current_owner", "owner_gone", "process_alive"]


def current_owner() -> dict[str, Any]:
    """This process, as a run records its owner."""
    return {"pid": os.getpid(), "host": socket.gethostname()}


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine (someone else's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    except (OverflowError, OSError):  # not a process id at all
        return False
    return True


def owner_gone(owner: object) -> bool:
    """Whether a run's recorded owner is known to be gone: a process of this machine that no
    longer exists (killed, say). False whenever that is not certain: no owner recorded (an
    older agenteval), another machine's process, or this very process. A process id the system
    has since given to another process reads as alive: the safe side, shown as running."""
    if not isinstance(owner, dict):
        return False
    pid = owner.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid == os.getpid():
        return False
    return owner.get("host") == socket.gethostname() and not process_alive(pid)
