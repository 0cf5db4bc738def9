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

The usual record is written by pydantic's own serializer, after one look at the fields that
can hold free-form data (`Any`, `dict[str, Any]`; no other field is looked at): empty ones cost
three C calls, a flat dict with known keys two set checks, and nested free-form data (tool
arguments and results) one pass, container by container, with the text and numbers of each
checked in C. Only a record that is too deep, circular, holds a secret-named key to mask or an
object of unknown kind is copied by hand.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import operator
import types
import typing
import uuid
from collections import abc
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import PurePath
from typing import Any, Final, NamedTuple

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined, to_jsonable_python

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
    "model_json",
    "model_json_text",
    "plain_copy",
    "safe_repr",
    "valid_text",
]

MAX_DEPTH: Final = 64
"""How many levels of nesting a stored record keeps; the record itself is level 1."""
CUT_HEAD: Final = "<cut: "
"""How every marker of a cut value begins."""
DEEP: Final = f"{CUT_HEAD}nested deeper than {MAX_DEPTH}>"
"""What a container nested deeper than `MAX_DEPTH` is stored as."""
CIRCULAR: Final = f"{CUT_HEAD}circular reference>"
"""What a container found inside itself is stored as."""
CUT_NOTE: Final = "agenteval.cut"
"""The key under which a record notes what was cut (`model_json(..., note_in=...)`)."""
MAX_VALUES: Final = 1_000_000
"""How many values a stored record (or a tool call's copied arguments, or its result) keeps:
every item of every list, mapping, set or model in it counts, each time it is met. A value
shared by reference (one list referenced nine times at each of twelve levels) is small in
memory and counts as written out (9**12 values): past the budget, it is cut. A tool result of
50,000 rows of eight columns is 450,000 values."""
TOO_MANY: Final = f"{CUT_HEAD}more than {MAX_VALUES:,} values>"
"""What a container met after the record's `MAX_VALUES` are spent is stored as."""

_SHOWN_PATH: Final = 5  # segments of a cut's path a note shows
_MAX_NOTES: Final = 20
_DEEP_REASON: Final = f"nested deeper than {MAX_DEPTH}"
_CIRCULAR_REASON: Final = "circular reference"
_TOO_MANY_REASON: Final = f"more than {MAX_VALUES:,} values"
# The JSON text of any cut marker starts so; a record holding one is copied by hand, to note it.
_MARKER_IN_JSON: Final = '"' + CUT_HEAD

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


@dataclass(frozen=True, slots=True)
class Hide:
    """Which values a copy masks: those under a dict key (or a pydantic model's field name) that
    `secret` says names a secret, anywhere inside the free-form data under the record's
    top-level `fields`. A value that hides nothing (None, a boolean, "" or the mask itself) is
    kept: "the key was empty" is worth seeing.

    Only free-form data is masked: a typed field (a count, a schema) keeps its value, or the
    record would no longer read back.
    """

    secret: Callable[[str], bool]
    fields: frozenset[str]
    mask: str
    plain_keys: set[str] = dataclasses.field(default_factory=set, compare=False, repr=False)
    """Keys seen so far that name no secret, so the usual record checks its keys in one step."""

    def hides(self, key: object, value: object) -> bool:
        """Whether the value under `key` is to be masked."""
        return (
            isinstance(key, str)
            and self.secret(key)
            and not (value is None or isinstance(value, bool) or value in ("", self.mask))
        )


class SafeJson(NamedTuple):
    """A record as JSON text, and what had to be cut to write it (empty for the usual record).

    A named tuple: one is made for every record stored, and it is the cheapest immutable record.
    """

    text: str
    cuts: tuple[str, ...] = ()
    """Where a value was cut and why, as `"tool_calls.0.result.self: circular reference"`
    (a path longer than five steps ends in `…`)."""
    masked: int = 0
    """How many values were masked (`Hide`)."""


def safe_repr(value: Any) -> str:
    """`repr(value)`, or a placeholder naming its type when even that fails."""
    try:
        return repr(value)
    except Exception:
        return f"<unrepresentable {type(value).__qualname__}>"


def valid_text(value: str) -> str:
    """`value` as valid UTF-8 text: a lone surrogate becomes "?"."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "replace").decode("utf-8")
    return value


# ---------------------------------------------------------------------------------------------
# The usual record: a look at its free-form fields, then pydantic's serializer


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
    if _fits(model, hide):
        try:
            text = model.model_dump_json(fallback=safe_repr, warnings=False, exclude_defaults=True)
            text.encode("utf-8")
        except Exception:
            pass
        else:
            if _MARKER_IN_JSON not in text:
                return text
    return _careful_json(model, hide, note_in).text


def _usual_json(model: BaseModel, hide: Hide | None) -> str | None:
    """The record as pydantic writes it, or None when it needs the careful copy."""
    if not _fits(model, hide):
        return None
    try:
        text = model.model_dump_json(fallback=safe_repr, warnings=False, exclude_defaults=True)
        # A lone surrogate passes pydantic and fails when the text is encoded (SQLite).
        text.encode("utf-8")
    except Exception:  # pydantic could not write something: the careful copy will
        return None
    return text if _MARKER_IN_JSON not in text else None


def _careful_json(model: BaseModel, hide: Hide | None, note_in: str | None) -> SafeJson:
    copy = _Copy(hide)
    data = copy.value(model, 1, False, [])
    if copy.cuts and note_in is not None and isinstance(data, dict):
        notes = data.get(note_in)
        data[note_in] = {**(notes if isinstance(notes, dict) else {}), CUT_NOTE: copy.noted()}
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except Exception as exc:  # not reached: the copy holds only plain JSON data
        note = [f"the record could not be encoded ({type(exc).__name__})"]
        text = json.dumps({note_in: {CUT_NOTE: note}} if note_in else {})
    return SafeJson(text, tuple(copy.noted()), copy.masked)


def cut_copy(data: Any, note_in: str | None = None) -> Any:
    """Plain JSON data (as `json.loads` gives it) cut to `MAX_DEPTH` levels, noting the cuts in
    the dict field `note_in` when there were any: to read back a record stored too deep."""
    copy = _Copy(None)
    result = copy.value(data, 1, True, [])
    if copy.cuts and note_in is not None and isinstance(result, dict):
        notes = result.get(note_in)
        result[note_in] = {**(notes if isinstance(notes, dict) else {}), CUT_NOTE: copy.noted()}
    return result


def plain_copy(value: Any, hide: Hide | None = None) -> tuple[Any, tuple[str, ...]]:
    """`value` as plain JSON data (dicts, lists, text, numbers), taken now, and what was cut;
    never fails. The value is not changed. For a tool call's arguments and result.

    With `hide`, the values under secret-named keys are masked at any depth (`Hide.fields` does
    not apply: all of `value` is free-form data)."""
    # One look first (as for a record: nothing too deep or too large, no secret-named key to
    # mask, every key learnt once); pydantic's fast copy when there is nothing to do.
    if _free_fits(value, 1, hide.plain_keys if hide is not None else None, hide, _Budget()):
        try:
            return to_jsonable_python(value, fallback=safe_repr), ()
        except Exception:  # circular, deeper than pydantic goes, or unwritable: copy by hand
            pass
    copy = _Copy(hide)
    return copy.value(value, 1, True, []), tuple(copy.noted())


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


def _plan(cls: type[BaseModel]) -> _Plan:
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


def _field(model: BaseModel, name: str) -> Any:
    return model.__dict__.get(name) if name != _EXTRA else model.__pydantic_extra__


def _kind(annotation: Any) -> int:
    if annotation is Any or annotation is object:
        return _FREE
    origin = typing.get_origin(annotation)
    if origin is None:
        if annotation is None or annotation is type(None):
            return _SCALAR
        if isinstance(annotation, type):
            if issubclass(annotation, BaseModel):
                return _TYPED if _plan(annotation) else _SCALAR
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


class _Budget:
    """How many more values one look may count before the record is too large (`MAX_VALUES`)."""

    __slots__ = ("left",)

    def __init__(self, left: int = MAX_VALUES) -> None:
        self.left = left


def _fits(model: BaseModel, hide: Hide | None) -> bool:
    """Whether pydantic can write the record as it is: no container past `MAX_DEPTH` (a cycle
    goes past it too), no more than `MAX_VALUES` values, no secret-named key to mask, nothing of
    unknown kind. Looks only at the fields that can hold more than scalars (none of them, when
    they are empty), and allocates nothing but its count."""
    looks = _LOOKS.get(type(model))
    if looks is not None:  # the usual record: every such field empty, told in three C calls
        found = looks(model.__dict__)
        if _NOTHING.issuperset(map(type, found)) and not any(found):
            return True
    return _model_fits(model, 1, hide, hide.fields if hide is not None else None, _Budget())


def _model_fits(
    model: BaseModel,
    depth: int,
    hide: Hide | None,
    fields: frozenset[str] | None,
    budget: _Budget,
) -> bool:
    """`_fits` for one of our models at `depth`; `fields`, at the record, limits `hide` to the
    fields it names."""
    plan = _PLANS.get(type(model))
    if plan is None:
        plan = _plan(type(model))
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
            if not _free_fits(item, depth + 1, keys, here, budget):
                return False
        elif not _typed_fits(item, depth + 1, here, budget):
            return False
    return budget.left >= 0


def _typed_fits(value: Any, depth: int, hide: Hide | None, budget: _Budget) -> bool:
    """`_fits` for a typed field: our own models, in lists or dicts."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, BaseModel):
        return _model_fits(value, depth, hide, None, budget)
    kind = type(value)
    items = value.values() if kind is dict else value if kind is list or kind is tuple else None
    if items is None:
        return isinstance(value, _SCALARS)
    budget.left -= len(items)
    if budget.left < 0:
        return False
    if _SIMPLE.issuperset(map(type, items)):
        return True
    for item in items:
        if type(item) not in _SIMPLE and not _typed_fits(item, depth + 1, hide, budget):
            return False
    return True


def _free_fits(
    value: Any, depth: int, keys: set[str] | None, hide: Hide | None, budget: _Budget
) -> bool:
    """`_fits` for free-form data; `keys` holds the keys known to name no secret, or is None
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
        return _free_fits(dict(value), depth, keys, hide, budget)
    else:
        return isinstance(value, _SCALARS)
    # Counted as met, not as held in memory: a list shared many times counts each time.
    budget.left -= len(items)
    if budget.left < 0:
        return False
    # Most containers hold only text and numbers: one check, in C, and no loop.
    if _SIMPLE.issuperset(map(type, items)):
        return True
    for item in items:
        if type(item) not in _SIMPLE and not _free_fits(item, depth + 1, keys, hide, budget):
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


# ---------------------------------------------------------------------------------------------
# The careful copy


class _Copy:
    """One careful copy: plain JSON data, cut where it must be, with the cuts listed."""

    def __init__(self, hide: Hide | None) -> None:
        self.hide = hide
        self.cuts: list[str] = []
        self.count = 0
        self.masked = 0
        self.active: set[int] = set()
        self.left = MAX_VALUES
        """Values still to be copied before the rest is cut (`MAX_VALUES`)."""

    def cut(self, path: list[str | int], reason: str) -> None:
        self.count += 1
        if len(self.cuts) < _MAX_NOTES:
            shown = ".".join(map(str, path[:_SHOWN_PATH]))
            if len(path) > _SHOWN_PATH:
                shown += ".…"
            self.cuts.append(f"{shown or '(the record)'}: {reason}")

    def noted(self) -> list[str]:
        extra = self.count - len(self.cuts)
        return self.cuts + ([f"… and {extra} more"] if extra > 0 else [])

    def value(self, value: Any, depth: int, free: bool, path: list[str | int]) -> Any:
        """`value` copied; whatever goes wrong costs this value only, never the record."""
        try:
            return self._value(value, depth, free, path)
        except Exception as exc:
            reason = f"could not be encoded ({type(exc).__name__})"
            self.cut(path, reason)
            return f"{CUT_HEAD}{reason}>"

    def _value(self, value: Any, depth: int, free: bool, path: list[str | int]) -> Any:
        kind = type(value)
        if kind is str:
            if free and value.startswith(CUT_HEAD) and value.endswith(">"):
                self.cut(path, value[len(CUT_HEAD) : -1])  # cut before it got here
            return valid_text(value)
        if kind is int or kind is bool or value is None:
            return value
        if kind is float:
            return value if math.isfinite(value) else None
        if isinstance(value, bytes | bytearray):
            return bytes(value).decode("utf-8", "backslashreplace")
        record = dataclasses.is_dataclass(value) and not isinstance(value, type)
        if not (record or isinstance(value, dict | list | tuple | set | frozenset | BaseModel)):
            return self._scalar(value, depth, free, path)
        if depth > MAX_DEPTH:
            self.cut(path, _DEEP_REASON)
            return DEEP
        if id(value) in self.active:
            self.cut(path, _CIRCULAR_REASON)
            return CIRCULAR
        # Counted as the look counts (`_free_fits`): the items of each container met, so a
        # record the look passed is never cut here, and one it refused is cut where it refused.
        if isinstance(value, BaseModel):
            size = len(value.__dict__) + len(value.__pydantic_extra__ or ()) if free else None
            size = len(_plan(type(value))) if size is None else size
        else:
            size = len(dataclasses.fields(value)) if record else len(value)
        if self.left < size:
            if self.left >= 0:  # noted once, where the budget ran out: the rest is cut too
                self.cut(path, _TOO_MANY_REASON)
                self.left = -1
            return TOO_MANY
        self.left -= size
        self.active.add(id(value))
        try:
            if isinstance(value, BaseModel):
                return self._model(value, depth, free, path)
            if isinstance(value, dict):
                return self._dict(value.items(), depth, free, path)
            if record:
                fields = dataclasses.fields(value)
                return self._dict(
                    ((f.name, getattr(value, f.name)) for f in fields), depth, True, path
                )
            return [
                self.value(item, depth + 1, free, [*path, index])
                for index, item in enumerate(value)
            ]
        finally:
            self.active.discard(id(value))

    def _dict(self, items: Any, depth: int, free: bool, path: list[str | int]) -> dict[str, Any]:
        hide = self.hide if free else None
        out: dict[str, Any] = {}
        for key, item in items:
            name = _key_text(key)
            if hide is not None and hide.hides(key, item):
                out[name] = hide.mask
                self.masked += 1
            else:
                out[name] = self.value(item, depth + 1, free, [*path, name])
        return out

    def _model(self, model: BaseModel, depth: int, free: bool, path: list[str | int]) -> Any:
        if free:  # a model inside free-form data: its fields are keys like any other
            return self._dict(iter(model), depth, True, path)
        plan = dict(_plan(type(model)))
        fields = type(model).model_fields
        hide = self.hide
        out: dict[str, Any] = {}
        for name, item in model:
            if name in fields and _is_default(fields[name], item):
                continue  # as pydantic writes a record here: defaults are restored on reading
            field_free = plan.get(name, name not in fields)  # an extra field is free-form
            if depth == 1 and hide is not None and name not in hide.fields:
                self.hide = None  # only the record's fields `hide` names are masked
            try:
                copied = self.value(item, depth + 1, field_free, [*path, name])
            finally:
                self.hide = hide
            if field_free or isinstance(item, str) or not _is_marker(copied):
                out[name] = copied
            # else: a typed field cannot hold a marker; left out, it reads back as its default
        return out

    def _scalar(self, value: Any, depth: int, free: bool, path: list[str | int]) -> Any:
        converted = to_jsonable_python(value, fallback=safe_repr)
        if isinstance(converted, dict | list):  # an object pydantic writes as a container
            return self.value(converted, depth, free, path)
        if isinstance(converted, str):
            return valid_text(converted)
        if isinstance(converted, float) and not math.isfinite(converted):
            return None
        return converted


def _is_default(field: FieldInfo, value: Any) -> bool:
    try:
        if field.default_factory is not None:
            default = field.default_factory()  # type: ignore[call-arg]
        elif field.default is PydanticUndefined:
            return False
        else:
            default = field.default
        return type(value) is type(default) and bool(value == default)
    except Exception:  # a value that cannot be compared is written out
        return False


def _is_marker(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(CUT_HEAD)


def _key_text(key: Any) -> str:
    if isinstance(key, str):
        return valid_text(key)
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, enum.Enum):
        return valid_text(str(key.value))
    return valid_text(str(key) if isinstance(key, int | float) else safe_repr(key))
