"""The run store's open file and what each part of the store shares: opening it (through the
SQLite helper, `agenteval.sqlite`), reading and writing under its lock, redacting and parsing
records, and the errors for a damaged file or an unknown run.
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Self, TypeVar

from pydantic import BaseModel, ValidationError

from agenteval.errors import StoreError
from agenteval.records import RunInfo, RunStatus
from agenteval.redaction import Redactor
from agenteval.sqlite import Database
from agenteval.sqlite.damage import damage_summary
from agenteval.store.encoding import read_cut, redacted, stored_time, to_json
from agenteval.store.layout import DEFAULT_STORE_PATH, OTHER_FILE_HINT, RUNS_HINT, STORE_FILE
from agenteval.store.progress import summary_rows

__all__ = ["StoreFile", "run_exists"]

_M = TypeVar("_M", bound=BaseModel)


class StoreFile:
    """The open run store file; `RunStore` is built on it (see there)."""

    def __init__(
        self,
        path: str | Path = DEFAULT_STORE_PATH,
        *,
        create: bool = True,
        redactor: Redactor | None = None,
        read_only: bool = False,
    ) -> None:
        self._path = Path(path)
        # Secrets never reach the store: every record is redacted on its way in (API keys
        # from the environment, and well-known key shapes wherever they appear).
        self._redactor = redactor if redactor is not None else Redactor.from_environment()
        self._known_cases: dict[str, set[str]] = {}
        # Opening checks the file; its first write checks it for damage (`sqlite.damage`).
        # Read-only (the viewer), it is never created, laid out or written: writes raise.
        self._db = Database(
            path, STORE_FILE, create=create, damaged=self._damaged, read_only=read_only
        )

    @property
    def path(self) -> Path:
        """The store's file."""
        return self._path

    @property
    def redactor(self) -> Redactor:
        """What redacts every record on its way in (a rescore's workers redact with it)."""
        return self._redactor

    @property
    def read_only(self) -> bool:
        """Whether the store was opened read-only (every write raises `StoreError`)."""
        return self._db.read_only

    def close(self) -> None:
        """Close the file. Everything written so far is already committed."""
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({str(self._path)!r})"

    @property
    def _conn(self) -> sqlite3.Connection | None:
        """The store's connection, None once closed."""
        return self._db.connection

    def check_undamaged(self) -> None:
        """Raise `StoreError` if the file is damaged, saying what can still be read; the first
        write checks anyway, so a caller only calls this to refuse sooner (before a run
        starts, say)."""
        self._db.check_undamaged()

    # -- shared by the parts of the store ---------------------------------------------------

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        """The connection under the store's lock; SQLite errors become `StoreError`."""
        return self._db.use()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        """`_read` inside one write transaction: all or nothing."""
        return self._db.write()

    def _json(self, model: BaseModel) -> str:
        return self._redactor.redact_text(to_json(model))

    def _redacted(self, texts: list[str]) -> list[str]:
        """The JSON `texts` with secrets redacted (`encoding.redacted`)."""
        return redacted(self._redactor, texts)

    def _damaged(self, problems: list[str]) -> StoreError:
        """The error for a damaged file: what SQLite found, and what can still be read."""
        try:
            with self._read() as conn:
                runs = len(summary_rows(conn, None))
            readable = (
                f"`agenteval runs` still lists its {runs} runs, and "
                "`agenteval show RUN_ID --json FILE` reads any run whose pages are intact"
            )
        except StoreError:
            readable = (
                "its list of runs is damaged too; `agenteval show RUN_ID --json FILE` may still "
                "read a run whose pages are intact"
            )
        return StoreError(
            f"the run store is damaged ({damage_summary(problems)}); nothing was written to it",
            file=self._path,
            hint=f"{readable}; `sqlite3 {self._path} .recover` salvages what SQLite can still "
            "read; move the file aside to start a new store, or " + OTHER_FILE_HINT,
        )

    def _unknown_run(self, run_id: str) -> StoreError:
        return StoreError(f"no stored run {run_id!r}", file=self._path, hint=RUNS_HINT)

    def _require_run(self, conn: sqlite3.Connection, run_id: str) -> None:
        if not run_exists(conn, run_id):
            raise self._unknown_run(run_id)

    def _run_row(self, info: RunInfo) -> tuple[str, str, str | None, str, str | None, int, str]:
        return (
            info.run_id,
            stored_time(info.created_at) or "",
            stored_time(info.finished_at),
            RunStatus(info.status).value,
            info.target,
            info.trials,
            self._json(info),
        )

    def _parse(self, model: type[_M], data: str, where: str) -> _M:
        try:
            return model.model_validate_json(data)
        except ValidationError as exc:
            cut = read_cut(model, data)
            if cut is not None:
                return cut
            raise StoreError(
                f"{where} cannot be read by this version of agenteval: "
                f"{exc.error_count()} invalid field(s), first: {exc.errors()[0]['msg']}",
                file=self._path,
                hint="read it with the agenteval version that wrote it, or start a new run",
            ) from None


def run_exists(conn: sqlite3.Connection, run_id: str) -> bool:
    """Whether the run is stored."""
    return conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is not None
