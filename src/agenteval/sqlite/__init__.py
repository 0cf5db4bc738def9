"""The SQLite files agenteval keeps (the run store, the judge cache), opened one way.

`Database` opens a file of a `FileKind`: refuses a folder, a file that is not SQLite, another
program's database or a newer agenteval's, with errors naming the file and the fix; sets WAL;
lays the file out; waits on a busy file; and, when asked, checks it for damage once before its
first write (`damage.py`). It imports only the model's errors: the store and the judge's cache
are built on it, never the other way round.
"""

from __future__ import annotations

from agenteval.sqlite.database import (
    BUSY_TIMEOUT_S,
    Database,
    FileKind,
    FileWording,
    identify,
    immediate,
    time_text,
)

__all__ = [
    "BUSY_TIMEOUT_S",
    "Database",
    "FileKind",
    "FileWording",
    "identify",
    "immediate",
    "time_text",
]
