"""`RunStore`, the run store as its callers use it: one class over the store's parts."""

from __future__ import annotations

from pathlib import Path

from agenteval.store.layout import DEFAULT_STORE_PATH
from agenteval.store.paged import PagedRecords
from agenteval.store.results import ResultRecords
from agenteval.store.runs import RunRecords
from agenteval.store.scores import ScoreRecords

__all__ = ["RunStore"]


class RunStore(RunRecords, ResultRecords, ScoreRecords, PagedRecords):
    """The SQLite file that holds every run; a context manager that closes it on exit.

    `RunStore(path)` opens the file, creating it (and its folder) when it does not exist, unless
    `create=False`. A file that is not a run store, is corrupt, or was written by a newer
    agenteval raises `StoreError`; opening never changes or drops anything already stored.
    `RunStore(path, read_only=True)` (the viewer's) never creates, lays out or writes the file:
    its reads work as ever, its writes raise `StoreError`.

    Its parts: the file and what they share (`store.base`), runs and their cases
    (`store.runs`), results (`store.results`), rescoring (`store.scores`), paged reads for the
    viewer (`store.paged`).
    """

    @classmethod
    def open(
        cls, path: str | Path = DEFAULT_STORE_PATH, *, create: bool = True, read_only: bool = False
    ) -> RunStore:
        """Open (or create) the store at `path`; the same as `RunStore(path)`."""
        return cls(path, create=create, read_only=read_only)
