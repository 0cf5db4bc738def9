"""Attribute values as the trial's record needs them: JSON text opened, counts made safe,
tool arguments unwrapped, exception type names shortened. Shared by the span readers
(`convert`) and the message readers (`messages`), so a tool call reads the same from either."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["as_arguments", "as_count", "as_text", "json_or_value", "short_type"]


def json_or_value(value: Any) -> Any:
    """A JSON text parsed, when it holds an object or an array; anything else as it is."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
            return value
    return value


def as_text(value: Any) -> str | None:
    """A value as answer text: a JSON-encoded string decoded, structures as JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        if value[:1] == '"':
            try:
                decoded = json.loads(value)
            except (ValueError, RecursionError):
                return value
            return decoded if isinstance(decoded, str) else value
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def as_count(value: Any) -> int:
    """A token count: anything that is not a finite number counts 0, never below 0."""
    if isinstance(value, bool) or value is None:
        return 0
    try:
        return max(0, int(float(value)))
    except (TypeError, ValueError, OverflowError):  # not a number, NaN, or infinite
        return 0


def as_arguments(value: Any) -> dict[str, Any]:
    """Tool arguments as a mapping: JSON text parsed, OpenLLMetry's `{"args", "kwargs"}` and
    `{"inputs"}` wrappers opened, anything else kept under `input`."""
    data = json_or_value(value)
    if value is None:
        return {}
    if isinstance(data, dict):
        if data and set(data) <= {"args", "kwargs"}:
            kwargs = data.get("kwargs")
            named = dict(kwargs) if isinstance(kwargs, dict) else {}
            positional = data.get("args")
            if positional:
                named["args"] = positional
            data = named
        elif set(data) == {"inputs"} and isinstance(data["inputs"], dict):
            data = data["inputs"]
        # Secret-named arguments (and results) are masked where the trial is stored, as for
        # every other source of tool calls (`store.py`), at any depth.
        return {str(k): v for k, v in data.items()}
    return {"input": data}


def short_type(name: str) -> str:
    """An exception type's short name: `openai.BadRequestError` and the class repr openai-v2
    2.4b0 writes as `error.type` (`<class 'openai.BadRequestError'>`) both read
    `BadRequestError`."""
    name = name.strip()
    if name.startswith("<class '") and name.endswith("'>"):
        name = name[len("<class '") : -len("'>")]
    return name.rsplit(".", 1)[-1]
