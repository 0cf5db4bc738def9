"""The CSV reader (`.csv`, comma-separated, UTF-8): a header row, then one row per case.

The columns are the text fields (`id`, `input`, `expected_output`, `context`), `max_tool_calls`,
the list fields (a JSON array, or items separated by `|`) and `metadata.<key>`, one column per
metadata key; `tool_mocks`, `initial_state` and `expected_state` as a JSON object in the cell,
`tool_mocks_only` as true or false; a simulated user's fields as `user_goal`, `user_persona`,
`user_starting_prompt`, `user_max_turns` and `user_script` (its `user_simulation`); an empty
cell leaves its field unset. A case with a
`conversation` or an `agent_trace` needs a YAML, JSON or JSONL file."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Iterator
from typing import Any

from agenteval.casefiles.fields import CSV_USER_COLUMNS, MEANINGS, meanings_of
from agenteval.casefiles.positions import FixedLine
from agenteval.casefiles.records import Record, no_cases
from agenteval.errors import DatasetError
from agenteval.suggestions import meant

__all__ = ["csv_records"]


_CSV_TEXT = ("id", "input", "expected_output", "context")
_CSV_NUMBERS = ("max_tool_calls", "tool_mocks_only")
_CSV_OBJECTS = ("tool_mocks", "initial_state", "expected_state")  # a JSON object in the cell
_CSV_LISTS = (
    "expected_tools",
    "expected_tool_calls",
    "expected_trajectory",
    "relevant_docs",
    "must_not_contain",
    "keywords",
    "tags",
    "rubrics",
)
_CSV_COLUMNS = (*_CSV_TEXT, *_CSV_NUMBERS, *_CSV_LISTS, *_CSV_OBJECTS, *CSV_USER_COLUMNS)
_METADATA_PREFIX = "metadata."


@dataclasses.dataclass
class _Column:
    name: str  # "" for a column without a header
    index: int  # 1-based


def csv_records(text: str, file: str) -> Iterator[Record]:
    """The cases of a .csv file's text, one a row after the header."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[_Column] | None = None
    header_line = 1
    number = 0
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            runs_on = "end of data" in str(exc)
            raise DatasetError(
                "invalid CSV: a quoted cell in this row never ends"
                if runs_on
                else f"invalid CSV: {exc}",
                file=file,
                line=start if runs_on else max(reader.line_num, start),
                hint="close the quoted cell with a quote"
                if runs_on
                else 'inside a quoted cell, write a quote as two quotes ("")',
            ) from exc
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header_line = start
            header = _csv_header(row, file, start)
            continue
        number += 1
        data = _csv_row(row, header, file, start, header_line, number)
        yield Record(number, data, FixedLine(start), "csv")
    if header is None:
        raise no_cases(file, "csv")


def _csv_header(row: list[str], file: str, line: int) -> list[_Column]:
    columns: list[_Column] = []
    seen: dict[str, int] = {}
    for index, cell in enumerate(row, start=1):
        name = cell.strip()
        column = _Column(name, index)
        columns.append(column)
        if not name:
            continue
        if name in seen:
            raise DatasetError(
                f"column {name!r} appears twice (columns {seen[name]} and {index})",
                file=file,
                line=line,
                field=name,
                hint="keep one of the two columns",
            )
        seen[name] = index
        if name in _CSV_COLUMNS:
            continue
        if name.startswith(_METADATA_PREFIX) and name[len(_METADATA_PREFIX) :].strip():
            continue
        close = _csv_meant(name, row)
        raise DatasetError(
            _csv_unknown_column(name, close),
            file=file,
            line=line,
            field=name,
            hint=_csv_column_hint(name, close),
        )
    if "expected_tools" in seen and "expected_tool_calls" in seen:
        raise DatasetError(
            "columns 'expected_tools' and 'expected_tool_calls' are two names for one field",
            file=file,
            line=line,
            field="expected_tool_calls",
            hint="keep one of the two columns",
        )
    return columns


def _csv_meant(name: str, header: list[str]) -> str | None:
    """The column an unknown column most likely means (by meaning, then spelling), when the
    header does not have it already."""
    taken = {cell.strip() for cell in header}
    if name in ("agent_trace", "conversation") or name.startswith("metadata"):
        return None
    # A simulated user's field by its own name or another (`max_turns`, `persona`): its column.
    field = name.strip().lower().removeprefix("user_")
    for meaning in (field, *meanings_of(name), *meanings_of(field)):
        column = f"user_{meaning}"
        if column in CSV_USER_COLUMNS and column != name and column not in taken:
            return column
    return meant(name, _CSV_COLUMNS, MEANINGS, lambda column: column not in taken)


def _csv_unknown_column(name: str, close: str | None) -> str:
    if name in ("agent_trace", "conversation"):
        return f"a {name.replace('_', ' ')} cannot be given in a CSV file"
    if name == "metadata" or name == _METADATA_PREFIX.rstrip(".") + ".":
        return "metadata goes in one column per key, named `metadata.<key>`"
    if close:
        return f"unknown column — did you mean {close!r}?"
    return "unknown column"


def _csv_column_hint(name: str, close: str | None) -> str:
    if name in ("agent_trace", "conversation"):
        return "write cases with a conversation or an agent trace in a YAML, JSON or JSONL file"
    if name.startswith("metadata"):
        return "name the column after the key, e.g. `metadata.difficulty`"
    if close:
        return f"rename the column {name!r} to {close!r}"
    return (
        "the columns are "
        + ", ".join(_CSV_COLUMNS)
        + " and metadata.<key>; put other values in metadata.<key> columns"
    )


def _csv_row(
    row: list[str], header: list[_Column], file: str, line: int, header_line: int, number: int
) -> dict[str, Any]:
    data: dict[str, Any] = {}
    metadata: dict[str, str] = {}
    user: dict[str, str] = {}
    id_at = next((column.index - 1 for column in header if column.name == "id"), None)
    row_id = row[id_at].strip() if id_at is not None and id_at < len(row) else ""
    label: str | int = row_id or number
    for index, cell in enumerate(row):
        if not cell.strip():
            continue
        if index >= len(header) or not header[index].name:
            raise DatasetError(
                f"a value in column {index + 1}, which has no name in the header "
                f"(line {header_line})",
                file=file,
                line=line,
                case=label,
                hint="name the column in the header row, or remove the value",
            )
        name = header[index].name
        if name.startswith(_METADATA_PREFIX):
            metadata[name[len(_METADATA_PREFIX) :].strip()] = cell
        elif name in CSV_USER_COLUMNS:
            field = CSV_USER_COLUMNS[name]
            user[field] = cell.strip() if field in ("max_turns", "script") else cell
        elif name in _CSV_LISTS:
            data[name] = _csv_list(cell, name, file, line, label)
        elif name in _CSV_OBJECTS:
            data[name] = _csv_object(cell, name, file, line, label)
        elif name in _CSV_NUMBERS:
            data[name] = cell.strip()
        else:
            data[name] = cell
    if metadata:
        data["metadata"] = metadata
    if user:
        data["user_simulation"] = user
    return data


def _csv_list(cell: str, column: str, file: str, line: int, label: str | int) -> list[Any]:
    text = cell.strip()
    if not text.startswith("["):
        return [item.strip() for item in text.split("|") if item.strip()]
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"a cell starting with '[' is read as a JSON array, and this one is not valid JSON: "
            f"{exc.msg} (character {exc.pos + 1} of the cell)",
            file=file,
            line=line,
            case=label,
            field=column,
            hint='write a JSON array such as ["a", "b"], or items separated by | such as a|b',
        ) from exc
    if not isinstance(value, list):  # pragma: no cover - text starting with '[' is an array
        value = [value]
    return value


def _csv_object(cell: str, column: str, file: str, line: int, label: str | int) -> Any:
    """A cell holding a JSON object (`tool_mocks`, a state): the value is checked as the
    case's field, so only its JSON is checked here."""
    try:
        return json.loads(cell)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"the cell is read as a JSON object, and is not valid JSON: {exc.msg} "
            f"(character {exc.pos + 1} of the cell)",
            file=file,
            line=line,
            case=label,
            field=column,
            hint='write a JSON object, e.g. {"get_weather": {"result": {"celsius": 14}}}'
            if column == "tool_mocks"
            else 'write a JSON object, e.g. {"balance": 100}',
        ) from exc
