"""`max_turns: true` is a mistake named as one (pydantic would read it as 1, a conversation
silently cut to its first message)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.datasets import load_cases
from agenteval.errors import DatasetError


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("cases.yaml", "- id: b\n  user_simulation:\n    goal: g\n    max_turns: true\n"),
        ("cases.jsonl", '{"id": "b", "user_simulation": {"goal": "g", "max_turns": true}}\n'),
    ],
)
def test_a_boolean_max_turns_is_refused(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DatasetError) as caught:
        load_cases(path)
    error = caught.value
    assert (error.case, error.field) == ("b", "user_simulation.max_turns")
    assert "expected a whole number, got true" in error.message


def test_a_csv_cells_number_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text("id,user_goal,user_max_turns\nc,g,3\n")
    [case] = load_cases(path)
    assert case.user_simulation is not None and case.user_simulation.max_turns == 3
