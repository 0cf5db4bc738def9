"""`agenteval view`: a local web viewer over the run store.

The runs, a run (its summary and its case table a page at a time, as the HTML report shows
them: the same templates), a comparison of any two runs, and a run being written updating as
its trials are stored. Read-only: the store is opened `mode=ro`, so the viewer never writes,
locks or repairs it.

- `reader.py`: `StoreReader`, the store read-only, a page of trials at a time;
- `index.py`: `RunIndex`, one pass over a run (its summary and one small row per trial, for
  filtering, sorting and paging), and `IndexCache`, which builds them in the background;
- `pages.py`: `Pages`, the pages as HTML through the report's templates (`view/templates`
  add the viewer's own, which include the report's parts);
- `app.py`: the addresses on Starlette (the optional extra `agenteval[view]`, imported only
  by `agenteval view`; importing this package imports no web framework).
"""
