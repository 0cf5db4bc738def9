"""One SQLite file of agenteval's own (the run store, the judge cache): opened, checked, guarded.

Opening looks at the file before SQLite does, so a folder or a file that is not a database is
refused without being touched (SQLite would otherwise write a WAL beside it). The file is then
checked to be of the kind asked for (`PRAGMA application_id`) and not from a newer agenteval
(`PRAGMA user_version`), set to WAL, and laid out (`FileKind.migrate`) when new or older. Every
SQLite error becomes a `StoreError` naming the file, with a hint fitting its kind
(`FileWording`). A file opened with `damaged` is checked for damage before its first write
(`damage.py`). A file opened `read_only` (the viewer's) goes through the same checks but is
never created, laid out, switched to WAL or written: SQLite opens it `mode=ro`.

One connection per `Database`, shared by threads under one lock; transactions are begun and
ended explicitly (`write`), and a busy file is waited on (`BUSY_TIMEOUT_S`).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agenteval.errors import StoreError
from agenteval.sqlite.damage import Stamp, file_stamp, known_undamaged, quick_check, remember

__all__ = [
    "BUSY_TIMEOUT_S",
    "Database",
    "FileKind",
    "FileWording",
    "identify",
    "immediate",
    "time_text",
]

BUSY_TIMEOUT_S = 30.0
"""How long a statement waits for another process holding the file, and opening for another
process setting the file up, before giving up."""

_SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass(frozen=True, slots=True)
class FileWording:
    """The hints a kind of file gives in its errors, each telling the user what to do."""

    folder: str
    """The path is a folder."""
    not_sqlite: str
    """The file is not a SQLite database."""
    missing: str
    """No file, and opening may not create one."""
    cannot_open: str
    """The operating system refused the file."""
    foreign: str
    """A SQLite database of another kind or program."""
    newer: str
    """Written by a newer agenteval."""
    busy: str
    """Another process holds the file."""
    corrupt: str
    """SQLite found the file corrupt."""
    permissions: str
    """The file or its folder cannot be written or opened."""
    full: str
    """The disk is full."""
    other: str
    """Any other SQLite error."""


@dataclass(frozen=True, slots=True)
class FileKind:
    """A kind of SQLite file agenteval keeps: its name in messages, its mark, its layout."""

    name: str
    """What the file is called in messages: "run store", "judge cache"."""
    schema_word: str
    """The word before "schema" when the file is newer: "store", "cache"."""
    application_id: int
    """`PRAGMA application_id`: marks the file as this kind, so no other is written to."""
    schema_version: int
    """`PRAGMA user_version`: the layout this version writes; a newer one is refused."""
    migrate: Callable[[sqlite3.Connection, int], None]
    """Bring a file from a layout version up to `schema_version`, inside a transaction."""
    wording: FileWording


def identify(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """The file's application id, schema version and number of tables."""
    # One statement, so one snapshot: read apart, another process setting the file up in
    # between could show its tables but not yet its application id (a "foreign" file).
    app_id, version, tables = conn.execute(
        "SELECT (SELECT application_id FROM pragma_application_id),"
        " (SELECT user_version FROM pragma_user_version),"
        " (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%')"
    ).fetchone()
    return int(app_id), int(version), int(tables)


def time_text(moment: datetime) -> str:
    """A time as stored: one fixed UTC form, so stored times sort as text (naive is UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction: committed when the block ends, rolled back when it raises.

    IMMEDIATE takes the write lock up front, so two writing processes wait for each other
    (busy timeout) instead of failing halfway through a transaction.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


_OPEN_FILES: dict[tuple[int, int], int] = {}
"""The files (device, inode) this process has open through a `Database`, and how many times.
Opening one of them again must not open and close the file outside SQLite: on POSIX, closing
any descriptor of a file drops every lock the process holds on it, and a writer in another
process that then finds no lock closes as the last user, folds the WAL into the file and
deletes it under this process's readers (which then read a stale, later a torn, file)."""
_OPEN_LOCK = threading.Lock()


def _file_key(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


class Database:
    """One open SQLite file of a `FileKind` (or ":memory:"), its connection and its lock.

    Opening creates the file and its folder when missing, unless `create=False`; a file that
    is not of this kind, is corrupt, or was written by a newer agenteval raises `StoreError`
    and is left as it was.

    Given `damaged`, the file is checked for damage (`PRAGMA quick_check`, once per process
    while nothing else writes it) before its first write, and `damaged(problems)` is the error
    raised when the check fails: nothing is written to a damaged file.

    With `read_only`, the file must exist and be of this kind at this layout: it is opened
    through SQLite's `mode=ro`, so nothing (not its journal mode, not a migration) is ever
    written to it, and `write` raises. A file another process is writing (WAL) is read as of
    each statement's snapshot; SQLite itself makes the `-wal` and `-shm` files beside it when
    they are missing, as any reader of a WAL file does, but never changes the file itself.
    """

    def __init__(
        self,
        path: str | Path,
        kind: FileKind,
        *,
        create: bool = True,
        damaged: Callable[[list[str]], StoreError] | None = None,
        read_only: bool = False,
    ) -> None:
        self._memory = str(path) == ":memory:"
        self._read_only = read_only and not self._memory
        self._path = Path(path)
        self._kind = kind
        self._damaged = damaged
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        # The file's stamp when it was found undamaged, before its first write (None: not yet
        # written, in memory, or a kind not checked).
        self._checked_stamp: tuple[tuple[int, int], Stamp] | None = None
        self._checked = self._memory or damaged is None
        self._key = None if self._memory else _file_key(self._path)
        with _OPEN_LOCK:
            # Open here already: checked then, and looking again would drop its locks.
            known = self._key is not None and _OPEN_FILES.get(self._key, 0) > 0
        if not self._memory and not known:
            self._check_file(create and not self._read_only)
        # Read-only, a file with no WAL beside it in a folder that cannot take one (a
        # read-only share or mount) is opened immutable: SQLite cannot make its side files
        # there ("unable to open database file"), and no writer can be changing it (a writer
        # needs its WAL in that folder).
        self._immutable = False
        if self._read_only:
            if not known:
                self._check_unopened()
            self._immutable = not Path(f"{self._path}-wal").exists() and not os.access(
                self._path.absolute().parent, os.W_OK
            )
        try:
            self._conn = sqlite3.connect(
                self._address(immutable=self._immutable),
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,  # transactions are begun and ended explicitly
                check_same_thread=False,  # one connection, guarded by self._lock
                uri=self._read_only,
            )
        except sqlite3.Error as exc:
            raise self.error(exc) from None
        try:
            self._prepare_when_free()
        except BaseException:
            self._conn.close()
            self._conn = None
            raise
        if not self._memory:
            self._key = _file_key(self._path)  # a file created by this opening has one now
            if self._key is not None:
                with _OPEN_LOCK:
                    _OPEN_FILES[self._key] = _OPEN_FILES.get(self._key, 0) + 1

    @property
    def path(self) -> Path:
        """The file."""
        return self._path

    @property
    def connection(self) -> sqlite3.Connection | None:
        """The connection, None once closed; use it under `use` or `write`."""
        return self._conn

    @property
    def memory(self) -> bool:
        """Whether the database lives in memory only."""
        return self._memory

    @property
    def read_only(self) -> bool:
        """Whether the file was opened read-only (`write` raises)."""
        return self._read_only

    def close(self) -> None:
        """Close the file. Everything written so far is already committed."""
        with self._lock:
            if self._conn is not None:
                # Closing the last connection folds the WAL into the file, which changes its
                # stamp; when nothing but this connection's own writes touched the file since
                # it was checked, the file as it is after closing is known to be undamaged too.
                unchanged = (
                    self._checked_stamp is not None
                    and file_stamp(self._path) == self._checked_stamp
                )
                self._conn.close()
                self._conn = None
                if self._key is not None:
                    with _OPEN_LOCK:
                        left = _OPEN_FILES.get(self._key, 0) - 1
                        if left > 0:
                            _OPEN_FILES[self._key] = left
                        else:
                            _OPEN_FILES.pop(self._key, None)
                if unchanged:
                    remember(self._path)

    # -- using ------------------------------------------------------------------------------

    @contextmanager
    def use(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock; a SQLite error in the block becomes a `StoreError`.

        Statements outside `write` commit one by one.
        """
        with self._lock:
            if self._conn is None:
                raise StoreError(f"the {self._kind.name} is closed", file=self._path)
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise self.error(exc) from None

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """`use` inside one write transaction (`immediate`); the first write checks the file
        for damage when opened with `damaged`. A read-only file raises `StoreError`."""
        if self._read_only:
            raise StoreError(
                f"the {self._kind.name} is open read-only; nothing can be written to it",
                file=self._path,
            )
        with self.use() as conn:
            if not self._checked:
                self._check_undamaged(conn)
            with immediate(conn):
                yield conn

    def check_undamaged(self) -> None:
        """Raise `StoreError` if the file is damaged; the first write checks anyway, so a
        caller only calls this to refuse sooner."""
        with self._lock:
            if self._checked:
                return
            with self.use() as conn:
                self._check_undamaged(conn)

    def error(self, exc: sqlite3.Error) -> StoreError:
        """SQLite's error as a `StoreError` naming the file, with a hint for what went wrong."""
        name, wording = self._kind.name, self._kind.wording
        text = str(exc)
        lowered = text.lower()
        if "locked" in lowered or "busy" in lowered:
            hint = wording.busy
        elif "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
            hint = wording.corrupt
            text = f"the {name} is corrupt ({text})"
        elif "readonly" in lowered or "read-only" in lowered or "unable to open" in lowered:
            hint = wording.permissions
        elif "full" in lowered:
            hint = wording.full
        else:
            hint = wording.other
        return StoreError(f"{name} error: {text}", file=self._path, hint=hint)

    # -- opening ----------------------------------------------------------------------------

    def _address(self, *, immutable: bool = False) -> str:
        """What SQLite opens: the path, or read-only a URI asking `mode=ro`, the path quoted
        so that no `?` or `#` in a file name is read as part of the URI."""
        if self._memory:
            return ":memory:"
        if not self._read_only:
            return str(self._path)
        quoted = urllib.parse.quote(str(self._path.absolute()), safe="/")
        return f"file:{quoted}?mode=ro" + ("&immutable=1" if immutable else "")

    def _check_unopened(self) -> None:
        """Read-only, check the file is of this kind before opening it for reading: a reader
        of a WAL file makes its `-wal` and `-shm` files when missing, which a file refused
        must not get. With no `-wal` beside it, the file holds everything, so it is checked
        as `immutable` (no side files, no locks); the real connection checks again."""
        for attempt in range(2):
            if Path(f"{self._path}-wal").exists():
                return  # a writer has it open (or left its WAL): the side files are there
            try:
                with closing(sqlite3.connect(self._address(immutable=True), uri=True)) as conn:
                    app_id, version, tables = identify(conn)
                break
            except sqlite3.Error as exc:
                # Immutable, a writer changing the file under the read can tear it: a
                # damaged file fails twice, a torn read not.
                if attempt:
                    raise self.error(exc) from None
                time.sleep(0.05)
        self._check_identity(app_id, version, tables)
        self._check_readable(app_id, version)

    def _check_file(self, create: bool) -> None:
        # Look at the file before SQLite does: a file that is not a database is refused
        # without being touched (SQLite would otherwise try to write a WAL beside it).
        path, name, wording = self._path, self._kind.name, self._kind.wording
        try:
            if path.exists():
                if path.is_dir():
                    raise StoreError(
                        f"is a folder, not a {name} file", file=path, hint=wording.folder
                    )
                with path.open("rb") as fh:
                    header = fh.read(len(_SQLITE_HEADER))
                if header and header != _SQLITE_HEADER:
                    raise StoreError(
                        f"is not an agenteval {name} (not a SQLite database)",
                        file=path,
                        hint=wording.not_sqlite,
                    )
            elif not create:
                raise StoreError(f"no {name} here", file=path, hint=wording.missing)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot open the {name}: {exc.strerror or exc}",
                file=path,
                hint=wording.cannot_open,
            ) from None

    def _prepare_when_free(self) -> None:
        # Processes opening a new file at the same moment (pytest-xdist workers, say) race to
        # switch it to WAL, which SQLite refuses while another holds the file: wait a little.
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                self._prepare()
                return
            except StoreError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _prepare(self) -> None:
        kind = self._kind
        with self.use() as conn:
            app_id, version, tables = identify(conn)
            self._check_identity(app_id, version, tables)
            if self._read_only:
                self._check_readable(app_id, version)
                return
            if not self._memory:
                # WAL: readers in other processes never block the writer nor see half a
                # transaction. NORMAL sync with WAL keeps every commit across a killed process.
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            if version == kind.schema_version and app_id == kind.application_id:
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                # Another process may have set the file up between the look and the lock.
                app_id, version, tables = identify(conn)
                self._check_identity(app_id, version, tables)
                kind.migrate(conn, version)
                conn.execute(f"PRAGMA application_id = {kind.application_id}")
                conn.execute(f"PRAGMA user_version = {kind.schema_version}")
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _check_identity(self, app_id: int, version: int, tables: int) -> None:
        kind = self._kind
        if app_id not in (0, kind.application_id) or (app_id == 0 and tables > 0):
            raise StoreError(
                f"is a SQLite database but not an agenteval {kind.name}",
                file=self._path,
                hint=kind.wording.foreign,
            )
        if version > kind.schema_version:
            raise StoreError(
                f"the {kind.name} was written by a newer agenteval ({kind.schema_word} schema "
                f"{version}; this version reads up to {kind.schema_version})",
                file=self._path,
                hint=kind.wording.newer,
            )

    def _check_readable(self, app_id: int, version: int) -> None:
        """A read-only file cannot be laid out: it must be of this kind at this layout."""
        kind = self._kind
        if app_id == kind.application_id and version == kind.schema_version:
            return
        if app_id == 0 and version == 0:  # an empty SQLite file: nothing stored yet
            raise StoreError(
                f"is an empty file, not yet an agenteval {kind.name}",
                file=self._path,
                hint=kind.wording.missing,
            )
        raise StoreError(
            f"the {kind.name} has an older layout ({kind.schema_word} schema {version}; this "
            f"version reads {kind.schema_version}), which only opening it for writing upgrades",
            file=self._path,
            hint=kind.wording.other,
        )

    def _check_undamaged(self, conn: sqlite3.Connection) -> None:
        """Refuse to write to a damaged file, before the first write (see `damage.py`). Marked
        done only once passed: a file refused is checked (and refused) again at the next write."""
        stamp = file_stamp(self._path)
        if known_undamaged(self._path):
            self._checked, self._checked_stamp = True, stamp
            return
        problems = quick_check(conn)
        if problems and self._damaged is not None:
            raise self._damaged(problems)
        self._checked, self._checked_stamp = True, stamp
        remember(self._path, stamp)
