"""An agent that answers with objects of its own in its trial's metadata, as agents do (a lock,
a generator, a response object holding a client): each is stored as its text, as `local`
stores it, whatever executor ran the trial. `wrong` answers wrongly with such metadata: its
failure must be scored, never left out as a lost worker."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["run"]


def _rows() -> Iterator[int]:
    yield 1


async def run(question: str) -> Any:
    """Answer `question` (upper-cased; `wrong`: a wrong answer) with unpicklable metadata."""
    answer = "nope" if question == "wrong" else question.upper()
    if question == "plain":
        return answer
    return {"output": answer, "metadata": {"lock": threading.Lock(), "rows": _rows()}}
