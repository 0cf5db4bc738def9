"""The JSON reader (`.json`): a list of cases, or an object whose only key is `cases`.

`loading` parses the text once (`jsontext.parse_json`) and looks at it: ADK's eval sets go to
`read_adk`, agenteval's case lists come here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agenteval.casefiles.jsontext import JsonTree
from agenteval.casefiles.positions import InTree, Loc, Twice, cached_tree, line_in
from agenteval.casefiles.records import Record, case_items, split_duplicate

__all__ = ["json_records"]


def json_records(text: str, data: Any, duplicated: str | None, file: str) -> Iterator[Record]:
    """The cases of the JSON document `text`, parsed already as `data` (with `duplicated`, the
    first key given twice in it, or None)."""
    positions = JsonTree(text)
    tree = cached_tree(positions.build)

    def line_of(path: Loc) -> int:
        return line_in(tree(), path)

    items, where = case_items(data, file, "json", line_of)
    duplicates: dict[int, Twice] = {}
    if duplicated is not None:
        tree()
        duplicates = split_duplicate(positions.duplicate, where, len(items), file)
    for index, item in enumerate(items):
        yield Record(index + 1, item, InTree(tree, (*where, index)), "json", duplicates.get(index))
