"""A tool call checked against its tool's JSON schema (Draft 2020-12): a quick check for the
schemas tools usually have, the full validator for any other and to say what is wrong."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, best_match

from agenteval.errors import ScorerError
from agenteval.trace import ToolCall, ToolSpec, Trial

_Check: TypeAlias = Callable[[Any], bool]
Validators: TypeAlias = dict[str, tuple[ToolSpec, Draft202012Validator, _Check | None]]
"""Compiled validators by tool name, with the spec each was compiled from and its quick check."""

# Keywords that never make an instance invalid.
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)


def _is_integer(value: Any) -> bool:
    # As Draft 2020-12 has it: 3.0 is an integer, True is not.
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_TYPE_CHECKS: dict[str, _Check] = {
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
    "number": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "array": lambda value: isinstance(value, list),
    "object": lambda value: isinstance(value, dict),
}


def quick_check(schema: Any) -> _Check | None:
    """A check that accepts an instance only when `schema` certainly accepts it, for the schemas
    tools usually have (`@tool` writes them: types, properties, required, no extra properties,
    `anyOf` for optional ones, `items`); None for any other schema.

    Validating with jsonschema costs far more than the scorer around it; a call the quick check
    does not accept is validated in full, which also says what is wrong with it.
    """
    if not isinstance(schema, dict):
        return None
    keywords = {key: value for key, value in schema.items() if key not in _ANNOTATIONS}
    if keywords.get("type") == "object" and keywords.keys() <= _OBJECT_KEYWORDS:
        return _object_check(keywords)
    checks: list[_Check] = []
    for key, value in keywords.items():
        check = _keyword_check(key, value, schema)
        if check is None:
            return None
        checks.append(check)
    if len(checks) == 1:
        return checks[0]
    return lambda instance: all(check(instance) for check in checks)


_OBJECT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties"})


def _object_check(keywords: dict[str, Any]) -> _Check | None:
    # The usual arguments schema as one function: it runs for every call scored.
    properties = keywords.get("properties", {})
    required = keywords.get("required", [])
    extra_allowed = keywords.get("additionalProperties", True)
    if not (
        isinstance(properties, dict)
        and isinstance(required, list)
        and isinstance(extra_allowed, bool)
    ):
        return None
    checks = {name: quick_check(sub) for name, sub in properties.items()}
    known: dict[str, _Check] = {name: c for name, c in checks.items() if c is not None}
    if len(known) != len(checks):
        return None

    def check(instance: Any) -> bool:
        if not isinstance(instance, dict):
            return False
        for name, item in instance.items():
            property_check = known.get(name)
            if property_check is None:
                if not extra_allowed:
                    return False
            elif not property_check(item):
                return False
        # A loop, not `all()` over a generator, which costs more than the test (every call).
        for name in required:  # noqa: SIM110
            if name not in instance:
                return False
        return True

    return check


def _keyword_check(key: str, value: Any, schema: dict[str, Any]) -> _Check | None:
    # One keyword's check (see `quick_check`), or None when the keyword is not one it knows.
    if key == "type":
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not all(name in _TYPE_CHECKS for name in names):
            return None
        types = [_TYPE_CHECKS[name] for name in names]
        if len(types) == 1:
            return types[0]
        return lambda instance: any(check(instance) for check in types)
    if key == "anyOf" and isinstance(value, list) and value:
        options = [quick_check(option) for option in value]
        if any(option is None for option in options):
            return None
        return lambda instance: any(option(instance) for option in options)  # type: ignore[misc]
    if key == "items":
        each = quick_check(value)
        if each is None:
            return None
        return lambda instance: not isinstance(instance, list) or all(map(each, instance))
    if key == "properties" and isinstance(value, dict):
        properties = {name: quick_check(sub) for name, sub in value.items()}
        if any(check is None for check in properties.values()):
            return None
        return lambda instance: (
            not isinstance(instance, dict)
            or all(
                properties[name](item)  # type: ignore[misc]
                for name, item in instance.items()
                if name in properties
            )
        )
    if key == "required" and isinstance(value, list):
        return lambda instance: (
            not isinstance(instance, dict) or all(name in instance for name in value)
        )
    if key == "additionalProperties" and isinstance(value, bool):
        if value:
            return lambda instance: True
        allowed = schema.get("properties", {})
        if not isinstance(allowed, dict):
            return None
        return lambda instance: (
            not isinstance(instance, dict) or all(name in allowed for name in instance)
        )
    return None


def known_tools(run_tools: Mapping[str, ToolSpec] | None, trial: Trial) -> Mapping[str, ToolSpec]:
    """The tools a trial's calls are checked against: the run's, and for a tool the run does not
    declare, the one the trial's trace declares (`Trial.tool_specs`); the run's own win."""
    if not trial.tool_specs:
        return run_tools or {}
    if not run_tools:
        return trial.tool_specs
    return {**trial.tool_specs, **run_tools}


def argument_problem(
    call: ToolCall,
    tools: Mapping[str, ToolSpec],
    validators: Validators,
) -> str | None:
    # What is wrong with a call's tool name or arguments, or None when nothing is.
    spec = tools.get(call.name)
    if spec is None:
        close = difflib.get_close_matches(call.name, list(tools), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown tool {call.name!r}{hint}"
    cached = validators.get(call.name)
    # Equal, not only the same: each trial read from a trace brings its own copy of a tool.
    if cached is not None and (cached[0] is spec or cached[0] == spec):
        validator, quick = cached[1], cached[2]
    else:  # first use, or the tool was declared again
        try:
            Draft202012Validator.check_schema(spec.parameters)
        except SchemaError as exc:
            raise ScorerError(
                f"tool {call.name!r} has an invalid JSON schema for its arguments: {exc.message}",
                hint="fix the tool's `parameters` schema (JSON Schema, Draft 2020-12)",
            ) from exc
        validator = Draft202012Validator(spec.parameters)
        quick = quick_check(spec.parameters)
        validators[call.name] = (spec, validator, quick)
    if quick is not None and quick(call.arguments):
        return None
    error = best_match(validator.iter_errors(call.arguments))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message
