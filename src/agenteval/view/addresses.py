"""What an address of the viewer asks, and the addresses its pages link to: the runs list's
filters (`RunsFilters`), a run table's filters, sort and page (`RunFilters`, read from the query
string and written back into the links of its columns and its pager), and the numbers an
address may carry (`whole_number`). A query the viewer cannot read is a `BadRequest`, which the
app answers 400, naming the parameter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from urllib.parse import quote, urlencode

__all__ = [
    "NUMERIC",
    "PAGE_SIZE",
    "SORTS",
    "STATUS_CHOICES",
    "BadRequest",
    "RunFilters",
    "RunsFilters",
    "columns",
    "last_offset",
    "pager",
    "run_matches",
    "whole_number",
]

PAGE_SIZE = 50
"""Trials on one page of a run's case table."""

SORTS = {
    "index": "#",
    "case": "Case",
    "trial": "Trial",
    "status": "Status",
    "failing": "Failing scorers",
    "score": "Mean score",
    "latency": "Latency",
    "tokens": "Tokens",
    "cost": "Cost",
}
"""The case table's columns, each sortable by the field it names (as the report's table)."""
NUMERIC = {"index", "trial", "score", "latency", "tokens", "cost"}
STATUS_CHOICES = [
    ("pass", "passed"),
    ("fail", "failed a scorer"),
    ("error", "trial failed"),
    ("unscored", "nothing applied"),
]


def whole_number(text: str) -> int | None:
    """`text` as a number an address may carry (a page, a trial), or None: ASCII digits only
    (`str.isdigit` also says yes to "²", which `int` refuses) and at most 15 of them (beyond,
    Python refuses the text or SQLite the integer: a 500, not an answer)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 15:
        return None
    return int(text)


class BadRequest(ValueError):
    """An address whose query the viewer cannot read (a page that is not a number, ...): the
    app answers 400 with the message."""


@dataclass(frozen=True)
class RunsFilters:
    """The runs list's filters, from `/?q=&target=&status=&since=&until=`."""

    q: str = ""
    target: str = ""
    status: str = ""
    since: str = ""
    until: str = ""

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> RunsFilters:
        filters = cls(**{name: query.get(name, "").strip() for name in cls.__dataclass_fields__})
        for name in ("since", "until"):
            value = getattr(filters, name)
            if value:
                try:
                    date.fromisoformat(value)
                except ValueError:
                    raise BadRequest(f"{name}={value!r} is not a date (YYYY-MM-DD)") from None
        return filters


@dataclass(frozen=True)
class RunFilters:
    """A run page's table: its filters, sort and page, from the address's query."""

    q: str = ""
    status: str = ""
    scorer: str = ""
    tag: str = ""
    flaky: bool = False
    sort: str = ""
    dir: str = "asc"
    page: int = 1

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> RunFilters:
        raw = {name: query.get(name, "").strip() for name in cls.__dataclass_fields__}
        status = raw["status"]
        if status and status not in dict(STATUS_CHOICES):
            raise BadRequest(f"status={status!r}: use one of {', '.join(dict(STATUS_CHOICES))}")
        sort = raw["sort"]
        if sort and sort not in SORTS:
            raise BadRequest(f"sort={sort!r}: use one of {', '.join(SORTS)}")
        if raw["dir"] not in ("", "asc", "desc"):
            raise BadRequest(f"dir={raw['dir']!r}: use asc or desc")
        page = raw["page"] or "1"
        number = whole_number(page)
        if number is None or number < 1:
            raise BadRequest(f"page={page!r}: use a whole number from 1")
        return cls(
            q=raw["q"],
            status=status,
            scorer=raw["scorer"],
            tag=raw["tag"],
            flaky=raw["flaky"] in ("1", "on", "true"),
            sort=sort,
            dir=raw["dir"] or "asc",
            page=number,
        )

    @property
    def needs_index(self) -> bool:
        """Whether this table needs every trial read (anything but the run's order unfiltered)."""
        # The run's order reversed (`#` clicked) is a sort too: the store reads it forwards.
        return (
            bool(self.q or self.status or self.scorer or self.tag or self.flaky)
            or self.sort not in ("", "index")
            or self.dir == "desc"
        )

    def query(self, **changes: Any) -> str:
        """The address's query with `changes`, leaving out the defaults."""
        values = {**self.__dict__, **changes}
        kept = {
            name: ("1" if value is True else str(value))
            for name, value in values.items()
            if value not in ("", False, None)
            and not (name == "page" and value == 1)
            and not (name == "dir" and value == "asc")
        }
        return urlencode(kept)


def columns(run_id: str, filters: RunFilters) -> list[tuple[str, str, str, str]]:
    """Each column's label, field, the address sorting by it, and its aria-sort."""
    columns = []
    current = filters.sort or "index"
    for field_name, label in SORTS.items():
        descending = current == field_name and filters.dir == "asc"
        url = f"/runs/{quote(run_id, safe='')}?" + filters.query(
            sort="" if field_name == "index" and descending is False else field_name,
            dir="desc" if descending else "asc",
            page=1,
        )
        order = ""
        if current == field_name:
            order = "descending" if filters.dir == "desc" else "ascending"
        columns.append((label, field_name, url + "#cases", order))
    return columns


def last_offset(matching: int) -> int:
    """Where the last page of `matching` trials starts."""
    return (max(1, math.ceil(matching / PAGE_SIZE)) - 1) * PAGE_SIZE


def pager(run_id: str, filters: RunFilters, matching: int | None) -> dict[str, Any] | None:
    """Where this page is among `matching` trials, with the addresses of the pages beside it
    (None when nothing matches); a page past the end is the last page."""
    if not matching:
        return None
    pages = max(1, math.ceil(matching / PAGE_SIZE))
    page = min(filters.page, pages)
    base = f"/runs/{quote(run_id, safe='')}?"
    return {
        "page": page,
        "pages": pages,
        "first": (page - 1) * PAGE_SIZE + 1,
        "last": min(page * PAGE_SIZE, matching),
        "of": matching,
        "previous": base + filters.query(page=page - 1) + "#cases" if page > 1 else None,
        "next": base + filters.query(page=page + 1) + "#cases" if page < pages else None,
    }


def run_matches(row: Mapping[str, Any], filters: RunsFilters) -> bool:
    """Whether a row of the runs list (`Pages.runs_rows`) passes the list's filters."""
    if filters.target and row["target"] != filters.target:
        return False
    if filters.status and row["status"] != filters.status:
        return False
    created: datetime = row["created_at"]
    if filters.since and created.date() < date.fromisoformat(filters.since):
        return False
    if filters.until and created.date() > date.fromisoformat(filters.until):
        return False
    if filters.q:
        text = " ".join(str(row[name] or "") for name in ("run_id", "target", "agent"))
        if filters.q.casefold() not in text.casefold():
            return False
    return True
