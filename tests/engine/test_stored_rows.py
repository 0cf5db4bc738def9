"""What a varied run stores (`stored_rows.py`: answers, tool calls, model calls, failures,
retries, the agent's spans, scores with details, secrets to mask and to redact) is the text
main stored before issue 21's second round made the run path cheaper (`golden/stored_rows.json`,
written by main at 7d6c230): every row the same, but for times, durations and ids. One change
since, on purpose: `my_scorer`'s `Score(value=0.5)` with no `passed` now passes at its
threshold (0.5), so its stored score says `"passed": true` (CHANGELOG, Unreleased/Fixed)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.engine.stored_rows import stored_rows

GOLDEN = Path(__file__).parent / "golden" / "stored_rows.json"


def test_a_varied_run_stores_what_main_stored(tmp_path: Path) -> None:
    expected = json.loads(GOLDEN.read_text())
    got = stored_rows(tmp_path / "s.db")
    assert got["trials"] == expected["trials"]
    assert got["scores"] == expected["scores"]
