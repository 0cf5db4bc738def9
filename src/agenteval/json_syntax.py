"""A JSON syntax error explained: what the reader's words usually mean, as an edit to make.

Python's `json` names the parser's state, not the mistake: a trailing comma is "Expecting
property name enclosed in double quotes" in an object and "Expecting value" in a list on 3.11
and 3.12, and "Illegal trailing comma before end of object" (at the comma) on 3.13. So the
mistake is read from the text around the error as well as from the words. Every reader of a
JSON file a user writes (case files, an ADK eval config, an ADK initial session file) explains
its errors here, so one mistake gets one hint whichever file it is in; readers of generated JSON
(trace files, CSV cells) say instead what their text must hold. Runs only once a text has
failed to parse.
"""

from __future__ import annotations

import json

__all__ = ["GENERAL_HINT", "explain_json_error"]

GENERAL_HINT = "check the quotes, commas and brackets near this point"

_TRAILING_COMMA = "a list or a mapping cannot end with a comma: remove the one before the bracket"

# (the start of the reader's words, the hint), for the mistakes the words do tell.
_HINTS = (
    ("Illegal trailing comma", _TRAILING_COMMA),  # 3.13
    ("Expecting property name", 'keys need double quotes: {"key": "value"}'),
    ("Expecting ',' delimiter", "add the missing comma between the items before this point"),
    ("Invalid control character", "write line breaks and tabs inside strings as \\n and \\t"),
)


def explain_json_error(exc: json.JSONDecodeError, *, one_value: str) -> str:
    """The hint for `exc`; `one_value` says what the file holds, for text after its value
    ("Extra data"), e.g. "an eval config is one JSON object"."""
    if exc.msg.startswith("Extra data"):
        return one_value
    if _closes_after_comma(exc.doc, exc.pos):  # 3.11 and 3.12's trailing comma
        return _TRAILING_COMMA
    for words, hint in _HINTS:
        if exc.msg.startswith(words):
            return hint
    return GENERAL_HINT


def _closes_after_comma(text: str, pos: int) -> bool:
    """Whether the error is at a closing bracket whose last character before it is a comma."""
    if text[pos : pos + 1] not in ("]", "}"):
        return False
    before = pos - 1
    while before >= 0 and text[before] in " \t\r\n":  # JSON's whitespace
        before -= 1
    return before >= 0 and text[before] == ","
