"""The judge cache: every successful judge verdict, kept under a key made of what produced it.

The key (`cache_key`) covers the provider, the model, the sampling parameters, the prompt
template's id and version, every input the prompt sees, and the sample index. Asking the same
judge the same question again (rescoring a run, judging it a second time) is therefore a hit and
makes no provider call, while repeated samples of one question (`num_samples`) are distinct keys
and distinct calls.

Errors are never cached: only a verdict that was received and validated is `put`. That rule is
the caller's, since the cache cannot tell a verdict from an error; a failed or unparseable sample
is simply not stored, so the next run asks again.

The cache is its own SQLite file (`.agenteval/judge-cache.db` by default), apart from the run
store: it only holds answers that can be asked again, so it can be deleted at any time.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from collections.abc import Mapping
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from pathlib import Path, PurePath
from typing import Any, Protocol
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenteval.jsonsafe import MAX_DEPTH, model_json_text, safe_repr
from agenteval.redaction import Redactor
from agenteval.sqlite import Database, FileKind, FileWording, time_text
from agenteval.trace import Usage, utc_now

__all__ = [
    "DEFAULT_CACHE_PATH",
    "KEY_FORMAT",
    "CachedVerdict",
    "JudgeCache",
    "NullCache",
    "VerdictCache",
    "cache_key",
]

DEFAULT_CACHE_PATH = Path(".agenteval/judge-cache.db")
"""Where judge verdicts are cached unless another path is given."""

KEY_FORMAT = 1
"""The version of the key layout. It is hashed into every key, so a change to how keys are made
starts a fresh set of keys instead of matching old entries by accident."""

SCHEMA_VERSION = 1
"""The cache file layout this version writes (`PRAGMA user_version`); a newer one is refused."""

# `PRAGMA application_id` marks the file as a judge cache ("agvj"), so neither a run store nor
# another program's database is ever written to as a cache.
_APPLICATION_ID = 0x6167766A
_DELETE_HINT = (
    "delete the cache file (it only holds judge answers, which are asked again when missing),"
    " or use another cache path"
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    key        TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    data       TEXT NOT NULL
) WITHOUT ROWID
"""

# An upsert that updates in place: the same key asked again replaces the one entry.
_UPSERT = """
INSERT INTO verdicts (key, created_at, data) VALUES (?, ?, ?)
ON CONFLICT (key) DO UPDATE SET created_at = excluded.created_at, data = excluded.data
"""
_OTHER_PATH_HINT = "check the file's and its folder's permissions, or use another cache path"


def _lay_out(conn: sqlite3.Connection, version: int) -> None:
    conn.execute(_SCHEMA)


_CACHE_FILE = FileKind(
    name="judge cache",
    schema_word="cache",
    application_id=_APPLICATION_ID,
    schema_version=SCHEMA_VERSION,
    migrate=_lay_out,
    wording=FileWording(
        folder="pass the path of a file for the judge cache",
        not_sqlite=f"{_DELETE_HINT}; the file is left as it is",
        missing="use another cache path",
        cannot_open=_OTHER_PATH_HINT,
        foreign="use another cache path; this file is left as it is",
        newer=f"upgrade agenteval, or {_DELETE_HINT}",
        busy="another process is writing to this cache; wait for it, or use another path",
        corrupt=_DELETE_HINT,
        permissions=_OTHER_PATH_HINT,
        full=f"free some disk space, or {_DELETE_HINT}",
        other=_DELETE_HINT,
    ),
)


# -- keys -------------------------------------------------------------------------------------


def cache_key(
    *,
    provider: str,
    model: str,
    params: Mapping[str, Any],
    template_id: str,
    template_version: str | int,
    inputs: Mapping[str, Any],
    sample_index: int,
) -> str:
    """The cache key of one judge sample: a sha256 hex digest of everything that decides it.

    The parts are written as canonical JSON (keys sorted, no whitespace, UTF-8) before hashing,
    so the order of keys in `params` and `inputs` does not matter, while any change to a value
    does. `template_version` 3 and "3" are the same version. Values that are not JSON (models,
    dates, sets, paths, bytes, enums, dataclasses) are written in one fixed form of their own;
    any other object is written as its type and `repr`, so give objects without a faithful
    `repr` to the key as plain data. A value nested deeper than 64 levels (the run store's
    limit, `jsonsafe.MAX_DEPTH`) or containing itself gets a key of its own, different each
    time: it is never a hit, and never another request's verdict.

    `params` are the sampling parameters sent to the provider (temperature, max_tokens, …);
    never pass secrets such as API keys here.
    """
    if isinstance(sample_index, bool) or not isinstance(sample_index, int) or sample_index < 0:
        raise ValueError(f"sample_index must be an int >= 0, not {sample_index!r}")
    payload = {
        "format": KEY_FORMAT,
        "provider": provider,
        "model": model,
        "params": params,
        "template": {"id": template_id, "version": str(template_version)},
        "inputs": inputs,
        "sample": sample_index,
    }
    try:
        return hashlib.sha256(_canonical_bytes(payload)).hexdigest()
    except _NoKey:
        # No canonical form: a key of its own, so the request is asked each time and never
        # answered with the verdict of another request cut to the same form.
        return hashlib.sha256(b"agenteval: no canonical key " + uuid4().bytes).hexdigest()


class _NoKey(Exception):
    """A value with no canonical form: nested past `MAX_DEPTH` levels, or containing itself."""


def _canonical_bytes(value: Any) -> bytes:
    text = json.dumps(
        _plain(value, set(), 1),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=True,  # NaN and infinities are written as themselves, deterministically
    )
    # `surrogatepass` keeps a lone surrogate (possible in text decoded from bad bytes) distinct
    # instead of failing the whole key.
    return text.encode("utf-8", "surrogatepass")


def _plain(value: Any, active: set[int], depth: int) -> Any:
    """`value` as plain JSON data, the same for equal values in every process.

    Not `jsonsafe`'s copy, on purpose: a key must tell apart every two values that differ (a set
    from a list, the key 1 from the key "1") and write a set in one order in every process,
    where `jsonsafe` writes what a reader needs. Its bounds are jsonsafe's: a value nested
    deeper than `MAX_DEPTH` levels or containing itself has no canonical form (`_NoKey`), since
    a form cut short could be another value's.
    """
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Enum):
        name = f"{type(value).__qualname__}.{value.name}"
        return {"$enum": name, "value": _plain(value.value, active, depth + 1)}
    if isinstance(value, datetime | date | time):
        return {"$" + type(value).__name__: value.isoformat()}
    if isinstance(value, Decimal):
        return {"$decimal": str(value)}
    if isinstance(value, UUID):
        return {"$uuid": str(value)}
    if isinstance(value, PurePath):
        return {"$path": value.as_posix()}
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$bytes": bytes(value).hex()}
    if depth > MAX_DEPTH or id(value) in active:
        raise _NoKey
    active.add(id(value))
    inner = depth + 1
    try:
        if isinstance(value, BaseModel):
            try:
                fields = value.model_dump(mode="python")
            except Exception as exc:  # pydantic's own bounds: a cycle, its depth limit
                raise _NoKey from exc
            return {"$model": type(value).__qualname__, "fields": _plain(fields, active, inner)}
        if isinstance(value, Mapping):
            return {
                _key_text(key, active, inner): _plain(item, active, inner)
                for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            return [_plain(item, active, inner) for item in value]
        if isinstance(value, set | frozenset):
            # Set order depends on string hashing, which changes per process: sort the items
            # by their canonical text instead.
            items = [_plain(item, active, inner) for item in value]
            return {"$set": sorted(items, key=lambda item: _canonical_bytes(item))}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {
                "$dataclass": type(value).__qualname__,
                "fields": {
                    field.name: _plain(getattr(value, field.name), active, inner)
                    for field in dataclasses.fields(value)
                },
            }
    finally:
        active.discard(id(value))
    return {
        "$object": f"{type(value).__module__}.{type(value).__qualname__}",
        "repr": safe_repr(value),
    }


def _key_text(key: Any, active: set[int], depth: int) -> str:
    if isinstance(key, str):
        return key
    # A non-text key is written as a marked form of its canonical JSON, so keys of mixed types
    # still sort and the key 1 never stands for the key "1".
    plain = _plain(key, active, depth)
    return "$key:" + json.dumps(
        plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True
    )


# -- entries ----------------------------------------------------------------------------------


class CachedVerdict(BaseModel):
    """One judge sample as it was received: the validated verdict, the raw text, usage and
    the settings it was asked with."""

    model_config = ConfigDict(extra="ignore")

    verdict: dict[str, Any]
    """The structured verdict, as validated."""
    raw: str = ""
    """The provider's raw answer text."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens the original call used (a cache hit itself costs nothing)."""
    model: str | None = None
    """The model as the provider reported it (often a dated snapshot of the one asked for)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """The sampling parameters the verdict was asked with."""
    created_at: datetime = Field(default_factory=utc_now)
    """When the verdict was received (UTC)."""


class VerdictCache(Protocol):
    """What the judge needs from a cache; `JudgeCache` and `NullCache` both provide it."""

    def get(self, key: str) -> CachedVerdict | None:
        """The verdict stored under `key`, or None."""
        ...

    def put(self, key: str, entry: CachedVerdict) -> None:
        """Store a successful verdict under `key`, replacing any stored before."""
        ...

    def count(self) -> int:
        """How many verdicts are stored."""
        ...

    def clear(self) -> None:
        """Forget every stored verdict."""
        ...

    def close(self) -> None:
        """Release the cache."""
        ...


# -- the cache --------------------------------------------------------------------------------


class JudgeCache:
    """The SQLite file of cached judge verdicts; a context manager that closes it on exit.

    `JudgeCache(path)` opens the file, creating it and its folder when missing. A file that is
    not a judge cache (not SQLite, corrupt, another program's database, a run store) raises
    `StoreError` and is left exactly as it was. Every method is safe to call from several
    threads at once; other processes may share the file (WAL mode).

    Only successful verdicts are put: errors are never cached.
    """

    def __init__(self, path: str | Path = DEFAULT_CACHE_PATH) -> None:
        self._redactor = Redactor.from_environment()
        self._db = Database(path, _CACHE_FILE)

    @property
    def path(self) -> Path:
        """The cache's file."""
        return self._db.path

    def get(self, key: str) -> CachedVerdict | None:
        """The verdict stored under `key`, or None on a miss.

        An entry this version cannot read (written by another version) counts as a miss; the
        verdict is asked again and the entry replaced.
        """
        with self._db.use() as conn:
            row = conn.execute("SELECT data FROM verdicts WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return CachedVerdict.model_validate_json(row[0])
        except ValidationError:
            return None

    def put(self, key: str, entry: CachedVerdict) -> None:
        """Store a successful verdict under `key`, replacing whatever was stored there.

        Never put an error or a failed sample: errors are never cached.
        """
        # A judge may quote what it judged; secrets in it never reach the file.
        # Written as the run store writes a record (`jsonsafe`): a verdict nested deeper than
        # 64 levels, or containing itself, is stored cut instead of failing the put.
        data = self._redactor.redact_text(model_json_text(entry))
        created = time_text(entry.created_at)
        with self._db.use() as conn:
            conn.execute(_UPSERT, (key, created, data))

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        with self._db.use() as conn:
            row = conn.execute("SELECT 1 FROM verdicts WHERE key = ?", (key,)).fetchone()
        return row is not None

    def count(self) -> int:
        """How many verdicts are stored."""
        with self._db.use() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])

    def __len__(self) -> int:
        return self.count()

    def clear(self) -> None:
        """Forget every stored verdict."""
        with self._db.use() as conn:
            conn.execute("DELETE FROM verdicts")

    def close(self) -> None:
        """Close the file. Every `put` is already committed."""
        self._db.close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"JudgeCache({str(self._db.path)!r})"


class NullCache:
    """A cache that stores nothing and never hits: what `--no-cache` uses."""

    @property
    def path(self) -> None:
        """No file."""
        return None

    def get(self, key: str) -> CachedVerdict | None:
        """Always a miss."""
        return None

    def put(self, key: str, entry: CachedVerdict) -> None:
        """Keeps nothing."""

    def __contains__(self, key: object) -> bool:
        return False

    def count(self) -> int:
        """Always 0."""
        return 0

    def __len__(self) -> int:
        return 0

    def clear(self) -> None:
        """Nothing to forget."""

    def close(self) -> None:
        """Nothing to release."""

    def __enter__(self) -> NullCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return "NullCache()"
