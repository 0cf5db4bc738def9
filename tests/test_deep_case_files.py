"""A case file nested too deeply (JSON, JSONL, YAML; CSV cannot nest) is one clear error naming
the file, the line and the case, never a RecursionError traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.cli_process import agenteval_cli

from agenteval.datasets import load_cases
from agenteval.errors import DatasetError
from agenteval.jsonsafe import MAX_DEPTH


def nested(levels: int, leaf: Any = "bottom") -> Any:
    value = leaf
    for _ in range(levels):
        value = {"x": value}
    return value


def depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in item)
    return deepest


cli = agenteval_cli


def test_a_json_case_file_nested_500_deep_is_one_error_naming_file_and_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cases.json"
    cases = [{"id": "ok", "input": "q"}, {"id": "deep", "input": "q", "metadata": nested(500)}]
    path.write_text(json.dumps(cases, indent=1))
    with pytest.raises(DatasetError) as caught:
        load_cases(path)
    error = caught.value
    text = path.read_text().splitlines()
    assert error.file == str(path)
    assert error.case == "deep"
    assert "nested more than 64 levels deep" in str(error)
    # The line where the 65th level opens.
    assert error.line is not None and text[error.line - 1].strip().startswith('"x": {')
    assert sum(line.count("{") for line in text[: error.line]) == 2 + 64


def test_a_jsonl_case_nested_too_deeply_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        json.dumps({"input": "a"}) + "\n" + json.dumps({"input": "b", "metadata": nested(70)})
    )
    with pytest.raises(DatasetError) as caught:
        load_cases(path)
    assert (caught.value.line, caught.value.case) == (2, 2)
    assert "nested more than 64 levels deep" in str(caught.value)


@pytest.mark.parametrize("style", ["block", "flow"])
def test_a_yaml_case_file_nested_600_deep_is_one_error_naming_file_and_line(
    tmp_path: Path, style: str
) -> None:
    path = tmp_path / "cases.yaml"
    if style == "block":
        lines = ["- id: deep", "  input: q", "  metadata:"]
        lines += ["    " + "  " * level + "x:" for level in range(600)]
        lines.append("    " + "  " * 600 + "bottom")
        path.write_text("\n".join(lines) + "\n")
        expected_line = 3 + 63  # the 65th level: case 1, metadata 2, then 63 `x:` lines
    else:
        path.write_text("- id: deep\n  input: q\n  metadata: " + "[" * 600 + "]" * 600 + "\n")
        expected_line = 3
    with pytest.raises(DatasetError) as caught:
        load_cases(path)
    error = caught.value
    assert (error.file, error.line, error.case) == (str(path), expected_line, "deep")
    assert "nested more than 64 levels deep" in str(error)


def test_a_case_64_levels_deep_loads(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump([{"input": "q", "metadata": {"v": nested(62)}}]))
    (case,) = load_cases(path)
    assert depth(case.model_dump(mode="json")) == MAX_DEPTH


def test_the_command_names_a_deep_yaml_case_file_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("def run(q):\n    return 'x'\n")
    (tmp_path / "cases.yaml").write_text(
        "- id: deep\n  input: q\n  metadata: " + "[" * 600 + "]" * 600 + "\n"
    )
    done = cli(tmp_path, "run", "cases.yaml", "--agent", "agent.py:run", "--store", "s.db")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "cases.yaml:3, case 'deep'" in done.stdout + done.stderr
    assert "nested more than 64 levels deep" in done.stdout + done.stderr


def test_a_config_nested_too_deeply_is_one_error(tmp_path: Path) -> None:
    (tmp_path / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nsettings: " + "[" * 600 + "]" * 600 + "\n"
    )
    done = cli(tmp_path, "run", "agenteval.yaml", "--store", "s.db")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "agenteval.yaml: invalid YAML: nested too deeply" in done.stdout + done.stderr
