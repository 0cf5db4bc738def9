"""Whether a SQLite file is damaged: the run store checks before anything is written to it.

`PRAGMA quick_check` reads every page and checks the structure SQLite writes through
(b-trees, cells, record headers, free pages): O(file), about 250 ms for a 100,000-trial store
(275 MB) in the page cache (`bench/store_open.py`). So that a process opening the same store
many times (the pytest plugin opens it per test case) pays once, the files this process found
undamaged are remembered with their stamp: size, modification and change times. Every write
to a file moves its change time, which no program can set back, so a file with the same stamp
holds the same bytes and need not be checked again.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

__all__ = ["Stamp", "damage_summary", "file_stamp", "known_undamaged", "quick_check", "remember"]

Stamp = tuple[int, int, int]
"""(size, modification time in ns, change time in ns)."""

_SHOWN = 3

_UNDAMAGED: dict[tuple[int, int], Stamp] = {}
"""The files this process found undamaged, by (device, inode), with their stamp then."""
_LOCK = threading.Lock()


def file_stamp(path: Path) -> tuple[tuple[int, int], Stamp] | None:
    """The file's identity (device, inode) and stamp; None if it cannot be read."""
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino), (found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def known_undamaged(path: Path) -> bool:
    """Whether this process found the file undamaged and it is unchanged since."""
    found = file_stamp(path)
    if found is None:
        return False
    with _LOCK:
        return _UNDAMAGED.get(found[0]) == found[1]


def remember(path: Path, stamp: tuple[tuple[int, int], Stamp] | None = None) -> None:
    """Remember the file as undamaged, as it is now (or as it was at `stamp`)."""
    found = stamp or file_stamp(path)
    if found is not None:
        with _LOCK:
            _UNDAMAGED[found[0]] = found[1]


def quick_check(conn: sqlite3.Connection) -> list[str]:
    """What `PRAGMA quick_check` finds wrong with the file (the first 50 problems; empty when
    it is undamaged). A file too damaged to check gives SQLite's error as its one problem."""
    try:
        rows = [str(row[0]) for row in conn.execute("PRAGMA quick_check").fetchmany(50)]
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    return [] if rows == ["ok"] else rows


def damage_summary(problems: list[str]) -> str:
    """The first few problems on one line (SQLite reports some as one multi-line row)."""
    lines = [
        line.strip()
        for problem in problems
        for line in problem.splitlines()
        if line.strip() and not line.startswith("***")
    ]
    shown = "; ".join(lines[:_SHOWN])
    if len(lines) > _SHOWN:
        shown += f"; and {len(lines) - _SHOWN} more"
    return shown
