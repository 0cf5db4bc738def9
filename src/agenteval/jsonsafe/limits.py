"""The limits of a stored record and the markers of what was cut (`MAX_DEPTH`, `MAX_VALUES`,
`DEEP`, `CIRCULAR`, `TOO_MANY`), which secret-named values a copy masks (`Hide`), the JSON text of
a record with its cuts (`SafeJson`), and text that is always safe to write (`safe_repr`,
`valid_text`)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

MAX_DEPTH: Final = 64
"""How many levels of nesting a stored record keeps; the record itself is level 1."""
CUT_HEAD: Final = "<cut: "
"""How every marker of a cut value begins."""
DEEP: Final = f"{CUT_HEAD}nested deeper than {MAX_DEPTH}>"
"""What a container nested deeper than `MAX_DEPTH` is stored as."""
CIRCULAR: Final = f"{CUT_HEAD}circular reference>"
"""What a container found inside itself is stored as."""
CUT_NOTE: Final = "agenteval.cut"
"""The key under which a record notes what was cut (`model_json(..., note_in=...)`)."""
MAX_VALUES: Final = 1_000_000
"""How many values a stored record (or a tool call's copied arguments, or its result) keeps:
every item of every list, mapping, set or model in it counts, each time it is met. A value
shared by reference (one list referenced nine times at each of twelve levels) is small in
memory and counts as written out (9**12 values): past the budget, it is cut. A tool result of
50,000 rows of eight columns is 450,000 values."""
TOO_MANY: Final = f"{CUT_HEAD}more than {MAX_VALUES:,} values>"
"""What a container met after the record's `MAX_VALUES` are spent is stored as."""

_MARKER = re.compile(re.escape(CUT_HEAD) + r"([^<>\"]*)>")


def cuts_in(text: str) -> list[str]:
    """Why parts of a stored value were cut away (its markers' reasons, each once), read from
    its text or JSON: nested past `MAX_DEPTH`, past `MAX_VALUES`, not encodable. A circular
    reference is not among them: what it cut is data already there. A scorer that finds a
    difference, or no support, where a value was cut cannot tell what the cut part held."""
    if CUT_HEAD not in text:
        return []
    return list(dict.fromkeys(m[1] for m in _MARKER.finditer(text) if m[0] != CIRCULAR))


def holds_cut(value: Any) -> bool:
    """Whether plain data (dicts, lists, tuples, sets, text) holds a cut marker anywhere: it is
    a copy cut for the record, not the value itself. Walked on a stack of its own, each
    container once, so data of any depth or with cycles is read."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item.startswith(CUT_HEAD):
                return True
        elif isinstance(item, dict | list | tuple | set | frozenset) and id(item) not in seen:
            seen.add(id(item))  # a part of `value`, so alive: its id is not reused meanwhile
            if isinstance(item, dict):
                stack.extend(item.keys())
                stack.extend(item.values())
            else:
                stack.extend(item)
    return False


@dataclass(frozen=True, slots=True)
class Hide:
    """Which values a copy masks: those under a dict key (or a pydantic model's field name) that
    `secret` says names a secret, anywhere inside the free-form data under the record's
    top-level `fields`. A value that hides nothing (None, a boolean, "" or the mask itself) is
    kept: "the key was empty" is worth seeing.

    Only free-form data is masked: a typed field (a count, a schema) keeps its value, or the
    record would no longer read back.
    """

    secret: Callable[[str], bool]
    fields: frozenset[str]
    mask: str
    plain_keys: set[str] = dataclasses.field(default_factory=set, compare=False, repr=False)
    """Keys seen so far that name no secret, so the usual record checks its keys in one step."""

    def hides(self, key: object, value: object) -> bool:
        """Whether the value under `key` is to be masked."""
        return (
            isinstance(key, str)
            and self.secret(key)
            and not (value is None or isinstance(value, bool) or value in ("", self.mask))
        )


class SafeJson(NamedTuple):
    """A record as JSON text, and what had to be cut to write it (empty for the usual record).

    A named tuple: one is made for every record stored, and it is the cheapest immutable record.
    """

    text: str
    cuts: tuple[str, ...] = ()
    """Where a value was cut and why, as `"tool_calls.0.result.self: circular reference"`
    (a path longer than five steps ends in `…`)."""
    masked: int = 0
    """How many values were masked (`Hide`)."""


def safe_repr(value: Any) -> str:
    """`repr(value)`, or a placeholder naming its type when even that fails."""
    try:
        return repr(value)
    except Exception:
        return f"<unrepresentable {type(value).__qualname__}>"


def valid_text(value: str) -> str:
    """`value` as valid UTF-8 text: a lone surrogate becomes "?"."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "replace").decode("utf-8")
    return value
