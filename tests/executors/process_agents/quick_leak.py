"""An agent whose `leak` trials each keep 12 MB (in a few milliseconds: done before a
watchdog looking every 50 ms would see it, most of the time) and return at once; any other
question takes a tenth of a second and keeps nothing."""

from __future__ import annotations

import asyncio

__all__ = ["run"]

_KEPT: list[bytes] = []


async def run(question: str) -> str:
    """Keep 12 MB for `leak` (every page written), else answer after 0.15 s."""
    if question == "leak":
        _KEPT.append(b"x" * (12 * 1024 * 1024))
        return f"kept {12 * len(_KEPT)} MB"
    await asyncio.sleep(0.15)
    return "small"
