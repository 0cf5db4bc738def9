"""The entry points: a record as JSON text (`model_json`, `model_json_text`), plain JSON data cut
to the limits (`cut_copy`) and a tool call's data copied now (`plain_copy`); none of them fails.

The usual record is written by pydantic's own serializer after one look at it (`look.fits`);
only a record that is too deep, circular, holds a secret-named key to mask or an object of
unknown kind is copied by hand (`careful.CarefulCopy`).
"""

from __future__ import annotations

import json
from typing import Any, Final

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from agenteval.jsonsafe.careful import CarefulCopy
from agenteval.jsonsafe.limits import CUT_HEAD, CUT_NOTE, Hide, SafeJson, safe_repr
from agenteval.jsonsafe.look import Budget, fits, free_fits

# The JSON text of any cut marker starts so; a record holding one is copied by hand, to note it.
_MARKER_IN_JSON: Final = '"' + CUT_HEAD


def model_json(model: BaseModel, hide: Hide | None = None, note_in: str | None = None) -> SafeJson:
    """`model` as compact JSON text (defaults left out); never fails, whatever it holds.

    `hide` masks secret-named keys; `note_in` names a dict field of the model under whose
    `CUT_NOTE` key the list of cuts is written when anything was cut.
    """
    text = _usual_json(model, hide)
    return SafeJson(text) if text is not None else _careful_json(model, hide, note_in)


def model_json_text(model: BaseModel, hide: Hide | None = None, note_in: str | None = None) -> str:
    """`model_json(...).text`, for the store's hot path: the usual record makes nothing more
    than its text."""
    text = _usual_json(model, hide)
    return text if text is not None else _careful_json(model, hide, note_in).text


def _usual_json(model: BaseModel, hide: Hide | None) -> str | None:
    """The record as pydantic writes it, or None when it needs the careful copy."""
    if not fits(model, hide):
        return None
    try:
        # `model_dump_json` with these arguments, less its wrapper: pydantic's serializer called
        # as that method calls it (its other arguments at their defaults, the same bytes
        # decoded): 4.3 -> 3.1 us for W1's trial, 1.2 -> 0.8 us for a score (measured).
        text = (
            type(model)
            .__pydantic_serializer__.to_json(
                model, fallback=safe_repr, warnings=False, exclude_defaults=True
            )
            .decode()
        )
        # A lone surrogate passes pydantic and fails when the text is encoded (SQLite).
        text.encode("utf-8")
    except Exception:  # pydantic could not write something: the careful copy will
        return None
    return text if _MARKER_IN_JSON not in text else None


def _careful_json(model: BaseModel, hide: Hide | None, note_in: str | None) -> SafeJson:
    copy = CarefulCopy(hide)
    data = copy.note_in(copy.value(model, 1, False, []), note_in)
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except Exception as exc:  # not reached: the copy holds only plain JSON data
        note = [f"the record could not be encoded ({type(exc).__name__})"]
        text = json.dumps({note_in: {CUT_NOTE: note}} if note_in else {})
    return SafeJson(text, tuple(copy.noted()), copy.masked)


def cut_copy(data: Any, note_in: str | None = None) -> Any:
    """Plain JSON data (as `json.loads` gives it) cut to `MAX_DEPTH` levels, noting the cuts in
    the dict field `note_in` when there were any: to read back a record stored too deep."""
    copy = CarefulCopy(None)
    return copy.note_in(copy.value(data, 1, True, []), note_in)


def plain_copy(value: Any, hide: Hide | None = None) -> tuple[Any, tuple[str, ...]]:
    """`value` as plain JSON data (dicts, lists, text, numbers), taken now, and what was cut;
    never fails. The value is not changed. For a tool call's arguments and result.

    With `hide`, the values under secret-named keys are masked at any depth (`Hide.fields` does
    not apply: all of `value` is free-form data)."""
    # One look first (as for a record: nothing too deep or too large, no secret-named key to
    # mask, every key learnt once); pydantic's fast copy when there is nothing to do.
    if free_fits(value, 1, hide.plain_keys if hide is not None else None, hide, Budget()):
        try:
            return to_jsonable_python(value, fallback=safe_repr), ()
        except Exception:  # circular, deeper than pydantic goes, or unwritable: copy by hand
            pass
    copy = CarefulCopy(hide)
    return copy.value(value, 1, True, []), tuple(copy.noted())
