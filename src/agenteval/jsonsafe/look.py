"""The one look at a record that tells whether pydantic's own serializer can write it as it is:
nothing nested past `MAX_DEPTH` (a cycle goes past it too), no more than `MAX_VALUES` values, no
secret-named key to mask, nothing of unknown kind.

It reads only the fields that can hold free-form data (`Any`, `dict[str, Any]`), planned once
per model class: empty ones cost three C calls, a flat dict with known keys two set checks, and
nested free-form data one pass, container by container, with the text and numbers of each
checked in C.
"""

from __future__ import annotations

import enum
import operator
import types
import typing
import uuid
from collections import abc
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import PurePath
from typing import Any, Final

from pydantic import BaseModel

from agenteval.jsonsafe.limits import MAX_DEPTH, MAX_VALUES, Hide

_MAX_PLAIN_KEYS: Final = 4096
_EMPTY: Final = frozenset({list, dict})  # checked for emptiness first: nothing to look at
_SIMPLE: Final = frozenset({str, int, float, bool, type(None)})
_SCALARS: Final = (
    str,
    int,
    float,
    datetime,
    date,
    time,
    timedelta,
    enum.Enum,
    uuid.UUID,
    Decimal,
    PurePath,
)
"""Values pydantic writes as one JSON scalar, whatever they hold."""


# Which fields of a model class can hold more than scalars, and whether they are free-form
# (Any somewhere in their type). Fields of scalars only are never looked at.
_Plan = tuple[tuple[str, bool], ...]
"""(field name, free-form) for each field that can hold more than scalars; `__pydantic_extra__`
last when the model takes extra fields."""
_PLANS: dict[type[BaseModel], _Plan] = {}
_SCALAR, _TYPED, _FREE = 0, 1, 2
_GENERIC = frozenset(
    {list, dict, tuple, set, frozenset, types.UnionType, typing.Union}
    | {abc.Sequence, abc.Mapping, abc.MutableMapping, abc.MutableSequence, abc.Set}
)
_EXTRA = "__pydantic_extra__"
_LOOKS: dict[type[BaseModel], Callable[[dict[str, Any]], tuple[Any, ...]]] = {}
"""For each planned model without extra fields: its planned fields' values, in one call."""
_NOTHING: Final = frozenset({type(None), list, dict})


def model_plan(cls: type[BaseModel]) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        _PLANS[cls] = ()  # a model that contains itself: assume nothing while working it out
        fields = []
        for name, info in cls.model_fields.items():
            kind = _kind(info.annotation)
            if kind != _SCALAR:
                fields.append((name, kind == _FREE))
        if cls.model_config.get("extra") == "allow":
            fields.append((_EXTRA, True))
        plan = _PLANS[cls] = tuple(fields)
        names = [name for name, _ in plan]
        if names and _EXTRA not in names:
            # Always a tuple, whatever the number of names.
            _LOOKS[cls] = operator.itemgetter(*names, names[0])
    return plan


def _kind(annotation: Any) -> int:
    if annotation is Any or annotation is object:
        return _FREE
    origin = typing.get_origin(annotation)
    if origin is None:
        if annotation is None or annotation is type(None):
            return _SCALAR
        if isinstance(annotation, type):
            if issubclass(annotation, BaseModel):
                return _TYPED if model_plan(annotation) else _SCALAR
            if issubclass(annotation, _SCALARS):
                return _SCALAR
        return _FREE  # a type variable, a forward reference, an object of any kind
    if origin is typing.Literal:
        return _SCALAR
    if origin is typing.Annotated:
        return _kind(typing.get_args(annotation)[0])
    args = [arg for arg in typing.get_args(annotation) if arg is not Ellipsis]
    if origin not in _GENERIC or not args:
        return _FREE  # a bare `dict`, a generic class of its own
    return max(map(_kind, args))


class Budget:
    """How many more values one look may count before the record is too large (`MAX_VALUES`)."""

    __slots__ = ("left",)

    def __init__(self, left: int = MAX_VALUES) -> None:
        self.left = left


def fits(model: BaseModel, hide: Hide | None) -> bool:
    """Whether pydantic can write the record as it is: no container past `MAX_DEPTH` (a cycle
    goes past it too), no more than `MAX_VALUES` values, no secret-named key to mask, nothing of
    unknown kind. Looks only at the fields that can hold more than scalars (none of them, when
    they are empty), and allocates nothing but its count."""
    looks = _LOOKS.get(type(model))
    if looks is not None:  # the usual record: every such field empty, told in three C calls
        found = looks(model.__dict__)
        if _NOTHING.issuperset(map(type, found)) and not any(found):
            return True
    return _model_fits(model, 1, hide, hide.fields if hide is not None else None, Budget())


def _model_fits(
    model: BaseModel,
    depth: int,
    hide: Hide | None,
    fields: frozenset[str] | None,
    budget: Budget,
) -> bool:
    """`fits` for one of our models at `depth`; `fields`, at the record, limits `hide` to the
    fields it names."""
    plan = _PLANS.get(type(model))
    if plan is None:
        plan = model_plan(type(model))
    values = model.__dict__
    budget.left -= len(plan)
    for name, free in plan:
        item = values.get(name) if name != _EXTRA else model.__pydantic_extra__
        kind = type(item)
        if item is None or kind in _SIMPLE or (kind in _EMPTY and not item):
            continue
        here = hide if fields is None or name in fields else None
        if free:
            keys = here.plain_keys if here is not None else None
            if (
                kind is dict  # the usual metadata or details: flat, with known keys
                and (keys is None or keys.issuperset(item))
                and _SIMPLE.issuperset(map(type, item.values()))
            ):
                budget.left -= len(item)
                continue
            if not free_fits(item, depth + 1, keys, here, budget):
                return False
        elif not _typed_fits(item, depth + 1, here, budget):
            return False
    return budget.left >= 0


def _typed_fits(value: Any, depth: int, hide: Hide | None, budget: Budget) -> bool:
    """`fits` for a typed field: our own models, in lists or dicts."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, BaseModel):
        return _model_fits(value, depth, hide, None, budget)
    kind = type(value)
    items = value.values() if kind is dict else value if kind is list or kind is tuple else None
    if items is None:
        return isinstance(value, _SCALARS)
    # The same count and loop as `free_fits`, written out: this is the store's hot path, and a
    # shared helper taking the recursion as a function made `model_json_text` 1.7x slower.
    budget.left -= len(items)
    if budget.left < 0:
        return False
    if _SIMPLE.issuperset(map(type, items)):
        return True
    for item in items:
        if type(item) not in _SIMPLE and not _typed_fits(item, depth + 1, hide, budget):
            return False
    return True


def free_fits(
    value: Any, depth: int, keys: set[str] | None, hide: Hide | None, budget: Budget
) -> bool:
    """`fits` for free-form data; `keys` holds the keys known to name no secret, or is None
    when nothing here is masked."""
    if depth > MAX_DEPTH:
        return False
    kind = type(value)
    if kind is dict:
        if keys is not None and not keys.issuperset(value) and not _plain_keys(value, keys, hide):
            return False
        items = value.values()
    elif kind is list or kind is tuple or kind is set or kind is frozenset:
        items = value
    elif isinstance(value, BaseModel):  # its fields are keys like any other
        return free_fits(dict(value), depth, keys, hide, budget)
    else:
        return isinstance(value, _SCALARS)
    budget.left -= len(items)
    if budget.left < 0:
        return False
    if _SIMPLE.issuperset(map(type, items)):
        return True
    for item in items:
        if type(item) not in _SIMPLE and not free_fits(item, depth + 1, keys, hide, budget):
            return False
    return True


def _plain_keys(value: dict[Any, Any], keys: set[str], hide: Hide | None) -> bool:
    """Whether no key of `value` hides a value; learns the keys that name no secret."""
    assert hide is not None
    for key, item in value.items():
        if key in keys:
            continue
        if type(key) is not str:
            if type(key) not in _SIMPLE:
                return False
        elif hide.secret(key):
            if hide.hides(key, item):
                return False
        elif len(keys) < _MAX_PLAIN_KEYS:
            keys.add(key)
    return True
