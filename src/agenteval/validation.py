"""What pydantic's `ValidationError` says, for agenteval's own errors: its first problem and
where it is."""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["first_problem"]


def first_problem(exc: ValidationError, *prefix: str) -> tuple[str, str]:
    """The first problem pydantic found: its message, and where, as field names joined by dots
    after `prefix` ("" when it is the value itself)."""
    error = exc.errors()[0]
    return error["msg"], ".".join(str(part) for part in (*prefix, *error["loc"]))
