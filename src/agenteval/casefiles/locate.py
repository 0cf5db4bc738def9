"""Where a case's field is written in its case file, found again after the cases were read
(a run's checks before it starts, `engine/mock_check.py`): read only when a message needs it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from agenteval.case import EvalCase
from agenteval.casefiles.jsontext import parse_json
from agenteval.casefiles.read_csv import csv_records
from agenteval.casefiles.read_json import json_records
from agenteval.casefiles.read_jsonl import jsonl_records
from agenteval.casefiles.read_yaml import yaml_records
from agenteval.casefiles.records import Record
from agenteval.casefiles.source import READ_FORMATS
from agenteval.errors import AgentEvalError

__all__ = ["find_record"]


def find_record(file: str | Path, case_id: str) -> Record | None:
    """The record (the case as written, and where) of the case `case_id` in a YAML, JSON,
    JSONL or CSV case file; None when the file cannot be read again or has no such case."""
    path = Path(file)
    fmt = READ_FORMATS.get(path.suffix.lower())
    try:
        text = path.read_text(encoding="utf-8-sig")
        records: Iterable[Record]
        if fmt == "yaml":
            records = yaml_records(text, str(file))
        elif fmt == "jsonl":
            records = jsonl_records(text, str(file))
        elif fmt == "csv":
            records = csv_records(text, str(file))
        elif fmt == "json":
            data, duplicated = parse_json(text, str(file))
            records = json_records(text, data, duplicated, str(file))
        else:
            return None
        for record in records:
            if _case_id(record) == case_id:
                return record
    except (OSError, UnicodeDecodeError, AgentEvalError):
        return None
    return None


def _case_id(record: Record) -> str | None:
    data = record.data
    if not isinstance(data, dict):
        return None
    given = data.get("id")
    if isinstance(given, str) and given.strip():
        return given
    try:  # an id derived from the content
        return EvalCase.model_validate(data).id
    except ValidationError:
        return None
