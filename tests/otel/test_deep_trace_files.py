"""A trace file nested past what Python can read is one clear error naming the file and the line,
never a traceback; a trial nested deep but readable is scored and stored cut. Run as a user runs
`agenteval score`: in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.python_json import UNREADABLE, needs_unreadable

from agenteval.errors import DatasetError
from agenteval.jsonsafe import DEEP
from agenteval.otel.reading import read_recorded

TOO_DEEP = UNREADABLE
"""Past what this Python's `json.loads` reads (`tests/python_json.py`)."""

CASES = [{"id": "a", "input": "Say hi"}, {"id": "b", "input": "Say hi"}]


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def agenteval(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        timeout=120,
    )


def trial_line(case_id: str, metadata: str = "{}") -> str:
    return f'{{"case_id": "{case_id}", "output": "hi", "metadata": {metadata}}}\n'


FILES = {
    "otlp.json": ('{\n  "resourceSpans": [\n    ' + nested(TOO_DEEP) + "\n  ]\n}\n", 3),
    "trials.jsonl": (trial_line("a") + trial_line("b", f'{{"m": {nested(TOO_DEEP)}}}'), 2),
    "first.jsonl": (trial_line("a", f'{{"m": {nested(TOO_DEEP)}}}') + trial_line("b"), 1),
    "one.json": (
        json.dumps({"case_id": "a", "output": "hi"})[:-1] + ', "m": [\n' + nested(TOO_DEEP) + "]}",
        2,
    ),
}


@needs_unreadable
@pytest.mark.parametrize("name", sorted(FILES))
def test_a_trace_file_nested_too_deeply_is_one_clear_error(tmp_path: Path, name: str) -> None:
    text, line = FILES[name]
    (tmp_path / name).write_text(text)
    (tmp_path / "cases.json").write_text(json.dumps(CASES))
    done = agenteval(tmp_path, "score", name, "--cases", "cases.json", "--store", "runs.db")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert f"{name}:{line}" in done.stderr, done.stderr
    assert "nested" in done.stderr and "hint:" in done.stderr, done.stderr
    # Nothing was stored from a file that could not be read whole.
    assert not (tmp_path / "runs.db").exists()


@needs_unreadable
def test_the_error_says_how_deep_and_the_api_raises_it_too(tmp_path: Path) -> None:
    path = tmp_path / "trials.jsonl"
    path.write_text(FILES["trials.jsonl"][0])
    with pytest.raises(DatasetError) as raised:
        read_recorded(path)
    assert raised.value.line == 2
    assert f"{TOO_DEEP + 2:,} levels" in str(raised.value)


def test_a_trial_nested_deep_but_readable_is_scored_and_stored_cut(tmp_path: Path) -> None:
    (tmp_path / "trials.jsonl").write_text(
        trial_line("a") + trial_line("b", f'{{"m": {nested(300)}}}')
    )
    (tmp_path / "cases.json").write_text(json.dumps(CASES))
    done = agenteval(
        tmp_path,
        "score",
        "trials.jsonl",
        "--cases",
        "cases.json",
        "--store",
        "runs.db",
        "--json",
        "out.json",
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    stored = (tmp_path / "runs.db").read_bytes()
    assert DEEP.encode() in stored


@pytest.mark.parametrize(
    "text",
    ['{"resourceSpans": []}\n', '{"resourceSpans": [[[[]]]]}\n', "[]\n"],
    ids=["no-spans", "nesting-only", "empty-list"],
)
def test_a_trace_file_read_whole_with_nothing_in_it_says_what_a_trace_file_holds(
    tmp_path: Path, text: str
) -> None:
    # The path was found and read: "check the path" would send the user the wrong way.
    (tmp_path / "t.json").write_text(text)
    (tmp_path / "cases.json").write_text(json.dumps(CASES))
    done = agenteval(tmp_path, "score", "t.json", "--cases", "cases.json", "--store", "runs.db")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "check the path" not in done.stderr, done.stderr
    assert "resourceSpans" in done.stderr, done.stderr
