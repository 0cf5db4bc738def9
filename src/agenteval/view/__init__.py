"""`agenteval view`: a local web viewer over the run store.

The runs, a run (its summary and its case table a page at a time, as the HTML report shows
them: the same templates), a comparison of any two runs, and a run being written updating as
its trials are stored.

- `reader.py`: `StoreReader`, the store through read-only SQLite connections only, a page of
  trials at a time;
- `index.py`: `RunIndex`, one pass over a run (its summary and a small row per trial, for
  filtering, sorting and paging), built in the background and rebuilt when the run changes
  (`IndexCache`);
- `addresses.py`: what an address asks (the runs list's and a run table's filters, sort and
  page) and the addresses a page links to;
- `pages.py`: `Pages`, the pages as HTML through the report's templates (`view/templates`
  adds the viewer's own, which include the report's parts);
- `app.py`: the addresses on Starlette (the optional extra `agenteval[view]`), imported only
  by `agenteval view`: importing this package never imports the web stack.
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
