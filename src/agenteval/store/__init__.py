"""The run store: every run, its cases, and each (case, trial) with its scores, in one SQLite file.

One writer (the engine's driver) streams results in as trials finish; each trial and its scores
are committed together, so a run killed at any moment resumes from what was stored. Readers in
other processes (`agenteval runs`, a report) can read while a run writes (WAL mode).

The store writes what it is given, with three exceptions, all made where a record is encoded
(`encoding.to_json`): secrets are redacted; data nested past 64 levels, or circular, is stored cut, and
the record notes the cut (`jsonsafe`); values under secret-named keys in what agents and scorers
produced are masked. Anything else a caller puts in a `RunInfo`, a case or a trial is what lands
on disk.

The store's parts, each one job: the file's layout and what its errors say (`layout`), how a
record is written as JSON (`encoding`), the open file and what the parts share (`base`), runs and
their cases (`runs`), results (`results`), how complete runs are (`progress`), rescoring
(`scores`), and `RunStore` over them all (`run_store`). Opening, waiting and damage checks are
the SQLite helper's (`agenteval.sqlite`).
"""

from __future__ import annotations

from agenteval.store.layout import DEFAULT_STORE_PATH, SCHEMA_VERSION
from agenteval.store.progress import RunSummaryRow
from agenteval.store.results import EncodedResults, StoredTrial
from agenteval.store.run_store import RunStore

__all__ = [
    "DEFAULT_STORE_PATH",
    "SCHEMA_VERSION",
    "EncodedResults",
    "RunStore",
    "RunSummaryRow",
    "StoredTrial",
]
