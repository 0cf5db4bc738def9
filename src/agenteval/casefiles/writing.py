"""Writing cases as a YAML, JSON or JSONL case file (`dump_cases`) that reads back as the same
cases."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from agenteval.case import EvalCase
from agenteval.casefiles.read_yaml import YAML_STR
from agenteval.casefiles.source import WRITE_FORMATS, format_of, write_text
from agenteval.errors import DatasetError

__all__ = ["dump_cases"]


def dump_cases(cases: Iterable[EvalCase], path: str | Path) -> Path:
    """Write `cases` to a YAML, JSON or JSONL file (by extension) and return its path.

    Fields left at their defaults are omitted, and so are ids derived from the content (reading
    the file derives them again), so `load_cases(dump_cases(cases, path)) == cases` for any
    non-empty list of cases with distinct ids. Parent folders are created as needed.
    """
    file = str(path)
    target = Path(path)
    fmt = format_of(target, file, WRITE_FORMATS, "write")
    records = [_case_record(case, file) for case in cases]
    if fmt == "yaml":
        text = yaml.dump(
            records, Dumper=_YamlDumper, sort_keys=False, allow_unicode=True, width=100
        )
    elif fmt == "json":
        text = json.dumps(records, indent=2, ensure_ascii=False) + "\n"
    else:
        text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    return write_text(target, text, file)


def _case_record(case: EvalCase, file: str) -> dict[str, Any]:
    try:
        record = case.model_dump(mode="json", exclude_defaults=True)
    except Exception as exc:  # pydantic cannot serialise some value the case was built with
        raise DatasetError(
            f"cannot write the case: {exc}".splitlines()[0],
            file=file,
            case=case.id,
            hint="give the case only JSON-compatible values (text, numbers, lists, mappings)",
        ) from exc
    if record.get("id") == case.content_id():
        del record["id"]  # derived from the content; reading the file derives it again
    return record


class _YamlDumper(yaml.SafeDumper):
    """A safe dumper that writes multi-line text as a literal block, and keeps odd line breaks."""


def _represent_text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if any(ch in value for ch in "\r\x85\u2028\u2029"):
        style: str | None = '"'  # PyYAML's other styles turn these into plain line breaks
    elif "\n" in value:
        style = "|"
    else:
        style = None
    return dumper.represent_scalar(YAML_STR, value, style=style)


_YamlDumper.add_representer(str, _represent_text)
