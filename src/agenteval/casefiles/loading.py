"""The one entry point that reads a case file: the format comes from the extension, and a `.json`
file is parsed once, then read as ADK's eval set or as agenteval's case list by what it holds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agenteval.case import EvalCase
from agenteval.casefiles.adk_walk import AdkEvalSet
from agenteval.casefiles.jsontext import parse_json
from agenteval.casefiles.read_adk import (
    adk_cases,
    empty_adk_file,
    has_adk_name,
    is_adk_data,
    read_adk_json,
)
from agenteval.casefiles.read_csv import csv_records
from agenteval.casefiles.read_json import json_records
from agenteval.casefiles.read_jsonl import jsonl_records
from agenteval.casefiles.read_yaml import yaml_records
from agenteval.casefiles.records import Record, no_cases
from agenteval.casefiles.source import READ_FORMATS, format_of, read_text
from agenteval.casefiles.streaming import STREAMED_FORMATS, CaseStream, stream_cases
from agenteval.casefiles.validation import valid_cases

__all__ = ["load_cases", "open_cases", "read_case_file"]


def load_cases(path: str | Path) -> list[EvalCase]:
    """The cases in a YAML, JSON, JSONL or CSV case file, in file order.

    Google ADK eval sets (`*.evalset.json`, `*.test.json`, or a `.json` file holding an ADK
    eval set) are read as ADK writes them (see `agenteval.evalset.adk`).

    Raises `DatasetError` for the first mistake in the file: a missing or unreadable file, a
    syntax error, a case that is not valid, or two cases with the same id.
    """
    found = read_case_file(path)
    if isinstance(found, AdkEvalSet):
        return adk_cases(found, str(path))
    return found


def open_cases(path: str | Path) -> list[EvalCase] | CaseStream:
    """The cases of a case file for a run: a JSONL or CSV file as a `CaseStream` (checked whole
    now, then read one case at a time), any other as `load_cases` reads it. Raises
    `DatasetError` as `load_cases` does, for the same mistakes."""
    file = str(path)
    source = Path(path)
    fmt = format_of(source, file, READ_FORMATS, "read")
    if fmt not in STREAMED_FORMATS:
        return load_cases(path)
    return stream_cases(read_text(source, file), file, fmt)


def read_case_file(
    path: str | Path, *, initial_session: Mapping[str, Any] | str | Path | None = None
) -> list[EvalCase] | AdkEvalSet:
    """The cases of a case file or, for an ADK file, the eval set it holds (which may have no
    cases); `initial_session` is for a legacy ADK test file (see `EvalSet.load`)."""
    file = str(path)
    source = Path(path)
    fmt = format_of(source, file, READ_FORMATS, "read")
    text = read_text(source, file)
    records: Iterable[Record]
    if fmt == "json":
        named = has_adk_name(source)  # `*.evalset.json`, `*.test.json`
        if not text.strip():
            raise empty_adk_file(file) if named else no_cases(file, "json")
        data, duplicated = parse_json(text, file)
        if is_adk_data(data, named):
            return read_adk_json(text, data, duplicated, source, initial_session)
        records = json_records(text, data, duplicated, file)
    elif fmt == "yaml":
        records = yaml_records(text, file)
    elif fmt == "jsonl":
        records = jsonl_records(text, file)
    else:
        records = csv_records(text, file)
    return valid_cases(records, file, fmt)
