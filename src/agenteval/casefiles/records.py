"""Cases as a reader yields them, before validation (`Record`), and the list of cases a YAML or
JSON document holds (`case_items`), with the errors for a file without cases."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable
from typing import Any

from agenteval.case import EvalCase
from agenteval.casefiles.fields import accepted_names, describe
from agenteval.casefiles.positions import Loc, Twice, Where, first_given
from agenteval.errors import DatasetError

__all__ = ["NO_CASES_HINTS", "Record", "case_items", "no_cases", "split_duplicate"]


NO_CASES_HINTS = {
    "yaml": "add cases as a list of mappings, e.g. `- input: What is 2 + 2?`",
    "json": 'add cases as a list of objects, e.g. [{"input": "What is 2 + 2?"}]',
    "jsonl": 'add one case per line, e.g. {"input": "What is 2 + 2?"}',
    "csv": "add a header row such as `id,input,expected_output` and one row per case",
}


@dataclasses.dataclass
class Record:
    """One case as read from the file, before validation."""

    number: int  # 1-based position among the file's cases
    data: Any
    where: Where
    fmt: str
    twice: Twice | None = None  # a key the case gives twice

    @property
    def label(self) -> str | int:
        """How messages name the case: its id when the file gives one, else its position."""
        if isinstance(self.data, dict):
            given = self.data.get("id")
            if isinstance(given, str) and given.strip():
                return given
        return self.number


def no_cases(file: str, fmt: str) -> DatasetError:
    """The error for a file without any case, with the hint for its format."""
    return DatasetError("no cases in the file", file=file, hint=NO_CASES_HINTS[fmt])


def case_items(
    data: Any, file: str, fmt: str, line_of: Callable[[Loc], int | None]
) -> tuple[list[Any], Loc]:
    """The list of cases in a YAML or JSON document, and where that list is in the document."""
    if data is None:
        raise no_cases(file, fmt)
    if isinstance(data, list):
        if not data:
            raise no_cases(file, fmt)
        return data, ()
    if not isinstance(data, dict):
        raise DatasetError(
            f"expected a list of cases or a mapping with a `cases:` list, got {describe(data)}",
            file=file,
            line=line_of(()),
            hint=NO_CASES_HINTS[fmt],
        )
    if "cases" not in data:
        keys = [str(key) for key in data]
        if set(keys) & set(accepted_names(EvalCase)):
            raise DatasetError(
                "expected a list of cases or a mapping with a `cases:` list, got a single case",
                file=file,
                line=line_of(()),
                hint="put the case in a list (start it with `- ` in YAML, wrap it in [ ] in JSON)",
            )
        close = difflib.get_close_matches("cases", keys, n=1, cutoff=0.75)
        hint = (
            f"rename '{close[0]}' to 'cases'"
            if close
            else "put the cases under a `cases:` key, or make the file a list of cases"
        )
        shown = ", ".join(repr(key) for key in keys[:5])
        raise DatasetError(
            "expected a list of cases or a mapping with a `cases:` list, "
            f"got a mapping with the keys {shown}",
            file=file,
            line=line_of((keys[0],)) if keys else line_of(()),
            hint=hint,
        )
    for key in data:
        if key != "cases":
            raise DatasetError(
                f"unknown top-level key {str(key)!r}; a case file's mapping holds only `cases:`",
                file=file,
                line=line_of((str(key),)),
                field=str(key),
                hint=f"remove {str(key)!r}, or move it into a case's `metadata`",
            )
    cases = data["cases"]
    if cases is None or cases == []:
        raise no_cases(file, fmt)
    if not isinstance(cases, list):
        raise DatasetError(
            f"`cases:` should hold a list of cases, got {describe(cases)}",
            file=file,
            line=line_of(("cases",)),
            field="cases",
            hint=NO_CASES_HINTS[fmt],
        )
    return cases, ("cases",)


def split_duplicate(duplicate: Twice | None, root: Loc, count: int, file: str) -> dict[int, Twice]:
    """Assign a key given twice to the case it is in (or raise when it is outside every case)."""
    if duplicate is None:
        return {}
    path = duplicate.path
    inside = path[: len(root)] == root and len(path) > len(root) + 1
    index = path[len(root)] if inside else None
    if isinstance(index, int) and 0 <= index < count:
        return {index: duplicate.relative_to((*root, index))}
    raise DatasetError(
        f"key {str(path[-1])!r} is given twice{first_given(duplicate)}",
        file=file,
        line=duplicate.line,
        field=".".join(str(step) for step in path),
        hint="keep one of them",
    )
