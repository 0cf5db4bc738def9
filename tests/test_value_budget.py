"""The size budget (`jsonsafe.MAX_VALUES`): data whose size comes from shared references.

A list referenced nine times at each of twelve levels is a few kilobytes in memory and 9**12
values written out. Before the budget, copying it (`plain_copy`, as `@tool` does) or storing a
record holding it walked every one of them: a hang. Now the rest past `MAX_VALUES` values is
cut with a marker and the cut noted; a record under the budget is pydantic's own JSON, byte for
byte; a YAML file whose aliases expand past the budget is refused when it is read.

The guard below only stops a hang (the fixed code takes well under a second).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from agenteval.datasets import load_cases
from agenteval.errors import DatasetError
from agenteval.jsonsafe import CUT_NOTE, MAX_VALUES, TOO_MANY, model_json, plain_copy
from agenteval.store.encoding import to_json as _to_json
from agenteval.trace import ToolCall, Trial

GUARD_S = 60
T = TypeVar("T")


def guarded(work: Callable[[], T]) -> T:
    """`work()`, failing the test (not hanging it) if it does not end within the guard."""
    done: list[T] = []
    raised: list[BaseException] = []

    def run() -> None:
        try:
            done.append(work())
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(GUARD_S)
    if raised:
        raise raised[0]
    assert done, f"still working after {GUARD_S} s: the walk is not bounded"
    return done[0]


def laughs(levels: int) -> list[Any]:
    value: list[Any] = ["lol"]
    for _ in range(levels):
        value = [value] * 9  # the same list, nine times, at every level
    return value


def count(value: Any) -> int:
    """Values as the budget counts them: the items of every list and mapping, written out."""
    if isinstance(value, dict):
        return len(value) + sum(count(item) for item in value.values())
    if isinstance(value, list):
        return len(value) + sum(count(item) for item in value)
    return 0


def test_a_tool_result_of_shared_references_is_copied_cut() -> None:
    copied, cuts = guarded(lambda: plain_copy(laughs(12)))
    assert cuts and cuts[0].endswith(f"more than {MAX_VALUES:,} values"), cuts
    assert TOO_MANY in json.dumps(copied)
    assert count(copied) <= 2 * MAX_VALUES  # the budget, plus one marker per open container


def test_a_record_of_shared_references_is_stored_cut_and_noted() -> None:
    trial = Trial(case_id="c", output="A", metadata={"laughs": laughs(12), "kept": "yes"})
    text = guarded(lambda: _to_json(trial))
    stored = Trial.model_validate_json(text)
    assert stored.output == "A"
    assert stored.metadata["kept"] == "yes"
    assert stored.metadata[CUT_NOTE] == [
        f"metadata.laughs.0.0.0.…: more than {MAX_VALUES:,} values"
    ]
    assert TOO_MANY in text


def test_a_list_of_one_shared_tool_call_is_bounded_too() -> None:
    call = ToolCall(name="fetch", result=laughs(5))  # 9**5 values, under the budget alone
    trial = Trial(case_id="c", tool_calls=[call] * 1_000)  # ... a thousand times over
    result = guarded(lambda: model_json(trial))
    assert any("more than" in cut for cut in result.cuts), result.cuts
    assert len(result.text) < 20 * MAX_VALUES


def rows(values: int) -> list[list[int]]:
    """A list of rows holding exactly `values` values, the rows all one shared list."""
    width = 999
    count_rows, rest = divmod(values, width + 1)
    table: list[list[int]] = [list(range(width))] * count_rows
    if rest:
        table.append(list(range(rest - 1)))
    return table


def test_a_value_of_exactly_the_budget_is_copied_whole_and_one_more_is_cut() -> None:
    whole = rows(MAX_VALUES)
    assert count(whole) == MAX_VALUES
    copied, cuts = plain_copy(whole)
    assert cuts == () and copied == whole

    over = rows(MAX_VALUES + 1)
    assert count(over) == MAX_VALUES + 1
    copied, cuts = plain_copy(over)
    # The row with which the count passes the budget is cut, and the rest after it (noted once).
    assert cuts == (f"{len(over) - 2}: more than {MAX_VALUES:,} values",)
    assert copied[:-2] == over[:-2] and copied[-2:] == [TOO_MANY, TOO_MANY]


def test_a_record_just_under_the_budget_is_pydantics_own_json() -> None:
    table = rows(MAX_VALUES - 100)  # the record's own fields count too: leave them room
    trial = Trial(case_id="c", output="A", metadata={"table": table})
    text = _to_json(trial)
    assert text == trial.model_dump_json(exclude_defaults=True)
    assert CUT_NOTE not in text

    trial = Trial(case_id="c", output="A", metadata={"table": rows(MAX_VALUES + 1)})
    stored = Trial.model_validate_json(_to_json(trial))
    assert stored.metadata[CUT_NOTE][0].endswith(f"more than {MAX_VALUES:,} values")


def test_a_tool_result_of_50000_rows_is_kept_whole() -> None:
    result = [
        {"id": i, "name": f"row {i}", "email": f"u{i}@example.org", "score": i / 7,
         "active": i % 2 == 0, "city": "Paris", "zip": "75001", "note": None}
        for i in range(50_000)
    ]  # fmt: skip
    copied, cuts = plain_copy(result)
    assert cuts == () and copied == result
    trial = Trial(case_id="c", tool_calls=[ToolCall(name="query", result=result)])
    assert _to_json(trial) == trial.model_dump_json(exclude_defaults=True)


# --- YAML aliases


def bomb(levels: int, indent: str = "      ") -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(indent + line for line in lines)


def test_a_yaml_alias_bomb_is_refused_with_file_line_and_field(tmp_path: Path) -> None:
    file = tmp_path / "cases.yaml"
    file.write_text(
        f"- id: fine\n  input: hi\n- id: bomb\n  input: hi\n  metadata:\n    laughs:\n{bomb(12)}\n"
    )
    with pytest.raises(DatasetError) as caught:
        guarded(lambda: load_cases(file))
    error = caught.value
    text = str(error)
    assert "cases.yaml:13" in text  # the line of `a6: &a6 [*a5, ...]`, where the count passes
    assert "case 'bomb'" in text and "metadata.laughs.a6" in text
    assert f"expand to more than {MAX_VALUES:,} values" in text


def test_yaml_aliases_that_expand_under_the_budget_load(tmp_path: Path) -> None:
    file = tmp_path / "cases.yaml"
    file.write_text(f"- id: shared\n  input: hi\n  metadata:\n    laughs:\n{bomb(5)}\n")
    (case,) = load_cases(file)
    assert count(case.metadata) < MAX_VALUES
    assert case.metadata["laughs"]["a4"][8][8][8][8] == ["lol"] * 9


def test_an_alias_bomb_in_agenteval_yaml_is_one_clear_error(tmp_path: Path) -> None:
    # Under the judge's `params` (free-form, kept in the run's settings): before, the run
    # started and hung storing its settings.
    (tmp_path / "cases.json").write_text('[{"input": "hi"}]')
    (tmp_path / "agent.py").write_text("def answer(q):\n    return q\n")
    (tmp_path / "agenteval.yaml").write_text(
        "dataset: cases.json\nagent: agent.py:answer\njudge:\n  model: openai:gpt-4o-mini\n"
        f"  params:\n    laughs:\n{bomb(12, '      ')}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "agenteval", "run", ".", "--store", "runs.db"],
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "200", "OPENAI_API_KEY": "sk-test-not-used"},
        capture_output=True,
        text=True,
        timeout=GUARD_S,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "agenteval.yaml:3, field 'judge.params.laughs.a6'" in done.stderr
    assert f"aliases expand to more than {MAX_VALUES:,} values" in done.stderr
    assert not (tmp_path / "runs.db").exists()
