"""What is wrong with a case that pydantic refuses, said as a case file's user reads it: one
`DatasetError` naming the line, the field, the mistake and its fix (a misspelt field gets the
one it most likely means)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from agenteval.case import MAX_TURNS_BELOW_WRITTEN, EvalCase, ExpectedCall, Rubric
from agenteval.casefiles.fields import (
    INPUT_FIELDS,
    MEANINGS,
    accepted_names,
    describe,
    meanings_of,
    model_at,
    noun,
    written_as,
)
from agenteval.casefiles.positions import Loc, dotted, is_index
from agenteval.casefiles.records import Record
from agenteval.errors import DatasetError
from agenteval.mock_errors import explain_mock
from agenteval.suggestions import meant, normalised
from agenteval.user_simulation import DEFAULT_MAX_TURNS, UserSimulation

__all__ = ["explain"]


@dataclasses.dataclass
class _Problem:
    path: Loc
    error: Any  # a pydantic ErrorDetails
    line: int | None
    order: int


def explain(exc: ValidationError, record: Record, file: str) -> DatasetError:
    """The first mistake pydantic found in the record, as one `DatasetError`."""
    problems: list[_Problem] = []
    for order, error in enumerate(exc.errors(include_url=False)):
        path = _data_path(error["loc"], record.data, error["type"])
        if error["type"] == MAX_TURNS_BELOW_WRITTEN:  # the case's mistake, in one field
            limit: Loc = ("user_simulation", "max_turns")
            path = limit if _has(record.data, limit) else limit[:1]
        problems.append(_Problem(path, error, None, order))
    # A value that fits one branch of a union (say, the list in `input: [...]`) also fails the
    # other branches' type checks; the deeper error inside the fitting branch is the real one.
    problems = [
        problem
        for problem in problems
        if not (
            problem.error["type"].endswith("_type")
            and any(
                len(other.path) > len(problem.path)
                and other.path[: len(problem.path)] == problem.path
                for other in problems
            )
        )
    ] or problems
    for problem in problems:
        problem.line = record.where.line(problem.path)
    # On one line, an unknown field before a missing one: `- tool: search` misses `name`
    # because `tool` is what the user wrote for it.
    first = min(
        problems,
        key=lambda p: (
            p.line if p.line is not None else 1 << 62,
            p.error["type"] != "extra_forbidden",
            p.order,
        ),
    )
    alike = [p.error for p in problems if p.path == first.path]
    message, hint, field = _message(first.path, alike, record)
    if field is not None and first.path[:1] == ("user_simulation",):
        field = written_as(first.path, record.fmt)  # a CSV file's own column
    return DatasetError(
        message,
        file=file,
        line=first.line,
        case=record.label,
        field=field,
        hint=hint,
    )


def _data_path(loc: Sequence[str | int], data: Any, kind: str) -> Loc:
    """The error's location as a path in the case's data, without pydantic's union-branch tags."""
    path: list[str | int] = []
    node = data
    for position, step in enumerate(loc):
        last = position == len(loc) - 1
        if _has_child(node, step):
            path.append(step)
            node = node[step]
        elif last and kind == "missing":
            path.append(step)
        elif isinstance(step, str) or isinstance(node, dict):
            continue  # a union branch such as 'str', or a tool mock's `rules.0` not written
        else:
            path.append(step)
            node = None
    return tuple(path)


_EXPECTED = {
    "string_type": "text",
    "string_sub_type": "text",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "dataclass_type": "a mapping",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "datetime_type": "a date and time (ISO 8601)",
    "datetime_parsing": "a date and time (ISO 8601)",
    "datetime_from_date_parsing": "a date and time (ISO 8601)",
    "none_required": "nothing (null)",
}


def _message(path: Loc, errors: list[Any], record: Record) -> tuple[str, str, str | None]:
    """One line saying what is wrong at `path`, a hint saying the fix, and the field's name."""
    error = errors[0]
    kind: str = error["type"]
    field = dotted(path) or None
    data = record.data
    if path[:1] == ("tool_mocks",):  # the tool named, the fix for a mock's own mistakes
        mock = explain_mock(path[1:], errors, data.get("tool_mocks"))
        if mock is not None:
            return (*mock, field)
    if kind == "extra_forbidden" and path:
        return _unknown_field(path, data)
    if kind == "missing" and path:
        mapping = noun(model_at(path[:-1]))
        return "required field is missing", f"add `{path[-1]}` to this {mapping}", field
    if kind == "invalid_key":
        return (
            f"field names must be text, got {describe(path[-1] if path else error['input'])}",
            "quote the field name, or remove it",
            field,
        )
    if "circular reference" in str(error["msg"]).lower():
        return (
            "the case contains itself",
            "remove the YAML alias (*name) that points back into its own case",
            field,
        )
    if kind == "value_error" and not path and not any(data.get(name) for name in INPUT_FIELDS):
        return (
            "the case has no input: it needs an `input`, a `conversation`, a `user_simulation` "
            "or an `agent_trace`",
            "add `input:` with what to ask the agent",
            "input",
        )
    if path[:1] == ("user_simulation",):
        said = _user_simulation(path, error, record.fmt)
        if said is not None:
            return (*said, field)
    if kind == "greater_than_equal":
        bound = error.get("ctx", {}).get("ge")
        return (
            f"must be {bound} or more, got {describe(error['input'])}",
            f"write a value of {bound} or more",
            field,
        )
    if all(e["type"] in _EXPECTED for e in errors):
        message, hint = _wrong_type(path, errors)
        return message, hint, field
    message = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    message = message[:1].lower() + message[1:]
    return message, "correct the value", field


def _user_simulation(path: Loc, error: Any, fmt: str) -> tuple[str, str] | None:
    """A simulated user's own mistakes: no user at all, a conversation of no turn."""
    csv = fmt == "csv"
    if path == ("user_simulation",) and error["type"] == "value_error":
        return (
            "the simulated user has neither a `goal` nor a `script`",
            "fill the user_goal column (what the simulated user wants; the run's "
            "user_simulator plays it) or the user_script column (module:function)"
            if csv
            else "add `goal:` (what the simulated user wants; the run's user_simulator plays "
            "it) or `script:` (a Python function playing the user: module:function)",
        )
    if path == ("user_simulation",) and isinstance(error["input"], str):
        return (
            f"expected a mapping, got {describe(error['input'])}",
            f"write the user's goal under `user_simulation:`, e.g. `user_simulation: {{goal: "
            f"{json.dumps(error['input'])}}}`",
        )
    if error["type"] == MAX_TURNS_BELOW_WRITTEN:
        written = error["ctx"]["written"]
        return (
            str(error["msg"]),
            f"write max_turns: {written} or more (the user messages the case writes, then "
            "the simulated user's), or write fewer turns",
        )
    if path == ("user_simulation", "max_turns") and error["type"] == "greater_than_equal":
        return (
            f"must be 1 or more, got {describe(error['input'])}: it counts the user's messages, "
            "the written ones included",
            f"write 1 or more (the default is {DEFAULT_MAX_TURNS}), or leave "
            + ("the cell empty" if csv else "`max_turns` out"),
        )
    return None


def _wrong_type(path: Loc, errors: list[Any]) -> tuple[str, str]:
    """What a value of the wrong type should have been, and how to write it."""
    given = errors[0]["input"]
    got = describe(given)
    model = model_at(path) if errors[0]["type"] == "model_type" else None
    if model is not None and model in _TEXT_SHORTHAND:
        return f"expected text or a mapping, got {got}", _TEXT_SHORTHAND[model]
    if model is not None:
        fields = ", ".join(model.model_fields)
        return (
            f"expected a mapping, got {got}",
            f"write the {noun(model)} with its fields: {fields}",
        )
    kinds = list(dict.fromkeys(_EXPECTED[e["type"]] for e in errors))
    wanted = kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + " or " + kinds[-1]
    message = f"expected {wanted}, got {got}"
    if path == ("input",) and len(kinds) > 1:
        return message, (
            'write the question as text, or a list of messages like [{"role": "user", '
            '"content": "..."}]'
        )
    scalar = isinstance(given, int | float | date | datetime) and not isinstance(given, bool)
    if kinds[0] == "text" and (scalar or isinstance(given, bool)):
        shown = given.isoformat() if isinstance(given, date | datetime) else json.dumps(given)
        return message, f'put the value in quotes: "{shown}"'
    if kinds[0] == "a list" and isinstance(given, str):
        return message, f"write a list, e.g. {json.dumps([given])}"
    examples = {
        "a list": 'write a list, e.g. ["first", "second"]',
        "a mapping": 'write a mapping of names to values, e.g. {"name": "value"}',
        "a whole number": "write a whole number, e.g. 3",
        "a number": "write a number, e.g. 0.5",
        "true or false": "write true or false",
        "a date and time (ISO 8601)": "write a date and time such as 2024-05-01T12:00:00Z",
    }
    return message, examples.get(kinds[0], f"write {wanted}")


_TEXT_SHORTHAND: dict[type[BaseModel], str] = {
    Rubric: "write the rubric as text, or as a mapping with `content:` (and `weight:`)",
    ExpectedCall: "write the tool's name, or a mapping with `name:` (and `arguments:`)",
}


def _unknown_field(path: Loc, data: dict[str, Any]) -> tuple[str, str, str | None]:
    key = str(path[-1])
    model = model_at(path[:-1])
    names = accepted_names(model) if model is not None else {}
    field = dotted(path)
    if key in names:  # another name of a field that is given too
        other = next(
            name
            for name, target in names.items()
            if target == names[key] and name != key and _has(data, (*path[:-1], name))
        )
        return (
            f"{key!r} and {other!r} are two names for one field, and both are given",
            f"keep one of {other!r} and {key!r}",
            field,
        )
    parent = path[:-1]
    close = meant(key, names, MEANINGS, lambda name: _renamed_fits(data, parent, key, name))
    if close is not None:
        return (
            f"unknown field — did you mean {close!r}?",
            f"rename {key!r} to {close!r}",
            field,
        )
    given = next((n for n in meanings_of(key) if n in names and _has(data, (*parent, n))), None)
    if given is not None:
        return (
            f"unknown field — it means {given!r}, which is given too",
            f"remove {key!r}",
            field,
        )
    user = _user_field(key) if not parent else None
    if user is not None:
        return (
            f"unknown field — a simulated user's {user!r} goes under `user_simulation:`",
            f"move it under `user_simulation:` as `{user}:`",
            field,
        )
    allowed = ", ".join(names) if names else "none"
    return "unknown field", f"the fields allowed here are: {allowed}", field


def _user_field(key: str) -> str | None:
    """The field of a case's `user_simulation` that `key`, written at the case's level, means
    (`goal`, `user_persona`, `turns_max`), or None."""
    fields = UserSimulation.model_fields
    bare = normalised(key).removeprefix("user_")
    for name in (bare, *meanings_of(key), *meanings_of(bare)):
        if name in fields and name != "extra":
            return name
    return None


def _renamed_fits(data: dict[str, Any], parent: Loc, key: str, name: str) -> bool:
    """Whether the case, with `key` renamed `name` in the mapping at `parent`, would be valid
    there: no such field given already, and no error at the renamed field (the case may have
    other mistakes; each gets its own message)."""
    copy: Any = dict(data)
    node = copy
    for step in parent:  # copy the path down to the mapping, so `data` stays as it is
        child = node[step]
        node[step] = child = dict(child) if isinstance(child, dict) else list(child)
        node = child
    if not isinstance(node, dict) or name in node:
        return False
    renamed = {name if k == key else k: v for k, v in node.items()}
    node.clear()
    node.update(renamed)
    try:
        EvalCase.model_validate(copy)
    except ValidationError as exc:
        at = (*parent, name)
        field = accepted_names(model_at(parent) or EvalCase).get(name, name)
        for error in exc.errors(include_url=False):
            loc = _data_path(error["loc"], copy, error["type"])
            if loc[: len(at)] in (at, (*parent, field)):
                return False
    except RecursionError:
        return False
    return True


def _has(data: Any, path: Loc) -> bool:
    node = data
    for step in path:
        if not _has_child(node, step):
            return False
        node = node[step]
    return True


def _has_child(node: Any, step: str | int) -> bool:
    if isinstance(node, dict):
        return step in node
    return isinstance(node, list) and is_index(step, node)
