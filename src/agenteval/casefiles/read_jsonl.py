"""The JSONL reader (`.jsonl`): one JSON object, one case, per line; blank lines are skipped."""

from __future__ import annotations

from collections.abc import Iterator

from agenteval.casefiles.jsontext import parse_json
from agenteval.casefiles.positions import FixedLine, Twice
from agenteval.casefiles.records import Record

__all__ = ["jsonl_records"]


def jsonl_records(text: str, file: str) -> Iterator[Record]:
    """The cases of a .jsonl file's text, one a line."""
    number = 0
    for line_number, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        number += 1
        data, duplicated = parse_json(line, file, line_number)
        duplicate = Twice((duplicated,), line_number, None) if duplicated else None
        yield Record(number, data, FixedLine(line_number), "jsonl", duplicate)


def _lines(text: str) -> Iterator[str]:
    """The text's lines as `text.split("\\n")` gives them, one at a time: a streamed file
    (`streaming.CaseStream`) is read again for every pass, and never held as a list of lines."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]
