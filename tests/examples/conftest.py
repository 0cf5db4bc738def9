"""The fresh clone the example tests run from."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.examples.clones import fresh_clone


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    return fresh_clone(tmp_path)
