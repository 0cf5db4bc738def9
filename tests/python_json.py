"""What this Python's `json` reader does, for tests whose expectations depend on the Python.

Two things changed between the Pythons agenteval supports, and tests written on 3.11 failed on
3.13 while the product was right:
- how deep `json.loads` reads before it gives up (RecursionError): measured, 999 levels on
  3.11, 1,497 on 3.12 and 9,998 on 3.13 (3.12 and 3.13 count C recursion apart), so a test of
  the "too deep to read" path nests `UNREADABLE` levels, past all three;
- the wording and position of some errors: 3.13 says "Illegal trailing comma before end of
  object" at the comma where 3.11 and 3.12 say "Expecting property name enclosed in double
  quotes" after it, so a test expecting the reader's own error takes it from `decode_error`.

`tests/test_python_json.py` fails if a Python ever reads `UNREADABLE` levels.
"""

from __future__ import annotations

import json
from typing import Final

UNREADABLE: Final = 50_000
"""Levels of nesting no supported Python's `json.loads` reads."""


def decode_error(text: str) -> json.JSONDecodeError:
    """The error this Python's `json.loads` gives for `text` (which must be invalid JSON)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc
    raise AssertionError(f"{text!r} is valid JSON")
