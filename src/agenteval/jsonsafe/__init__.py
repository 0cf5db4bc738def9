"""JSON copies of whatever an agent returns or a tool records: bounded in depth, safe with
cycles, and never failing.

Agents hand over data of any shape: metadata nested 500 deep, a tool result that contains
itself, an object whose `repr` raises, text with a lone surrogate. Everything agenteval keeps
(the run store, a tool call's record) goes through this module, so none of that can crash a run
or lose a record:

- A container nested deeper than `MAX_DEPTH` levels (the record itself is level 1) is replaced
  by the string `DEEP` ("<cut: nested deeper than 64>"); a container met again inside itself by
  `CIRCULAR`; a value that cannot be encoded at all by "<cut: could not be encoded (Error)>".
  A record holds at most `MAX_VALUES` values, counted as written out (a list shared by
  reference counts each time it is met): past them, each container met is `TOO_MANY`.
  Each cut is listed (`SafeJson.cuts`), and a record can carry that list under `CUT_NOTE` in
  one of its own dict fields (`note_in`), so a report can show it.
- Text is made valid UTF-8, a float that JSON cannot hold (NaN, infinity) becomes null, an
  object pydantic cannot write becomes its `repr`.
- Optionally (`Hide`), the values under keys that name a secret are replaced by a mask, at any
  depth, in dicts and in pydantic models alike, within the fields of the record it names.

The package, by job: `limits` (the limits, the cut markers, `Hide`, `SafeJson`), `copies` (the
entry points: `model_json`, `model_json_text`, `cut_copy`, `plain_copy`), `look` (the one look
that tells whether pydantic can write a record as it is) and `careful` (the copy by hand of a
record that needs cutting or masking).
"""

from agenteval.jsonsafe.copies import cut_copy, model_json, model_json_text, plain_copy
from agenteval.jsonsafe.limits import (
    CIRCULAR,
    CUT_HEAD,
    CUT_NOTE,
    DEEP,
    MAX_DEPTH,
    MAX_VALUES,
    TOO_MANY,
    Hide,
    SafeJson,
    cuts_in,
    holds_cut,
    safe_repr,
    valid_text,
)

__all__ = [
    "CIRCULAR",
    "CUT_HEAD",
    "CUT_NOTE",
    "DEEP",
    "MAX_DEPTH",
    "MAX_VALUES",
    "TOO_MANY",
    "Hide",
    "SafeJson",
    "cut_copy",
    "cuts_in",
    "holds_cut",
    "model_json",
    "model_json_text",
    "plain_copy",
    "safe_repr",
    "valid_text",
]
