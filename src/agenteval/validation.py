"""What pydantic's `ValidationError` says, for agenteval's own errors: its first problem and
where it is; and how a message shows a value it refuses (`describe`)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from pydantic import ValidationError

__all__ = ["describe", "first_problem"]


def first_problem(exc: ValidationError, *prefix: str) -> tuple[str, str]:
    """The first problem pydantic found: its message, and where, as field names joined by dots
    after `prefix` ("" when it is the value itself)."""
    error = exc.errors()[0]
    return error["msg"], ".".join(str(part) for part in (*prefix, *error["loc"]))


def describe(value: Any) -> str:
    """A value as a message shows it: its kind and, when short, itself."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"text {shown!r}"
    if isinstance(value, datetime | date):
        return f"the date {value.isoformat()}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"
