"""How the agent used its tools, one rung and one habit per scorer.

The rungs each fail for a different reason:

1. `ToolSelection`: it called every tool the case needs, as often as needed.
2. `ToolArgumentsValid`: every call named a real tool, with arguments its schema accepts.
3. `ToolExecution`: every call with valid arguments ran without an error.

And how it got there: `TrajectoryOrder` (the expected calls, in order), `StepEfficiency` (calls
needed over calls made) and `RedundantCalls` (no repeat of a call that already worked).

A call failed when it raised (`ToolCall.error` is set) or when its result reports an error
itself: a dict result (or a string holding a JSON object, as many tool wrappers return) with a
truthy `"error"` key, or with `"isError": true` (as MCP tools report errors). `call_error`
applies that rule.

None of them judges a trial that failed for an infrastructure reason (timeout, rate limit,
provider or connection error): each gives no score, with the cause (see
`agenteval.scorers.answer.not_judged`). A trial the agent itself failed is judged on the calls it
made.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, best_match

from agenteval.case import EvalCase, ExpectedCall
from agenteval.errors import ScorerError
from agenteval.jsonsafe import plain_copy
from agenteval.score import Score
from agenteval.scorers.answer import no_answer_reason, not_judged
from agenteval.scorers.redacted import from_store, holds_redacted, undecided
from agenteval.scorers.text import EXCERPT_CHARS, EXCERPT_ITEMS, excerpt, json_value
from agenteval.trace import ToolCall, ToolSpec, Trial

__all__ = [
    "RedundantCalls",
    "StepEfficiency",
    "ToolArgumentsValid",
    "ToolExecution",
    "ToolSelection",
    "TrajectoryOrder",
    "call_error",
    "canonical_arguments",
]


def _binary(name: str, passed: bool, reason: str, details: dict[str, Any]) -> Score:
    return Score(
        name=name, value=1.0 if passed else 0.0, passed=passed, reason=reason, details=details
    )


def _times(count: int) -> str:
    return "1 time" if count == 1 else f"{count} times"


def _calls(count: int) -> str:
    return "1 call" if count == 1 else f"{count} calls"


# --- 1. tool_selection ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolSelection:
    """The agent called every tool in the case's `expected_tools`, as often as it is listed.

    `expected_tools` is a multiset: a tool listed twice must be called at least twice. Every
    call counts, whether or not it worked (later rungs judge that), and calls of other tools do
    not hurt. Answering from memory, without the calls, fails even when the answer is right.

    Applies when the case sets `expected_tools`; an explicit empty list means the case needs no
    tool, and passes (calls made anyway are `StepEfficiency`'s question, and the reason says
    so). Not judged when the trial failed for an infrastructure reason (`Trial.responded` is
    False); a trial the agent itself failed is judged on the calls it made. Binary: 1.0 or 0.0.
    """

    name: str = "tool_selection"
    threshold: float = 1.0

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        if case.expected_tools is None:
            return Score(name=self.name, reason="no expected_tools in the case")
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        needed = Counter(case.expected_tools)
        called = Counter(call.name for call in trial.tool_calls)
        missing = {
            tool: count - called[tool] for tool, count in needed.items() if called[tool] < count
        }
        details: dict[str, Any] = {
            "needed": dict(needed),
            "called": dict(called),
            "missing": missing,
        }
        if not needed:
            # Calls nobody needed are not this rung's question; say so, or the pass reads as
            # approval of them. step_efficiency scores them (0 when none were needed).
            made = len(trial.tool_calls)
            reason = "no tools needed"
            if made:
                reason += f"; the {_calls(made)} made are step_efficiency's question, not this one"
            return _binary(self.name, True, reason, details)
        if not missing:
            listed = ", ".join(f"{tool} ({_times(count)})" for tool, count in needed.items())
            return _binary(self.name, True, f"called every needed tool: {listed}", details)
        if not trial.tool_calls:
            listed = ", ".join(f"{tool} ({_times(count)})" for tool, count in needed.items())
            if (trial.output or "").strip():
                reason = f"answered without calling any tool; needed {listed}"
            else:
                reason = f"called no tool; needed {listed}; {no_answer_reason(trial)}"
            return _binary(self.name, False, reason, details)
        shortfalls = [
            f"{tool} never called"
            if called[tool] == 0
            else f"{tool} called {_times(called[tool])}, needed {needed[tool]}"
            for tool in missing
        ]
        return _binary(self.name, False, "; ".join(shortfalls), details)


# --- 2. tool_arguments_valid ---------------------------------------------------------------------

_Check: TypeAlias = Callable[[Any], bool]
_Validators: TypeAlias = dict[str, tuple[ToolSpec, Draft202012Validator, _Check | None]]
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


def _quick_check(schema: Any) -> _Check | None:
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
    checks = {name: _quick_check(sub) for name, sub in properties.items()}
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
        return all(name in instance for name in required)

    return check


def _keyword_check(key: str, value: Any, schema: dict[str, Any]) -> _Check | None:
    # One keyword's check (see `_quick_check`), or None when the keyword is not one it knows.
    if key == "type":
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not all(name in _TYPE_CHECKS for name in names):
            return None
        types = [_TYPE_CHECKS[name] for name in names]
        if len(types) == 1:
            return types[0]
        return lambda instance: any(check(instance) for check in types)
    if key == "anyOf" and isinstance(value, list) and value:
        options = [_quick_check(option) for option in value]
        if any(option is None for option in options):
            return None
        return lambda instance: any(option(instance) for option in options)  # type: ignore[misc]
    if key == "items":
        each = _quick_check(value)
        if each is None:
            return None
        return lambda instance: not isinstance(instance, list) or all(map(each, instance))
    if key == "properties" and isinstance(value, dict):
        properties = {name: _quick_check(sub) for name, sub in value.items()}
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


def _argument_problem(
    call: ToolCall,
    tools: Mapping[str, ToolSpec],
    validators: _Validators,
) -> str | None:
    # What is wrong with a call's tool name or arguments, or None when nothing is.
    spec = tools.get(call.name)
    if spec is None:
        close = difflib.get_close_matches(call.name, list(tools), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown tool {call.name!r}{hint}"
    cached = validators.get(call.name)
    if cached is not None and cached[0] is spec:
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
        quick = _quick_check(spec.parameters)
        validators[call.name] = (spec, validator, quick)
    if quick is not None and quick(call.arguments):
        return None
    error = best_match(validator.iter_errors(call.arguments))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


@dataclass(frozen=True)
class ToolArgumentsValid:
    """Every tool call named a known tool, with arguments its JSON schema accepts.

    `tools` are the run's tools by name (their `parameters` are JSON schemas, checked with the
    Draft 2020-12 validator). A call of a tool not in `tools` is invalid.

    Applies when the trial made at least one tool call and the run's tools are known (without a
    tool list there is no telling a real tool from an invented one; an empty mapping counts as
    unknown). Not judged when the trial failed for an infrastructure reason, nor in a rescore
    when an invalid call's stored arguments hold a masked secret (`scorers.redacted`). Binary:
    1.0 or 0.0; `details["invalid"]` lists each invalid call.
    """

    tools: Mapping[str, ToolSpec] | None = None
    name: str = "tool_arguments_valid"
    threshold: float = 1.0
    _validators: _Validators = field(default_factory=dict, init=False, repr=False, compare=False)

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        if not self.tools:
            return Score(name=self.name, reason="no tool schemas known for this run")
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        if not trial.tool_calls:
            return Score(name=self.name, reason="no tool calls to check")
        invalid: list[dict[str, Any]] = []
        for index, call in enumerate(trial.tool_calls):
            problem = _argument_problem(call, self.tools, self._validators)
            if problem is not None:
                # A rescore reads a secret-named argument as the string `[REDACTED]`, whatever
                # it was: an invalid call holding the mark cannot be told from the store.
                if from_store() and holds_redacted(canonical_arguments(call.arguments)):
                    return undecided(self.name)
                # The problem may quote the bad value whole: an excerpt, as every detail.
                invalid.append({"index": index, "name": call.name, "problem": excerpt(problem)})
        total = len(trial.tool_calls)
        details: dict[str, Any] = {"calls": total, "invalid": invalid[:EXCERPT_ITEMS]}
        if not invalid:
            return _binary(self.name, True, f"all {total} calls valid", details)
        first = invalid[0]
        reason = (
            f"{len(invalid)} of {total} calls invalid; "
            f"call {first['index'] + 1} ({first['name']}): {first['problem']}"
        )
        return _binary(self.name, False, reason, details)


# --- 3. tool_execution ---------------------------------------------------------------------------


def call_error(call: ToolCall) -> str | None:
    """Why a call failed, or None when it worked.

    A call failed when it raised (`call.error`), or when its result is a dict reporting an error:
    a truthy `"error"` key, or `"isError": true` (MCP style). A string holding a JSON object
    (`'{"error": "not found"}'`) is read as that object first (`text.json_value`).
    """
    if call.error is not None:
        return call.error
    result = json_value(call.result)
    if isinstance(result, Mapping):
        if result.get("error"):
            return f"result reports an error: {result['error']}"
        if result.get("isError") is True:
            return "result reports isError: true"
    return None


@dataclass(frozen=True)
class ToolExecution:
    """Every tool call with valid arguments ran without an error (see `call_error`).

    Calls with invalid arguments are left to `ToolArgumentsValid`; when the run's `tools` are not
    known, every call counts as having valid arguments.

    Applies when at least one call had valid arguments. Not judged when the trial failed for an
    infrastructure reason. Binary: 1.0 or 0.0; `details["failed"]` lists each failed call.
    """

    tools: Mapping[str, ToolSpec] | None = None
    name: str = "tool_execution"
    threshold: float = 1.0
    _validators: _Validators = field(default_factory=dict, init=False, repr=False, compare=False)

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        if not trial.tool_calls:
            return Score(name=self.name, reason="no tool calls to check")
        checked = [
            (index, call)
            for index, call in enumerate(trial.tool_calls)
            if not self.tools or _argument_problem(call, self.tools, self._validators) is None
        ]
        if not checked:
            return Score(
                name=self.name,
                reason="no call had valid arguments (tool_arguments_valid reports them)",
            )
        failed: list[dict[str, Any]] = []
        for index, call in checked:
            error = call_error(call)
            if error is not None:
                failed.append({"index": index, "name": call.name, "error": excerpt(error)})
        details: dict[str, Any] = {"checked": len(checked), "failed": failed[:EXCERPT_ITEMS]}
        if not failed:
            return _binary(self.name, True, f"all {len(checked)} calls ran without error", details)
        first = failed[0]
        reason = (
            f"{len(failed)} of {len(checked)} calls failed; "
            f"call {first['index'] + 1} ({first['name']}): {first['error']}"
        )
        return _binary(self.name, False, reason, details)


# --- trajectory_order ----------------------------------------------------------------------------


def _same_value(expected: Any, actual: Any) -> bool:
    # Exact equality, except that numbers compare by value (3 == 3.0) and a bool is not a number.
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return float(expected) == float(actual)
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return expected.keys() == actual.keys() and all(
            _same_value(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        return len(expected) == len(actual) and all(
            _same_value(left, right) for left, right in zip(expected, actual, strict=True)
        )
    return bool(expected == actual)


def _fits(expected: ExpectedCall, call: ToolCall) -> bool:
    return expected.name == call.name and all(
        key in call.arguments and _same_value(value, call.arguments[key])
        for key, value in expected.arguments.items()
    )


def _describe(expected: ExpectedCall) -> str:
    if not expected.arguments:
        return expected.name
    arguments = ", ".join(f"{key}={value!r}" for key, value in expected.arguments.items())
    return f"{expected.name}({arguments})"


@dataclass(frozen=True)
class TrajectoryOrder:
    """The calls in the case's `expected_trajectory` were made in that order.

    The expected calls must appear among the trial's tool calls as a subsequence: other calls in
    between are allowed, a different order is not. An expected call with `arguments` matches only
    a call carrying each of those arguments with an equal value (other arguments are allowed;
    numbers compare by value, so 3 equals 3.0; nested values must be equal as a whole).

    Applies when the case sets `expected_trajectory` (an empty one passes). Not judged when the
    trial failed for an infrastructure reason; a trial the agent itself failed is judged on the
    calls it made. Binary: 1.0 or 0.0; `details` say how far the match got.
    """

    name: str = "trajectory_order"
    threshold: float = 1.0

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        expected = case.expected_trajectory
        if expected is None:
            return Score(name=self.name, reason="no expected_trajectory in the case")
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        calls = trial.tool_calls
        matched_at: list[int] = []
        position = 0
        for step in expected:
            while position < len(calls) and not _fits(step, calls[position]):
                position += 1
            if position == len(calls):
                break
            matched_at.append(position)
            position += 1
        details: dict[str, Any] = {
            "matched": len(matched_at),
            "expected": len(expected),
            "matched_calls": matched_at,
            "first_unmatched": None,
        }
        if len(matched_at) == len(expected):
            reason = (
                "no calls expected"
                if not expected
                else f"all {len(expected)} expected calls made in order"
            )
            return _binary(self.name, True, reason, details)
        missing = expected[len(matched_at)]
        details["first_unmatched"] = {
            "position": len(matched_at),
            "name": missing.name,
            "arguments": missing.arguments,
        }
        after = f" after call {matched_at[-1] + 1}" if matched_at else ""
        if any(_fits(missing, call) for call in calls):
            why = f"{_describe(missing)} was called, but not{after} in the expected order"
        elif any(call.name == missing.name for call in calls):
            why = f"{missing.name} was called, but never as {_describe(missing)}"
        else:
            why = f"{missing.name} was never called"
        reason = f"matched {len(matched_at)} of {len(expected)} expected calls; {why}"
        return _binary(self.name, False, reason, details)


# --- step_efficiency -----------------------------------------------------------------------------


@dataclass(frozen=True)
class StepEfficiency:
    """Tool calls needed over tool calls made, at most 1: 6 calls for a 3-call task score 0.5.

    "Needed" is the case's `max_tool_calls`, else the length of its `expected_trajectory`, else
    of its `expected_tools`. Applies when one of those is set. Not judged when the trial failed
    for an infrastructure reason. With no calls made: 1.0 if none were needed; otherwise not
    scored (efficiency is undefined, and `tool_selection` reports the missing calls). Passes at `threshold` (0.5 by
    default, so twice the calls needed just passes; set it to suit).
    """

    name: str = "step_efficiency"
    threshold: float = 0.5

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        if case.max_tool_calls is not None:
            needed, source = case.max_tool_calls, "max_tool_calls"
        elif case.expected_trajectory is not None:
            needed, source = len(case.expected_trajectory), "expected_trajectory"
        elif case.expected_tools is not None:
            needed, source = len(case.expected_tools), "expected_tools"
        else:
            return Score(
                name=self.name,
                reason="no max_tool_calls, expected_trajectory or expected_tools in the case",
            )
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        made = len(trial.tool_calls)
        details: dict[str, Any] = {"needed": needed, "made": made, "needed_from": source}
        if made == 0:
            if needed == 0:
                return Score(
                    name=self.name,
                    value=1.0,
                    passed=True,
                    reason="no calls needed, none made",
                    details=details,
                )
            return Score(
                name=self.name,
                reason="no tool calls made; tool_selection reports the missing calls",
                details=details,
            )
        value = min(1.0, needed / made)
        return Score(
            name=self.name,
            value=value,
            passed=value >= self.threshold,
            reason=f"{made} calls made, {needed} needed ({source})",
            details=details,
        )


# --- redundant_calls -----------------------------------------------------------------------------


def _canonical(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        # 3.0 is the same argument as 3 (written 3); so is -0.0 as 0.
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        return {str(key): _canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    return str(value)


def canonical_arguments(arguments: Mapping[str, Any]) -> str:
    """A call's arguments as canonical JSON: keys sorted, numbers by value (3 is 3.0).
    Arguments nested past Python's recursion limit, or containing themselves, are compared as
    the store keeps them: cut at 64 levels (`jsonsafe`)."""
    try:
        data = _canonical(arguments)
    except RecursionError:
        data = _canonical(plain_copy(arguments)[0])
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class RedundantCalls:
    """No tool was called again with the same arguments after an identical call had worked.

    Arguments are the same when their canonical JSON is (key order does not matter, numbers
    compare by value). Retrying a call that failed (see `call_error`) is fine. Tools named in
    `exempt_tools` (a clock, a poll) may repeat freely.

    Applies when the trial made at least one tool call. Not judged when the trial failed for an
    infrastructure reason, nor in a rescore when a repeat's stored arguments hold a masked
    secret (different secrets read the same: `scorers.redacted`). Binary: 1.0 or 0.0;
    `details["redundant"]` lists each repeat with the earlier call that had already worked.
    """

    name: str = "redundant_calls"
    threshold: float = 1.0
    exempt_tools: tuple[str, ...] = ()

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        if not trial.tool_calls:
            return Score(name=self.name, reason="no tool calls to check")
        worked: dict[tuple[str, str], int] = {}
        redundant: list[dict[str, Any]] = []
        for index, call in enumerate(trial.tool_calls):
            if call.name in self.exempt_tools:
                continue
            key = (call.name, canonical_arguments(call.arguments))
            if key in worked:
                # A rescore reads different secrets as the same `[REDACTED]`: not a repeat it
                # can tell.
                if holds_redacted(key[1]):
                    return undecided(self.name)
                redundant.append(
                    {
                        "index": index,
                        "name": call.name,
                        # Long arguments as an excerpt of their JSON: the trial holds them whole.
                        "arguments": json.loads(key[1])
                        if len(key[1]) <= EXCERPT_CHARS
                        else excerpt(key[1]),
                        "earlier_index": worked[key],
                    }
                )
            elif call_error(call) is None:
                worked[key] = index
        details: dict[str, Any] = {
            "calls": len(trial.tool_calls),
            "redundant": redundant[:EXCERPT_ITEMS],
        }
        if not redundant:
            return _binary(self.name, True, "no call repeated one that had worked", details)
        first = redundant[0]
        reason = (
            f"{len(redundant)} redundant {'call' if len(redundant) == 1 else 'calls'}; "
            f"call {first['index'] + 1} ({first['name']}) repeats call {first['earlier_index'] + 1}, "
            "which had already worked"
        )
        return _binary(self.name, False, reason, details)
