"""A simulated user's `max_turns` below the user messages the case writes (its turns, its text
input, its starting prompt): the case's mistake, named by file, line, case and field, never a
conversation silently played past the limit the case states."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from agenteval import EvalCase
from agenteval.datasets import load_cases
from agenteval.errors import DatasetError


def test_a_yaml_case_writing_more_turns_than_max_turns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(
        "- id: long\n"
        "  conversation:\n"
        "    - input: one\n"
        "    - input: two\n"
        "    - input: three\n"
        "  user_simulation:\n"
        "    goal: Get a refund.\n"
        "    starting_prompt: four\n"
        "    max_turns: 2\n"
    )
    with pytest.raises(DatasetError) as caught:
        load_cases(path)
    error = caught.value
    assert (error.line, error.case, error.field) == (9, "long", "user_simulation.max_turns")
    assert "fewer than the 4 user messages the case writes" in error.message
    assert error.hint is not None and "max_turns: 4 or more" in error.hint


def test_a_csv_row_names_its_column(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text("id,input,user_starting_prompt,user_max_turns,user_goal\nq,hi,there,1,g\n")
    with pytest.raises(DatasetError) as caught:
        load_cases(path)
    assert (caught.value.line, caught.value.field) == (2, "user_max_turns")
    assert "fewer than the 2 user messages" in caught.value.message


def test_in_python_too() -> None:
    with pytest.raises(ValidationError, match="fewer than the 2 user messages"):
        EvalCase(input="a", user_simulation={"goal": "g", "starting_prompt": "b", "max_turns": 1})
    # As many as written: the simulated user says nothing more, but it is what the case says.
    case = EvalCase(
        input="a", user_simulation={"goal": "g", "starting_prompt": "b", "max_turns": 2}
    )
    assert case.user_simulation is not None
