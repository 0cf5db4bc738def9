"""Suggestions for a mistaken name (by meaning, then spelling, only one that would be valid),
and YAML syntax errors explained by an edit that makes the file parse."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agenteval.agents.loading import load_object
from agenteval.config import find_target
from agenteval.datasets import load_cases
from agenteval.errors import AgentLoadError, ConfigError, DatasetError
from agenteval.suggestions import meant, normalised
from agenteval.yaml_syntax import explain_yaml_error

NAMES = ("input", "expected_output", "expected_tools", "conversation", "id")
MEANINGS = {"question": "input", "expected": "expected_output"}


def test_meaning_comes_before_spelling() -> None:
    assert meant("question", NAMES, MEANINGS) == "input"
    assert meant("question", NAMES, {}) == "conversation"  # what spelling alone says


def test_only_a_name_the_caller_accepts_is_suggested() -> None:
    assert meant("expected", NAMES, MEANINGS, lambda name: name != "expected_output") == (
        "expected_tools"
    )
    assert meant("question", NAMES, MEANINGS, lambda name: False) is None


def test_a_name_written_another_way_is_that_name() -> None:
    assert normalised("expectedOutput") == "expected_output"
    assert normalised("Expected Output") == "expected_output"
    assert meant("Expected-Output", NAMES, {}) == "expected_output"
    assert meant("input", NAMES, MEANINGS) is None  # never the key itself


def _error(tmp_path: Path, name: str, text: str) -> DatasetError:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DatasetError) as caught:
        load_cases(path)
    return caught.value


@pytest.mark.parametrize(
    ("text", "field", "hint"),
    [
        # Inside a conversation turn and an expected call, by the meaning there.
        (
            "- conversation:\n    - question: Hi\n",
            "conversation.0.question",
            "rename 'question' to 'input'",
        ),
        (
            "- input: Hi\n  conversation:\n    - user_content: Hi\n      answer: Hello\n",
            "conversation.0.answer",
            "rename 'answer' to 'expected_final_response'",
        ),
        (
            "- input: Hi\n  expected_trajectory:\n    - tool: search\n",
            "expected_trajectory.0.tool",
            "rename 'tool' to 'name'",
        ),
        (
            "- input: Hi\n  expected_trajectory:\n    - name: search\n      params: {q: x}\n",
            "expected_trajectory.0.params",
            "rename 'params' to 'arguments'",
        ),
        # A list of messages is an input too.
        (
            "- messages: [{role: user, content: Hi}]\n",
            "messages",
            "rename 'messages' to 'input'",
        ),
        # What it means is given already: renaming would give it twice.
        ("- input: Hi\n  question: Hi\n", "question", "remove 'question'"),
    ],
)
def test_case_fields_by_meaning(tmp_path: Path, text: str, field: str, hint: str) -> None:
    error = _error(tmp_path, "cases.yaml", text)
    assert (error.field, error.hint) == (field, hint)


def test_a_csv_column_already_in_the_header_is_not_suggested(tmp_path: Path) -> None:
    error = _error(tmp_path, "cases.csv", "input,question\nHi,Hello\n")
    assert error.field == "question"
    assert "'input'" not in (error.hint or "")


@pytest.mark.parametrize(
    ("line", "hint"),
    [
        ("{'input': 'Hi', 'ok': True}", """write line 1 as `{"input": "Hi", "ok": true}`"""),
        ("{input: 'Hi'}", """write line 1 as `{"input": "Hi"}`"""),
        ("Hi there", """write line 1 as `{"input": "Hi there"}`"""),
    ],
)
def test_a_jsonl_line_that_is_not_json(tmp_path: Path, line: str, hint: str) -> None:
    error = _error(tmp_path, "cases.jsonl", line + "\n")
    assert error.line == 1
    assert hint in (error.hint or "")


def _explained(text: str) -> tuple[str, int | None, str]:
    with pytest.raises(yaml.MarkedYAMLError) as caught:
        yaml.safe_load(text)
    problem = explain_yaml_error(caught.value, text)
    return problem.message, problem.line, problem.hint


def test_yaml_without_an_edit_that_parses_gets_the_general_hint() -> None:
    _, line, hint = _explained("- input: *nowhere\n")
    assert line == 1
    assert hint == "define the anchor (&name) before using the alias (*name)"


def test_yaml_a_quote_with_an_apostrophe_inside() -> None:
    message, line, hint = _explained("- id: a\n  input: \"What's up\n  expected_output: x\n")
    assert line == 2
    assert hint == 'add the closing " at the end of line 2'
    assert "never closed" in message


@pytest.mark.parametrize("text", ["\x85'", "\u2028'", '\u2029"x', "a: 1\u2028b: 'x"])
def test_yaml_a_line_break_only_yaml_counts_is_explained_not_a_traceback(text: str) -> None:
    """YAML also breaks lines at NEL, LS and PS, which `str.split("\n")` does not: a mark on a
    line past the text's `\n` lines is explained without an edit, never an IndexError (found
    by the hypothesis test of case files: `"\x85'"`)."""
    message, _, hint = _explained(text)
    assert message.startswith("invalid YAML")
    assert hint


def test_yaml_a_nested_block_indented_too_far_moves_as_one() -> None:
    text = "- id: a\n  input: Hi\n    metadata:\n      k: v\n"
    _, line, hint = _explained(text)
    assert (line, hint) == (3, "indent lines 3 to 4 by 2 fewer spaces")


def test_config_setting_by_meaning_and_only_when_valid(tmp_path: Path) -> None:
    config = tmp_path / "agenteval.yaml"
    for text, hint in (
        ("cases: cases.yaml\n", "rename 'cases' to 'dataset'"),
        ("parallel: 4\n", "rename 'parallel' to 'concurrency'"),
        ("scorer: exact_match\n", "make it a list: `scorers: [exact_match]`"),
        ("trial: many\n", "known settings:"),  # `trials: many` would be rejected
    ):
        config.write_text(text)
        with pytest.raises(ConfigError) as caught:
            find_target(config)
        assert caught.value.line == 1
        assert hint in (caught.value.hint or ""), text


def test_an_import_failing_inside_a_library_points_at_the_users_line(tmp_path: Path) -> None:
    (tmp_path / "broken_agent.py").write_text('import json\n\nCONFIG = json.loads("{")\n')
    with pytest.raises(AgentLoadError) as caught:
        load_object("broken_agent.py:run", base_dir=tmp_path)
    assert caught.value.line == 3
    assert caught.value.file is not None and caught.value.file.endswith("broken_agent.py")
    assert "fix line 3" in (caught.value.hint or "")


def test_a_function_suggested_is_a_function(tmp_path: Path) -> None:
    (tmp_path / "agent_mod.py").write_text("import json\nRUNS = 3\n\ndef run(text):\n    pass\n")
    with pytest.raises(AgentLoadError) as caught:
        load_object("agent_mod.py:RUN", base_dir=tmp_path)
    assert caught.value.hint == "did you mean agent_mod.py:run?"
