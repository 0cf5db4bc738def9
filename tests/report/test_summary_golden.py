"""Every summary figure as main gave it (`summary_golden.py`, `golden/summaries.json`, made by
main before the summary's fast path): the varied runs summarised whole, JSON byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.report.summary_golden import summaries

_GOLDEN = Path(__file__).parent / "golden" / "summaries.json"


@pytest.fixture(scope="module")
def made() -> dict[str, str]:
    return summaries()


def test_every_summary_is_mains_byte_for_byte(made: dict[str, str]) -> None:
    golden: dict[str, str] = json.loads(_GOLDEN.read_text())
    assert sorted(made) == sorted(golden)
    for key, text in golden.items():
        assert made[key] == text, key
