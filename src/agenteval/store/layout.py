"""The run store's file: where it lives, its mark and schema version, its tables, the statements
that write them, and what its errors tell the user to do (the `FileKind` the SQLite helper opens).
"""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path

from agenteval.sqlite import FileKind, FileWording

__all__ = [
    "APPLICATION_ID",
    "CHUNK",
    "DEFAULT_STORE_PATH",
    "DELETE_SCORES",
    "INSERT_CASE",
    "OTHER_FILE_HINT",
    "ROWS_PER_STATEMENT",
    "RUNS_HINT",
    "SCHEMA_VERSION",
    "STORE_FILE",
    "UPSERT_SCORE",
    "UPSERT_TRIAL",
    "delete_scores_of",
    "insert_cases",
    "migrate",
    "upsert_scores",
    "upsert_trials",
]

DEFAULT_STORE_PATH = Path(".agenteval/runs.db")
"""Where runs are stored unless `--store` says otherwise."""

SCHEMA_VERSION = 1
"""The layout this version writes (`PRAGMA user_version`). Older layouts are upgraded in place by
adding to them, never by dropping anything; a newer one is refused."""

# `PRAGMA application_id` marks the file as ours, so another program's SQLite database is refused
# instead of having tables added to it. 0x61676576 is "agev".
APPLICATION_ID = 0x61676576
CHUNK = 500
"""Rows read or written per statement batch: a run of any size is streamed, never all held."""
RUNS_HINT = "agenteval runs lists the stored runs"
OTHER_FILE_HINT = "pass --store PATH to use another file"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    created_at  TEXT NOT NULL,
    finished_at TEXT,
    status      TEXT NOT NULL,
    target      TEXT,
    trials      INTEGER NOT NULL,
    info        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at);
CREATE INDEX IF NOT EXISTS runs_by_target ON runs (target, status, created_at);
CREATE TABLE IF NOT EXISTS cases (
    run_id  TEXT NOT NULL,
    idx     INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    data    TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS cases_in_order ON cases (run_id, idx);
CREATE TABLE IF NOT EXISTS trials (
    run_id      TEXT NOT NULL,
    case_id     TEXT NOT NULL,
    trial       INTEGER NOT NULL,
    data        TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id, trial)
);
CREATE TABLE IF NOT EXISTS scores (
    run_id  TEXT NOT NULL,
    case_id TEXT NOT NULL,
    trial   INTEGER NOT NULL,
    name    TEXT NOT NULL,
    data    TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id, trial, name)
);
"""

# Upserts update in place rather than delete and re-insert (as INSERT OR REPLACE does), so a
# row keeps its rowid, and scores keep the order they were first written in.
UPSERT_TRIAL = """
INSERT INTO trials (run_id, case_id, trial, data, finished_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (run_id, case_id, trial)
DO UPDATE SET data = excluded.data, finished_at = excluded.finished_at
"""
UPSERT_SCORE = """
INSERT INTO scores (run_id, case_id, trial, name, data) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (run_id, case_id, trial, name) DO UPDATE SET data = excluded.data
"""
DELETE_SCORES = "DELETE FROM scores WHERE run_id = ? AND case_id = ? AND trial = ?"

# The same statements for many rows at once, for the live run's writer. It writes in a thread
# while the event loop runs trials, and `executemany` takes the interpreter lock back after
# every row's step, waiting each time for the loop to let go of it: 200 W1 trials took 5-9 ms
# to write so (1.6 ms alone), the queue filling meanwhile. One statement for many rows takes
# it back once. Same rows, in the same order (a row conflicting with one before it in the same
# statement updates it, as the next `executemany` step would).
ROWS_PER_STATEMENT = 100
"""Rows per statement: 500 parameters, half SQLite's oldest limit on them (999)."""


def _values(rows: int, width: int) -> str:
    row = "(" + ", ".join("?" * width) + ")"
    return ", ".join([row] * rows)


INSERT_CASE = "INSERT INTO cases (run_id, idx, case_id, data) VALUES (?, ?, ?, ?)"


@functools.cache
def insert_cases(rows: int) -> str:
    """`INSERT_CASE` for `rows` rows: 4 parameters a row, in its order (`create_run`, in the
    writer's thread while the first trials run)."""
    return INSERT_CASE.replace("(?, ?, ?, ?)", _values(rows, 4))


@functools.cache
def upsert_trials(rows: int) -> str:
    """`UPSERT_TRIAL` for `rows` rows: 5 parameters a row, in its order."""
    return UPSERT_TRIAL.replace("(?, ?, ?, ?, ?)", _values(rows, 5))


@functools.cache
def upsert_scores(rows: int) -> str:
    """`UPSERT_SCORE` for `rows` rows: 5 parameters a row, in its order."""
    return UPSERT_SCORE.replace("(?, ?, ?, ?, ?)", _values(rows, 5))


@functools.cache
def delete_scores_of(keys: int) -> str:
    """`DELETE_SCORES` for `keys` (case id, trial) pairs of one run: their 2 parameters each,
    then the run id. Written as a join so that each key is looked up in the primary key (a
    row value `IN` would read every score of the run); a CROSS JOIN, which SQLite never
    reorders, because a newer SQLite's planner (3.45 on, not 3.40) put the keys inside the join
    and read every score of the run for each batch."""
    return (
        "DELETE FROM scores WHERE rowid IN (SELECT s.rowid FROM (VALUES "
        + _values(keys, 2)
        + ") AS k CROSS JOIN scores s ON s.run_id = ? AND s.case_id = k.column1"
        " AND s.trial = k.column2)"
    )


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Bring a store from layout `version` up to `SCHEMA_VERSION`, inside a transaction."""
    # Each step only adds (tables, columns, indexes); nothing stored is dropped or rewritten.
    if version < 1:
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)


STORE_FILE = FileKind(
    name="run store",
    schema_word="store",
    application_id=APPLICATION_ID,
    schema_version=SCHEMA_VERSION,
    migrate=migrate,
    wording=FileWording(
        folder=OTHER_FILE_HINT,
        not_sqlite=f"{OTHER_FILE_HINT}, or move this file aside",
        missing=f"run `agenteval run` first, or {OTHER_FILE_HINT}",
        cannot_open=OTHER_FILE_HINT,
        foreign=f"{OTHER_FILE_HINT}; this file is left as it is",
        newer=f"upgrade agenteval, or {OTHER_FILE_HINT}",
        busy="another process is writing to this store; wait for it, or " + OTHER_FILE_HINT,
        corrupt=f"the file is damaged; move it aside to start a new store, or {OTHER_FILE_HINT}",
        permissions=f"check the file's and its folder's permissions, or {OTHER_FILE_HINT}",
        full=f"free some disk space, or {OTHER_FILE_HINT}",
        other=OTHER_FILE_HINT,
    ),
)
"""The run store as the SQLite helper opens it."""
