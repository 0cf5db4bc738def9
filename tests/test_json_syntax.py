"""A JSON syntax error explained the same way by every reader of a user's JSON file: case files,
an ADK eval config, an ADK initial session file. The reader's own words differ by Python
(`tests/python_json.py`), so each mistake is checked under this Python's wording."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.python_json import decode_error

from agenteval import ConfigError, DatasetError
from agenteval.evalset import EvalConfig
from agenteval.evalset.dropin import read_initial_session
from agenteval.json_syntax import explain_json_error

# (invalid text, words the hint must hold)
MISTAKES = [
    ('{"criteria": {"a": 1,}}', "cannot end with a comma"),
    ('{"criteria": [1, 2,]}', "cannot end with a comma"),
    ("{criteria: {}}", "double quotes"),
    ('{"a": 1 "b": 2}', "missing comma"),
    ('{"a": "line\nbreak"}', "\\n"),
]


@pytest.mark.parametrize(("text", "words"), MISTAKES)
def test_each_mistake_has_its_own_hint(text: str, words: str) -> None:
    assert words in explain_json_error(decode_error(text), one_value="one object")


def test_text_after_the_value_is_told_what_the_file_holds() -> None:
    hint = explain_json_error(decode_error('{"a": 1}\n{"b": 2}'), one_value="one object")
    assert "one object" in hint


def test_an_unrecognised_mistake_gets_the_general_hint() -> None:
    hint = explain_json_error(decode_error('{"a": tru}'), one_value="one object")
    assert hint == "check the quotes, commas and brackets near this point"


@pytest.mark.parametrize(("text", "words"), MISTAKES)
def test_an_eval_config_names_the_mistake(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "test_config.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        EvalConfig.load(path)
    reader = decode_error(text)
    assert caught.value.line == reader.lineno
    assert caught.value.hint is not None and words in caught.value.hint, caught.value.hint


@pytest.mark.parametrize(("text", "words"), MISTAKES)
def test_an_initial_session_file_names_the_mistake(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "initial.session.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        read_initial_session(path)
    assert caught.value.line == decode_error(text).lineno
    assert caught.value.hint is not None and words in caught.value.hint, caught.value.hint


def test_valid_files_are_read_as_before(tmp_path: Path) -> None:
    path = tmp_path / "initial.session.json"
    path.write_text(json.dumps({"state": {"a": 1}}), encoding="utf-8")
    assert read_initial_session(path) == {"state": {"a": 1}}
