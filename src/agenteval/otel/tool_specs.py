"""The tools offered to a model, as each instrumentation family declares them on its model-call
spans:

| family | attribute |
|---|---|
| GenAI (OpenLLMetry 0.62, pydantic-ai) | `gen_ai.tool.definitions`: JSON list of `{type, name, description, parameters}` (or OpenAI's `{type, function: {...}}`) |
| OpenInference | `llm.tools.N.tool.json_schema`: JSON text of `{"type": "function", "function": {name, description, parameters}}` |
| OpenLLMetry before 0.55 | `llm.request.functions.N.{name, description, parameters}` (parameters as JSON text) |

openai-v2 2.4b0 declares no tools on chat completions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from agenteval.trace import ToolSpec

from .spans import SpanRecord
from .values import json_or_value

__all__ = ["ToolSpecReader"]

_OPENINFERENCE = re.compile(r"llm\.tools\.(\d+)\.tool\.json_schema")
_FLAT_MARKERS = frozenset({"llm.tools.0.tool.json_schema", "llm.request.functions.0.name"})
"""Both families number the tools from 0: one of these is on every span that lists tools."""
_TRACELOOP = re.compile(r"llm\.request\.functions\.(\d+)\.(name|description|parameters)")


def _spec(item: Any) -> ToolSpec | None:
    item = json_or_value(item)
    if not isinstance(item, dict):
        return None
    nested = item.get("function")
    function: Mapping[str, Any] = nested if isinstance(nested, dict) else item
    name = function.get("name")
    if not isinstance(name, str) or not name:
        return None
    parameters = json_or_value(function.get("parameters"))
    return ToolSpec(
        name=name,
        description=str(function.get("description") or ""),
        parameters=parameters if isinstance(parameters, dict) else {},
    )


class ToolSpecReader:
    """Collects the tools declared on model spans, by name, the first declaration winning.

    The same definitions repeat on every model call of a trial: a text already read is not
    parsed again."""

    def __init__(self) -> None:
        self.tools: dict[str, ToolSpec] = {}
        self._seen: set[str] = set()

    def _add(self, specs: Iterable[ToolSpec | None]) -> None:
        for spec in specs:
            if spec is not None:
                self.tools.setdefault(spec.name, spec)

    def read(self, span: SpanRecord) -> None:
        """Add the tools one span declares."""
        attrs = span.attributes
        definitions = attrs.get("gen_ai.tool.definitions")
        if isinstance(definitions, str):
            if definitions not in self._seen:
                self._seen.add(definitions)
                parsed = json_or_value(definitions)
                if isinstance(parsed, list):
                    self._add(_spec(item) for item in parsed)
        elif isinstance(definitions, list):
            self._add(_spec(item) for item in definitions)
        if attrs.keys().isdisjoint(_FLAT_MARKERS):
            return
        functions: dict[int, dict[str, Any]] = {}
        for key, value in attrs.items():
            if key.startswith("llm.tools."):
                if _OPENINFERENCE.fullmatch(key) and not (
                    isinstance(value, str) and value in self._seen
                ):
                    if isinstance(value, str):
                        self._seen.add(value)
                    self._add([_spec(value)])
            elif key.startswith("llm.request.functions."):
                match = _TRACELOOP.fullmatch(key)
                if match is not None:
                    functions.setdefault(int(match[1]), {})[match[2]] = value
        self._add(_spec(functions[index]) for index in sorted(functions))
