"""Simulated users declared in case files (`user_simulation:`): read from YAML, JSON, JSONL and
CSV (its `user_*` columns), written back by `dump_cases`, described by the schema; scripts
resolved against the case file's folder; and each mistake one `DatasetError` naming the file,
the line, the case and the field, with the fix."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from agenteval import EvalCase, UserSimulation
from agenteval.casefiles.script_check import check_scripts, checked_scripts
from agenteval.datasets import case_file_schema, dump_cases, load_cases
from agenteval.errors import DatasetError

SIMULATED = EvalCase(
    id="refund",
    input="My order arrived broken.",
    user_simulation=UserSimulation(
        goal="Get a refund for order 8812.",
        persona="Impatient; gives the order number only when asked.",
        starting_prompt="Hello?",
        max_turns=6,
        extra={"source": "hand-written"},
    ),
)

USERS_PY = """
def refund_user(messages):
    return None if len(messages) > 2 else "order 8812"
"""


def _error(path: Path) -> DatasetError:
    with pytest.raises(DatasetError) as caught:
        load_cases(path)
    return caught.value


@pytest.mark.parametrize("suffix", ["yaml", "json", "jsonl"])
def test_a_simulated_user_round_trips(tmp_path: Path, suffix: str) -> None:
    path = dump_cases([SIMULATED], tmp_path / f"cases.{suffix}")

    assert load_cases(path) == [SIMULATED]


def test_a_case_may_be_a_simulated_user_alone(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("- user_simulation:\n    goal: Get a refund.\n    max_turns: 3\n")

    [case] = load_cases(path)

    assert case.input is None and case.conversation is None
    assert case.user_simulation == UserSimulation(goal="Get a refund.", max_turns=3)


def test_csv_columns_fill_the_simulated_user(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(
        "id,input,user_goal,user_persona,user_starting_prompt,user_max_turns,user_script\n"
        'r1,,"Refund, order 8812",terse,Hi there, 4 ,\n'
        "r2,hello,,,,,users:refund_user\n"
        "r3,hello,,,,,\n"
    )
    (tmp_path / "users.py").write_text(USERS_PY)

    r1, r2, r3 = load_cases(path)

    assert r1.user_simulation == UserSimulation(
        goal="Refund, order 8812", persona="terse", starting_prompt="Hi there", max_turns=4
    )
    assert r2.user_simulation is not None
    assert r2.user_simulation.script == f"{tmp_path.resolve() / 'users.py'}:refund_user"
    assert r3.user_simulation is None


@pytest.mark.parametrize(
    ("text", "line", "field", "message", "hint"),
    [
        (
            "- id: a\n  input: hi\n  user_simulation:\n    goal: g\n    turns_max: 4\n",
            5,
            "user_simulation.turns_max",
            "did you mean 'max_turns'?",
            "rename 'turns_max' to 'max_turns'",
        ),
        (
            "- id: a\n  user_simulation:\n    user_goal: get a refund\n",
            3,
            "user_simulation.user_goal",
            "did you mean 'goal'?",
            "rename 'user_goal' to 'goal'",
        ),
        (
            "- id: a\n  user_simulation:\n    goal: g\n    prompt: My order broke.\n",
            4,
            "user_simulation.prompt",
            "did you mean 'starting_prompt'?",
            "rename 'prompt' to 'starting_prompt'",
        ),
        (
            "- id: a\n  user_simulation:\n    goal: g\n    max_turns: 0\n",
            4,
            "user_simulation.max_turns",
            "must be 1 or more, got the number 0",
            "write 1 or more (the default is 10), or leave `max_turns` out",
        ),
        (
            "- id: a\n  input: hi\n  user_simulation:\n    persona: grumpy\n",
            3,
            "user_simulation",
            "neither a `goal` nor a `script`",
            "add `goal:`",
        ),
        (
            "- id: a\n  user_simulation:\n    script: users.py\n",
            3,
            "user_simulation.script",
            "the scripted user 'users.py' is not a reference to a function",
            "write users.py:FUNCTION",
        ),
        (
            "- id: a\n  user_simulation:\n    script: users.refund_user\n",
            3,
            "user_simulation.script",
            "is not a reference to a function",
            "did you mean users:refund_user?",
        ),
        (
            "- id: a\n  input: hi\n  user_goal: get a refund\n",
            3,
            "user_goal",
            "a simulated user's 'goal' goes under `user_simulation:`",
            "move it under `user_simulation:` as `goal:`",
        ),
        (
            "- id: a\n  input: hi\n  user_simulation: get a refund\n",
            3,
            "user_simulation",
            "expected a mapping, got text 'get a refund'",
            'user_simulation: {goal: "get a refund"}',
        ),
        (
            "- id: a\n  input: hi\n  simulated_user:\n    goal: g\n",
            3,
            "simulated_user",
            "did you mean 'user_simulation'?",
            "rename 'simulated_user' to 'user_simulation'",
        ),
    ],
)
def test_each_mistake_is_one_message(
    tmp_path: Path, text: str, line: int, field: str, message: str, hint: str
) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(text)

    error = _error(path)

    assert (error.file, error.line, error.case, error.field) == (str(path), line, "a", field)
    assert message in error.message
    assert error.hint is not None and hint in error.hint


def test_a_mistake_in_json_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    case = {"id": "a", "input": "hi", "user_simulation": {"goal": "g", "turns_max": 3}}
    path.write_text(json.dumps([case], indent=2))

    error = _error(path)

    assert (error.line, error.field) == (7, "user_simulation.turns_max")
    assert "did you mean 'max_turns'?" in error.message


def test_a_prompt_outside_the_block_still_means_the_input(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("- id: a\n  prompt: hi\n")

    assert "did you mean 'input'?" in _error(path).message


@pytest.mark.parametrize(
    ("row", "field", "message", "hint"),
    [
        ("a,,grumpy,", "user_goal", "neither a `goal` nor a `script`", "fill the user_goal"),
        ("a,g,,0", "user_max_turns", "must be 1 or more", "leave the cell empty"),
        ("a,g,,x", "user_max_turns", "expected a whole number", "write a whole number"),
    ],
)
def test_a_csv_mistake_names_its_column(
    tmp_path: Path, row: str, field: str, message: str, hint: str
) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(f"id,user_goal,user_persona,user_max_turns\n{row}\n")

    error = _error(path)

    assert (error.line, error.case, error.field) == (2, "a", field)
    assert message in error.message
    assert error.hint is not None and hint in error.hint


@pytest.mark.parametrize(
    ("column", "meant"),
    [("max_turns", "user_max_turns"), ("persona", "user_persona"), ("goal", "user_goal")],
)
def test_a_csv_column_named_like_the_field_suggests_its_column(
    tmp_path: Path, column: str, meant: str
) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(f"id,input,{column}\na,hi,x\n")

    error = _error(path)

    assert (error.line, error.field) == (1, column)
    assert f"did you mean {meant!r}?" in error.message


def test_a_script_resolves_against_the_case_files_folder(tmp_path: Path) -> None:
    folder = tmp_path / "evals"
    (folder / "helpers").mkdir(parents=True)
    (folder / "users.py").write_text(USERS_PY)
    (folder / "helpers" / "more.py").write_text(USERS_PY)
    path = folder / "cases.yaml"
    path.write_text(
        "- id: by-path\n  user_simulation: {script: 'users.py:refund_user'}\n"
        "- id: by-module\n  user_simulation: {script: 'users:refund_user'}\n"
        "- id: dotted\n  user_simulation: {script: 'helpers.more:refund_user'}\n"
        "- id: installed\n  user_simulation: {script: 'json:loads'}\n"
    )
    here = Path.cwd()
    os.chdir(tmp_path)  # elsewhere than the case file
    try:
        by_path, by_module, dotted, installed = load_cases("evals/cases.yaml")
    finally:
        os.chdir(here)

    evals = folder.resolve()
    assert by_path.user_simulation and by_module.user_simulation
    assert by_path.user_simulation.script == f"{evals / 'users.py'}:refund_user"
    assert by_module.user_simulation.script == f"{evals / 'users.py'}:refund_user"
    assert dotted.user_simulation and installed.user_simulation
    assert dotted.user_simulation.script == f"{evals / 'helpers' / 'more.py'}:refund_user"
    assert installed.user_simulation.script == "json:loads"


def test_an_id_derived_from_the_content_does_not_depend_on_the_folder(tmp_path: Path) -> None:
    ids = []
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "users.py").write_text(USERS_PY)
        (folder / "cases.yaml").write_text("- user_simulation: {script: 'users.py:refund_user'}\n")
        [case] = load_cases(folder / "cases.yaml")
        ids.append(case.id)
        # written back elsewhere, it reads back as the same case (its id kept)
        assert load_cases(dump_cases([case], tmp_path / f"{name}-copy.yaml")) == [case]

    assert ids[0] == ids[1]


def test_a_script_that_does_not_load_names_the_file_line_and_case(tmp_path: Path) -> None:
    (tmp_path / "users.py").write_text(USERS_PY)
    path = tmp_path / "cases.yaml"
    path.write_text(
        "- id: good\n  user_simulation: {script: 'users.py:refund_user'}\n"
        "- id: typo\n  input: hi\n  user_simulation:\n    script: users.py:refund_usr\n"
    )

    with pytest.raises(DatasetError) as caught:
        check_scripts(load_cases(path), path)

    error = caught.value
    assert (error.file, error.line, error.case) == (str(path), 6, "typo")
    assert error.field == "user_simulation.script"
    assert "cannot be loaded" in error.message
    assert error.hint == "did you mean users.py:refund_user?"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("raise RuntimeError('no key')\n", "RuntimeError: no key"),
        ("refund_user = 42\n", "is not a function (it is int)"),
    ],
)
def test_a_script_that_raises_or_is_no_function_is_refused(
    tmp_path: Path, source: str, message: str
) -> None:
    (tmp_path / "broken_users.py").write_text(source)
    path = tmp_path / "cases.csv"
    path.write_text("id,input,user_script\na,hi,broken_users.py:refund_user\n")

    with pytest.raises(DatasetError) as caught:
        list(checked_scripts(iter(load_cases(path)), path))

    error = caught.value
    assert (error.line, error.case, error.field) == (2, "a", "user_script")
    assert message in error.message


def test_the_schema_describes_the_block() -> None:
    schema = case_file_schema()
    validator = jsonschema.Draft202012Validator(schema)
    good = [
        {"user_simulation": {"goal": "refund", "max_turns": 3}},
        {"input": "hi", "user_simulation": {"script": "users.py:refund_user"}},
    ]
    bad = [
        [{"user_simulation": {"persona": "grumpy"}}],
        [{"user_simulation": {"goal": "g", "max_turns": 0}}],
        [{"user_simulation": {"goal": "g", "turns_max": 3}}],
        [{"user_simulation": {"script": "users.py"}}],
    ]

    assert not list(validator.iter_errors(good))
    for document in bad:
        assert list(validator.iter_errors(document)), document
    described = schema["$defs"]["UserSimulation"]["properties"]
    assert "relative to the case file's folder" in described["script"]["description"]
