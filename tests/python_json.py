"""What this Python's `json` reader does, for tests whose expectations depend on the Python.

Two things changed between the Pythons agenteval supports, and tests written on 3.11 failed on
3.13 while the product was right:
- how deep `json.loads` reads before it gives up (RecursionError): measured, 999 levels on
  3.11, 1,497 on 3.12 and 9,998 on 3.13 (3.12 and 3.13 count C recursion apart), and on 3.14
  as deep as the C stack goes (~90,000 with Linux's usual 8 MB; any depth with `ulimit -s
  unlimited`), so a test of the "too deep to read" path nests `UNREADABLE` levels, a depth
  this Python was seen to refuse, and is skipped where it refuses none;
- the wording and position of some errors: 3.13 says "Illegal trailing comma before end of
  object" at the comma where 3.11 and 3.12 say "Expecting property name enclosed in double
  quotes" after it, so a test expecting the reader's own error takes it from `decode_error`.

`tests/test_python_json.py` fails if a Python ever reads `UNREADABLE` levels.
"""

from __future__ import annotations

import json
from typing import Final

import pytest

_TRIED = (50_000, 200_000, 1_000_000)


def _unreadable() -> int | None:
    """The fewest levels of `_TRIED` this Python's `json.loads` refuses (~1 ms on 3.11-3.13,
    ~50 ms on 3.14), or None when it reads them all."""
    for levels in _TRIED:
        try:
            json.loads("[" * levels + "]" * levels)
        except RecursionError:
            return levels
    return None


_FOUND = _unreadable()

UNREADABLE: Final = _FOUND or _TRIED[0]
"""Levels of nesting this Python's `json.loads` refuses (see `needs_unreadable`)."""

needs_unreadable = pytest.mark.skipif(
    _FOUND is None,
    reason=f"this Python's json reads {_TRIED[-1]:,} levels (an unlimited C stack, 3.14+)",
)
"""For a test of JSON nested too deeply to read: skipped where this Python reads any depth."""


def decode_error(text: str) -> json.JSONDecodeError:
    """The error this Python's `json.loads` gives for `text` (which must be invalid JSON)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc
    raise AssertionError(f"{text!r} is valid JSON")
