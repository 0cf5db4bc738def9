"""Line-oriented case files (JSONL, CSV) read as a stream of cases, never held as a list.

`agenteval run cases.jsonl` on a 100,000-case file peaked at 256 MB when the file was read into
a list of `EvalCase`s (84 MB of them, 17 MB more of the parsed lines kept for the duplicate-id
check); a `CaseStream` keeps the file's text and its ids only, and makes each case again each
time it is read.

All or nothing, as before: opening the stream reads the whole file once, validating every case
and every id, so that a broken line ends in its one message (file, line, case, field, fix)
before any trial runs, exactly as `load_cases` would say it. The few cases a run checks before
it starts (those with tool mocks or a simulated user) are kept from that pass (`notable`).
Every later pass reads the same text again: it cannot fail, and yields the same cases.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from agenteval.case import EvalCase
from agenteval.casefiles.read_csv import csv_records
from agenteval.casefiles.read_jsonl import jsonl_records
from agenteval.casefiles.records import Record
from agenteval.casefiles.validation import checked_cases, validated

__all__ = ["STREAMED_FORMATS", "CaseStream", "stream_cases"]

_READERS: dict[str, Callable[[str, str], Iterator[Record]]] = {
    "jsonl": jsonl_records,
    "csv": csv_records,
}
STREAMED_FORMATS = frozenset(_READERS)
"""The formats whose every case sits on its own line or row, read one at a time."""


@dataclasses.dataclass(frozen=True)
class CaseStream:
    """The cases of a JSONL or CSV file that was read whole once and found valid; iterating
    makes them again, one at a time, from the text (so that a run holds one case per trial in
    flight, not the file's every case). Sized (`len`), but not a sequence: each pass re-reads.

    Made by `stream_cases` (for a run given a case file), never by hand."""

    text: str
    file: str
    fmt: str
    count: int
    notable: tuple[EvalCase, ...]
    """The cases with tool mocks or a simulated user, in file order: what a run checks
    before it starts (`engine/planning.py`), without reading the file again."""

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[EvalCase]:
        # Ids were checked by the first pass, and the text has not changed since.
        for record in _READERS[self.fmt](self.text, self.file):
            yield validated(record, self.file)


def stream_cases(text: str, file: str, fmt: str) -> CaseStream:
    """The cases of a .jsonl or .csv file's `text`, checked whole; raises `DatasetError` for the
    first mistake (as `load_cases`)."""
    count = 0
    notable: list[EvalCase] = []
    for case in checked_cases(_READERS[fmt](text, file), file, fmt):
        count += 1
        if case.tool_mocks or case.user_simulation is not None:
            notable.append(case)
    return CaseStream(text, file, fmt, count, tuple(notable))
