"""An agent that does, per question, what a trial's worker process must survive: it answers
`ok` with the pid of the process it ran in (so a test can check that process is gone later),
or exits, segfaults, blocks its event loop, swallows its cancellation, or leaks memory."""

from __future__ import annotations

import asyncio
import ctypes
import os
import time

__all__ = ["run"]

_LEAKED: list[bytes] = []


async def run(question: str) -> str:
    """Do what `question` names (see the module)."""
    if question == "exit":
        os._exit(1)
    if question == "segfault":
        ctypes.string_at(0)
    if question == "block":
        time.sleep(3600)  # noqa: ASYNC251 - the point: its event loop blocked, no deadline fires
    if question == "swallow":
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue  # the deadline's cancellation, ignored
    if question == "leak":
        for _ in range(24):  # 1.5 GB at most: a worker nobody stops says so, the machine lives
            _LEAKED.append(os.urandom(1) * (64 * 1024 * 1024))  # 64 MB a step, each page touched
            await asyncio.sleep(0.01)
        return "leaked 1.5 GB unstopped"
    await asyncio.sleep(0.01)
    return f"ok {os.getpid()}"
