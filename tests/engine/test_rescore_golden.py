"""A rescore leaves every stored byte and every summary figure as main's did before the
rescoring speed-ups of issue 21: varied runs (failures, retries, gaps, judge scores kept from
the store, flaky cases, priced and unpriced model calls, simulated users, stale and changed
stored scores), compared with golden files main wrote (`rescore_runs.py`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.engine.rescore_runs import RUN_ID, SEEDS, build, snapshot

import agenteval

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_rescore_writes_and_summarises_as_main_did(tmp_path: Path, seed: int) -> None:
    db = tmp_path / "runs.db"
    build(db, seed)
    run = agenteval.rescore(RUN_ID, builtins=True, store=db)
    expected = json.loads((GOLDEN / f"rescored-{seed}.json").read_text())
    got = json.loads(json.dumps(snapshot(db, run.summary)))
    assert got["summary"] == expected["summary"]
    assert (got["rows"], got["rows_sha256"]) == (expected["rows"], expected["rows_sha256"])
