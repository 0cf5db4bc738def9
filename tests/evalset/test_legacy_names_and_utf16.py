"""Two behaviours the case-file reader gained when it became one package: a legacy ADK eval set
with two cases of one name is one located error (it was pydantic's raw ValidationError, a
traceback), and an ADK eval set saved as UTF-16 is recognised by its content."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval import DatasetError, load_cases
from agenteval.evalset import EvalSet

LEGACY_CASE = {"name": "a", "data": [{"query": "hi", "reference": "hello"}]}


def test_two_legacy_cases_of_one_name_are_one_located_error(tmp_path: Path) -> None:
    path = tmp_path / "old.evalset.json"
    path.write_text(json.dumps([LEGACY_CASE, LEGACY_CASE], indent=2))
    for load in (load_cases, EvalSet.load):
        with pytest.raises(DatasetError) as caught:
            load(path)
        assert "the name 'a' is also used by case 1" in caught.value.message
        assert caught.value.field == "1.name"


def test_an_adk_eval_set_saved_as_utf16_is_read_by_its_content(tmp_path: Path) -> None:
    text = json.dumps([LEGACY_CASE])
    (tmp_path / "plain.json").write_text(text, encoding="utf-8")
    (tmp_path / "wide.json").write_text(text, encoding="utf-16")
    assert load_cases(tmp_path / "wide.json") == load_cases(tmp_path / "plain.json")
    assert [case.id for case in load_cases(tmp_path / "wide.json")] == ["a"]
