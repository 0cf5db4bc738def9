"""`agenteval view`: a local web viewer over the run store.

The store is only ever read, through read-only SQLite connections (`reader.StoreReader`); a
run's pages stand on its index (`index.RunIndex`: its summary and a small row per trial), built
in the background and rebuilt when the run changes (`index.IndexCache`). Importing this package
never imports the web stack (Starlette, uvicorn): only the app module does.
"""

from __future__ import annotations

from agenteval.view.index import IndexCache, IndexState, Row, RunIndex, build_index
from agenteval.view.reader import RunRow, Stamp, StoreReader, UnknownRun

__all__ = [
    "IndexCache",
    "IndexState",
    "Row",
    "RunIndex",
    "RunRow",
    "Stamp",
    "StoreReader",
    "UnknownRun",
    "build_index",
]
