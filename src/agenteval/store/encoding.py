"""How the store writes a record as JSON text and reads it back.

Encoding never fails (`jsonsafe`): deep or circular data is cut and the record notes the cut;
what agents, tools and scorers produced is masked under secret-named keys; secrets are then
redacted from the text (`redacted`). Times are written in one UTC form so they sort as text.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from agenteval.case import EvalCase, decimals_tagged
from agenteval.jsonsafe import Hide, cut_copy, model_json_text, safe_repr
from agenteval.records import RunInfo
from agenteval.redaction import REDACTED, Redactor, is_secret_key
from agenteval.score import Score
from agenteval.sqlite import time_text
from agenteval.trace import Trial

__all__ = ["read_cut", "redacted", "scores_json", "stored_time", "to_json"]

_M = TypeVar("_M", bound=BaseModel)

_SCORE_LIST: TypeAdapter[list[Score]] = TypeAdapter(list[Score])


def scores_json(scores: list[Score]) -> bytes:
    """The scores as one JSON list in one call, each item as `to_json` writes a score."""
    return _SCORE_LIST.dump_json(scores, fallback=safe_repr, warnings=False, exclude_defaults=True)


def redacted(redactor: Redactor, texts: list[str]) -> list[str]:
    """The JSON `texts` with secrets redacted. One search over all of them finds whether
    any holds a secret (JSON has no raw newline, so joining two records can never make a
    match); only then is each one redacted on its own."""
    joined = "\n".join(texts)
    if redactor.redact_text(joined) is joined:
        return texts
    return [redactor.redact_text(text) for text in texts]


def stored_time(moment: datetime | None) -> str | None:
    """A time as stored (`sqlite.time_text`), or None."""
    return None if moment is None else time_text(moment)


# What an agent or a tool produced is masked by key (`password`, `api_key`, `session_cookie`, ...)
# wherever it comes from: every record passes through `to_json` on its way in, so this is the
# one place that covers the recorder, OpenTelemetry spans, an agent's own Trial, a recorded
# `agent_trace` and a scorer's details alike. What the user wrote (settings, tool schemas,
# expected arguments) is not masked by key: a schema's `password` property is not a secret.
_HIDDEN_FIELDS: dict[type[BaseModel], frozenset[str]] = {
    Trial: frozenset({"tool_calls", "steps", "metadata"}),
    Score: frozenset({"details"}),
    EvalCase: frozenset({"agent_trace"}),
}
# Where a record notes what had to be cut to store it (`jsonsafe.CUT_NOTE`).
_NOTE_FIELDS: dict[type[BaseModel], str] = {
    Trial: "metadata",
    Score: "details",
    EvalCase: "metadata",
    RunInfo: "settings",
}
_HOW: dict[type[BaseModel], tuple[Hide | None, str | None]] = {
    model: (
        Hide(secret=is_secret_key, fields=_HIDDEN_FIELDS[model], mask=REDACTED)
        if model in _HIDDEN_FIELDS
        else None,
        note_in,
    )
    for model, note_in in _NOTE_FIELDS.items()
}
_AS_GIVEN: tuple[Hide | None, str | None] = (None, None)


def to_json(model: BaseModel) -> str:
    """The record as JSON text; never fails, whatever an agent or a tool put in it: deep or
    circular data is cut (and noted in the record), secret-named keys masked (`jsonsafe`)."""
    hide, note_in = _HOW.get(type(model), _AS_GIVEN)
    if isinstance(model, EvalCase) and model.initial_state:
        # Its Decimals tagged before, not by its serializer only: the careful copy (a state
        # holding what pydantic cannot write) walks the fields and would write them as text.
        tagged = decimals_tagged(model.initial_state)
        if tagged is not model.initial_state:
            model = model.model_copy(update={"initial_state": tagged})
    return model_json_text(model, hide, note_in)


def read_cut(model: type[_M], data: str) -> _M | None:
    """A stored record too deep for pydantic's JSON reader (stores written before the depth
    limit): read by `json`, cut to the limit, then validated; None when that fails too."""
    try:
        plain = json.loads(data)
    except (ValueError, RecursionError):
        return None
    try:
        return model.model_validate(cut_copy(plain, _NOTE_FIELDS.get(model)))
    except (ValidationError, RecursionError):
        return None
