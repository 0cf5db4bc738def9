"""The copy by hand of a record that pydantic cannot write as it is: plain JSON data, cut where
it must be (too deep, circular, too many values, unwritable), with the secret-named values masked
and the cuts listed."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from typing import Any, Final

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined, to_jsonable_python

from agenteval.jsonsafe import limits
from agenteval.jsonsafe.limits import Hide, safe_repr, valid_text
from agenteval.jsonsafe.look import model_plan

_SHOWN_PATH: Final = 5  # segments of a cut's path a note shows
_MAX_NOTES: Final = 20
_DEEP_REASON: Final = f"nested deeper than {limits.MAX_DEPTH}"
_CIRCULAR_REASON: Final = "circular reference"
_TOO_MANY_REASON: Final = f"more than {limits.MAX_VALUES:,} values"


class CarefulCopy:
    """One careful copy: plain JSON data, cut where it must be, with the cuts listed."""

    def __init__(self, hide: Hide | None) -> None:
        self.hide = hide
        self.cuts: list[str] = []
        self.count = 0
        self.masked = 0
        self.active: set[int] = set()
        self.left = limits.MAX_VALUES
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

    def note_in(self, data: Any, field: str | None) -> Any:
        """`data`, a copy, with the list of cuts written under `CUT_NOTE` in its dict `field`
        when anything was cut."""
        if self.cuts and field is not None and isinstance(data, dict):
            notes = data.get(field)
            data[field] = {
                **(notes if isinstance(notes, dict) else {}),
                limits.CUT_NOTE: self.noted(),
            }
        return data

    def value(self, value: Any, depth: int, free: bool, path: list[str | int]) -> Any:
        """`value` copied; whatever goes wrong costs this value only, never the record."""
        try:
            return self._value(value, depth, free, path)
        except Exception as exc:
            reason = f"could not be encoded ({type(exc).__name__})"
            self.cut(path, reason)
            return f"{limits.CUT_HEAD}{reason}>"

    def _value(self, value: Any, depth: int, free: bool, path: list[str | int]) -> Any:
        kind = type(value)
        if kind is str:
            if free and value.startswith(limits.CUT_HEAD) and value.endswith(">"):
                self.cut(path, value[len(limits.CUT_HEAD) : -1])  # cut before it got here
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
        if depth > limits.MAX_DEPTH:
            self.cut(path, _DEEP_REASON)
            return limits.DEEP
        if id(value) in self.active:
            self.cut(path, _CIRCULAR_REASON)
            return limits.CIRCULAR
        # Counted as the look counts (`look.free_fits`): the items of each container met, so a
        # record the look passed is never cut here, and one it refused is cut where it refused.
        if isinstance(value, BaseModel):
            size = len(value.__dict__) + len(value.__pydantic_extra__ or ()) if free else None
            size = len(model_plan(type(value))) if size is None else size
        else:
            size = len(dataclasses.fields(value)) if record else len(value)
        if self.left < size:
            if self.left >= 0:  # noted once, where the budget ran out: the rest is cut too
                self.cut(path, _TOO_MANY_REASON)
                self.left = -1
            return limits.TOO_MANY
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
        plan = dict(model_plan(type(model)))
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
    return isinstance(value, str) and value.startswith(limits.CUT_HEAD)


def _key_text(key: Any) -> str:
    if isinstance(key, str):
        return valid_text(key)
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, enum.Enum):
        return valid_text(str(key.value))
    return valid_text(str(key) if isinstance(key, int | float) else safe_repr(key))
