"""From the records a reader yields to `EvalCase`s: each record checked (a mapping, not too
deep, no YAML aliases expanding past the budget, no key given twice) and validated, ids kept
distinct, and the file refused when it holds no case."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import date, datetime
from typing import Any

from pydantic import ValidationError

from agenteval.case import EvalCase
from agenteval.casefiles.explain import explain
from agenteval.casefiles.fields import describe
from agenteval.casefiles.positions import Loc, Where, dotted, first_given
from agenteval.casefiles.records import Record, no_cases
from agenteval.casefiles.scripts import resolve_script
from agenteval.errors import DatasetError
from agenteval.expansion import too_many_values
from agenteval.jsonsafe import MAX_DEPTH, MAX_VALUES

__all__ = ["checked_cases", "valid_cases", "validated"]


def valid_cases(records: Iterable[Record], file: str, fmt: str) -> list[EvalCase]:
    """The cases of `records`, in order; raises `DatasetError` for the first mistake, two cases
    with one id, or no case at all."""
    return list(checked_cases(records, file, fmt))


def checked_cases(records: Iterable[Record], file: str, fmt: str) -> Iterator[EvalCase]:
    """The cases of `records`, each validated as it is read; raises `DatasetError` for the first
    mistake, two cases with one id, or (once read to the end) no case at all.

    Only each id and where its case is are kept (not the case's data), so that a file streamed
    through here (`streaming.CaseStream`) holds no more than its ids."""
    seen: dict[str, tuple[int, Where]] = {}
    for record in records:
        case = validated(record, file)
        earlier = seen.get(case.id)
        if earlier is not None:
            raise _duplicate_id(case, earlier, record, file)
        seen[case.id] = (record.number, record.where)
        yield case
    if not seen:
        raise no_cases(file, fmt)


def validated(record: Record, file: str) -> EvalCase:
    """The case `record` holds, validated; raises `DatasetError` for its first mistake."""
    data = record.data
    if not isinstance(data, dict):
        raise DatasetError(
            f"a case must be a mapping of fields, got {describe(data)}",
            file=file,
            line=record.where.line(()),
            case=record.number,
            hint=_mapping_hint(data, record.fmt),
        )
    too_deep = _too_deep(data, record.fmt)
    if too_deep is not None:
        raise _deep_inside(
            record,
            file,
            too_deep,
            f"nested more than {MAX_DEPTH} levels deep (or contains itself)",
            f"flatten the data: a case keeps at most {MAX_DEPTH} levels (the case is level 1)",
        )
    too_many = too_many_values(data) if record.fmt == "yaml" else None  # only YAML shares
    if too_many is not None:
        raise _deep_inside(
            record,
            file,
            too_many,
            f"its YAML aliases expand to more than {MAX_VALUES:,} values",
            "an alias (*name) is written out in full wherever it is used: use it fewer "
            "times, or keep such data in a file the agent reads",
        )
    if record.twice is not None:
        raise DatasetError(
            f"the field is given twice{first_given(record.twice)}",
            file=file,
            line=record.twice.line,
            case=record.label,
            field=dotted(record.twice.path),
            hint="keep one of the two",
        )
    try:
        case = EvalCase.model_validate(data)
    except ValidationError as exc:
        raise explain(exc, record, file) from exc
    except RecursionError as exc:
        raise DatasetError(
            "the case is nested too deeply (or contains itself)",
            file=file,
            line=record.where.line(()),
            case=record.label,
            hint="remove the YAML alias that points back into its own value",
        ) from exc
    return resolve_script(case, record, file)


_SHOWN_STEPS = 5


def _deep_inside(record: Record, file: str, path: Loc, message: str, hint: str) -> DatasetError:
    """A mistake at `path`, deep inside the case: the field shows its first `_SHOWN_STEPS`."""
    shown = dotted(path[:_SHOWN_STEPS]) + (".…" if len(path) > _SHOWN_STEPS else "")
    return DatasetError(
        message, file=file, line=record.where.line(path), case=record.label, field=shown, hint=hint
    )


def _too_deep(case: Any, fmt: str) -> Loc | None:
    """Where a case (level 1) first holds a list or mapping more than `MAX_DEPTH` levels deep,
    in file order, or None."""
    if not _exceeds(case, 1, {} if fmt == "yaml" else None):
        return None
    stack: list[tuple[Any, int, Loc]] = [(case, 1, ())]
    deepest: dict[int, int] = {}
    while stack:  # the path to it, without recursion: it may be thousands of levels down
        value, level, path = stack.pop()
        if level > MAX_DEPTH:
            return path
        if deepest.get(id(value), 0) >= level:
            continue
        deepest[id(value)] = level
        children = value.items() if isinstance(value, dict) else enumerate(value)
        inner = [(child, level + 1, (*path, key)) for key, child in children if _nests(child)]
        stack.extend(reversed(inner))
    return None  # pragma: no cover - `_exceeds` found one


def _exceeds(value: dict[Any, Any] | list[Any], level: int, seen: dict[int, int] | None) -> bool:
    """Whether `value` (at `level`) holds a list or mapping past `MAX_DEPTH`.

    `seen` is for YAML, whose aliases can share one part many times over, or make it contain
    itself: a part is looked at again only from deeper down, so the check stays linear, and a
    loop ends past the limit. JSON shares nothing, and needs no such bookkeeping.
    """
    if level > MAX_DEPTH:
        return True
    if seen is not None:
        if seen.get(id(value), 0) >= level:
            return False
        seen[id(value)] = level
    items = value.values() if type(value) is dict else value
    if _FLAT.issuperset(map(type, items)):  # the usual list or mapping: one check, in C
        return False
    for item in items:
        kind = type(item)
        if (kind is dict or kind is list) and _exceeds(item, level + 1, seen):
            return True
    return False


def _nests(value: Any) -> bool:
    return type(value) is dict or type(value) is list


_FLAT = frozenset({str, int, float, bool, type(None), date, datetime})


def _mapping_hint(data: Any, fmt: str) -> str:
    text = data if isinstance(data, str) else "What is 2 + 2?"
    if fmt == "yaml":
        return f"write each case as a mapping, e.g. `- input: {json.dumps(text)}`"
    if fmt == "csv":  # pragma: no cover - CSV rows are always mappings
        return "give each case one row"
    where = "each line of a .jsonl file" if fmt == "jsonl" else "each case"
    return f'{where} must be a JSON object, e.g. {{"input": {json.dumps(text)}}}'


def _duplicate_id(
    case: EvalCase, earlier: tuple[int, Where], record: Record, file: str
) -> DatasetError:
    earlier_number, earlier_where = earlier
    given = isinstance(record.data, dict) and "id" in record.data
    first_line = earlier_where.line(("id",) if given else ())
    line = record.where.line(("id",) if given else ())
    at = f" (line {first_line})" if first_line is not None else ""
    if given:
        return DatasetError(
            f"duplicate id: case {earlier_number}{at} already has the id {case.id!r}",
            file=file,
            line=line,
            case=record.label,
            field="id",
            hint="give each case its own id",
        )
    return DatasetError(
        f"duplicate case: the same content as case {earlier_number}{at}, so the same id "
        f"{case.id!r}",
        file=file,
        line=line,
        case=record.number,
        hint="remove one of the two, or give each its own `id`",
    )
