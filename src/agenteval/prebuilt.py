"""`prebuilt`: a model instance made from field values already valid, without validating them
again, for the few records the engine and the built-in scorers make once a trial (a bare
answer's `Trial`, its `TrialResult`, a built-in's `Score`), where pydantic's validation was the
largest part of their cost (bench W1, issue 21).

It depends on pydantic's instance layout (v2: `__dict__`, `__pydantic_fields_set__`,
`__pydantic_extra__`, `__pydantic_private__`), so it lives in one place; each caller's test
compares what it makes with what validation makes (fields, fields set, JSON, copy, pickle).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["prebuilt"]

ModelT = TypeVar("ModelT", bound=BaseModel)

_NEW = object.__new__
_SET = object.__setattr__


def prebuilt(cls: type[ModelT], fields: dict[str, Any], fields_set: set[str]) -> ModelT:
    """An instance of `cls` as validation leaves it: `fields` (every field, defaults included,
    each already valid and owned by the instance), `fields_set` (the names given), and no extra
    or private attributes (for a model with `extra="forbid"` and no private attributes)."""
    instance: ModelT = _NEW(cls)
    _SET(instance, "__dict__", fields)
    _SET(instance, "__pydantic_fields_set__", fields_set)
    _SET(instance, "__pydantic_extra__", None)
    _SET(instance, "__pydantic_private__", None)
    return instance
