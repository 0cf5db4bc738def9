"""The names evaluator scores carry: the class name in snake_case, with the settings that differ
from the defaults in brackets (`tool_call_accuracy[require_order]`,
`task_completion[threshold=0.85]`), and the reading of such a name back into a name and its
settings (`--scorer 'tool_call_accuracy[require_order]'`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from agenteval.errors import ScorerError

__all__ = ["named_settings", "settings_name", "snake_case"]

_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SETTINGS_NAME = re.compile(r"^(?P<name>[A-Za-z_][\w.-]*)\[(?P<settings>[^\[\]]*)\]$")


def snake_case(class_name: str) -> str:
    """`ToolCallAccuracy` → `tool_call_accuracy`; `AgentMemoryEval` → `agent_memory_eval`."""
    return _WORD_BOUNDARY.sub("_", class_name).lower()


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def settings_name(base: str, settings: Mapping[str, Any]) -> str:
    """`base` with `settings` in brackets, in the order given: a setting that is `True` by its
    key alone, any other as `key=value`; `base` itself when there are none."""
    if not settings:
        return base
    parts = [
        key if value is True else f"{key}={_value_text(value)}" for key, value in settings.items()
    ]
    return f"{base}[{','.join(parts)}]"


def named_settings(ref: str) -> tuple[str, dict[str, Any]] | None:
    """The name and settings a bracketed name spells (`settings_name` read back), or None when
    `ref` has no brackets. Values are read as YAML scalars (`0.85`, `true`, `3`).

    Raises `ScorerError` for a bracketed name that cannot be read.
    """
    if "[" not in ref:
        return None
    match = _SETTINGS_NAME.match(ref.strip())
    if match is None:
        raise ScorerError(
            f"cannot read the scorer name {ref!r}",
            hint="write NAME[SETTING,SETTING=VALUE], e.g. tool_call_accuracy[require_order]",
        )
    settings: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in match["settings"].split(","))):
        key, sep, text = part.partition("=")
        key = key.strip()
        if not key.isidentifier():
            raise ScorerError(f"{ref!r}: {key!r} is not a setting name", field="scorers")
        settings[key] = yaml.safe_load(text.strip()) if sep else True
    return match["name"], settings
