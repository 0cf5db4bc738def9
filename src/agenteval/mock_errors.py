"""What is wrong with a `tool_mocks` declaration, said as its writer reads it: the place as
written (a tool's one answer has no `rules.0` in the file), what is wrong, and the fix.

Shared by the case files (`casefiles/explain.py`, which adds file, line and case) and a run's
`tool_mocks` (`engine/options.py`: `evaluate(tool_mocks=)`, agenteval.yaml's `tool_mocks:`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from agenteval.suggestions import meant
from agenteval.tool_mocks import MOCK_FIXES
from agenteval.validation import describe

__all__ = ["MOCK_KEYS", "explain_mock", "written_path"]

Path = tuple[str | int, ...]

# What people call a mock's keys (`delay:` for `latency_s:`): suggested before a spelling match.
_MEANINGS: Final[dict[str, str | tuple[str, ...]]] = {
    **dict.fromkeys(
        ("delay", "latency", "latency_ms", "wait", "sleep", "duration", "delay_s"), "latency_s"
    ),
    **dict.fromkeys(
        ("return", "returns", "value", "output", "response", "answer", "data", "results"),
        "result",
    ),
    **dict.fromkeys(
        ("raise", "raises", "exception", "fail", "failure", "err", "errors", "throws"), "error"
    ),
    **dict.fromkeys(
        ("match", "if", "args", "arguments", "where", "condition", "given", "params"), "when"
    ),
    **dict.fromkeys(("state", "update_state", "new_state", "set", "state_update"), "set_state"),
    **dict.fromkeys(("answers", "responses", "calls", "steps", "seq", "sequences"), "sequence"),
}

MOCK_KEYS: Final = ("when", "result", "error", "latency_s", "set_state")  # as a mock is written

_TYPES: Final = {
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "list_type": "a list",
    "string_type": "text",
    "float_type": "a number",
    "float_parsing": "a number",
    "greater_than_equal": "0 or more",
}


def written_path(loc: Sequence[str | int], mocks: Any) -> Path:
    """A pydantic location inside `tool_mocks` (tool name first) as the mapping is written: a
    tool's one answer is read as its only rule (`rules.0`), and a list as its `rules`."""
    path: list[str | int] = []
    node = mocks
    for step in loc:
        if _has(node, step):
            path.append(step)
            node = node[step]
        elif isinstance(step, str) or isinstance(node, dict):
            continue  # `rules` (never written), or the `0` of a tool's one answer
        else:
            path.append(step)
            node = None
    return tuple(path)


def explain_mock(path: Path, errors: Sequence[Any], mocks: Any) -> tuple[str, str] | None:
    """What is wrong at `path` (as `written_path` gives it) in `mocks` (the `tool_mocks` as
    written), and the fix, from pydantic's errors there; None when it has nothing better to
    say than the generic message."""
    error = errors[0]
    kind: str = error["type"]
    if not path:
        return (
            f"`tool_mocks` is a mapping of tool names to their mocks, got {describe(mocks)}",
            "write each tool's name and what it answers, e.g. "
            "`tool_mocks: {get_weather: {result: {celsius: 14}}}`",
        )
    who = f"the mock of {path[0]!r}"
    rest = path[1:]
    if kind in MOCK_FIXES:
        return f"{who}: {error['msg']}", MOCK_FIXES[kind]
    if kind == "extra_forbidden" and rest:
        return _unknown_key(who, path, mocks)
    got = describe(error.get("input"))
    if not rest or (len(rest) == 1 and isinstance(rest[0], int)) or rest[-1:] == ("sequence",):
        where = "the tool's answer" if not rest else "each answer"
        if rest[-1:] == ("sequence",):
            return (
                f"{who}: `sequence:` is a list of answers, got {got}",
                "write the answers in order, e.g. `sequence: [{error: timeout}, {result: ok}]`",
            )
        return (
            f"{who}: {where} is a mapping with `result:` or `error:`, got {got}",
            MOCK_FIXES["mock_shape"],
        )
    if isinstance(rest[-1], int) and rest[-2:-1] == ("sequence",):
        return (
            f"{who}: each answer of a `sequence:` is a mapping, got {got}",
            MOCK_FIXES["mock_shape"],
        )
    key = rest[-1]
    wanted = _TYPES.get(kind, "another value")
    if key == "latency_s":
        return (
            f"{who}: `latency_s` is the delay before the answer, in seconds, {wanted}; got {got}",
            MOCK_FIXES["mock_latency"],
        )
    if key == "when":
        return (
            f"{who}: `when` is a mapping of the arguments a call must have, got {got}",
            "e.g. `when: {city: Paris}`",
        )
    if key == "set_state":
        return (
            f"{who}: `set_state` is a mapping of state keys to their new values, got {got}",
            "e.g. `set_state: {ticket_open: true}`",
        )
    if key == "error":
        return (
            f"{who}: `error` is text, got {got}",
            'e.g. `error: "UnknownCityError: no such city"`, `error: timeout` or '
            "`error: rate_limited`",
        )
    return None


def _unknown_key(who: str, path: Path, mocks: Any) -> tuple[str, str]:
    key = str(path[-1])
    parent = _at(mocks, path[:-1])
    in_sequence = len(path) >= 3 and path[-3] == "sequence"
    if isinstance(parent, dict) and "sequence" in parent and not in_sequence:
        return (
            f"{who}: `{key}` is given beside `sequence:`, whose answers each have their own",
            f"move `{key}:` into the answers of the `sequence:`, or remove `sequence:`",
        )
    names = [name for name in MOCK_KEYS if name != "when" or not in_sequence]
    if len(path) == 2:  # a tool's one answer, where `sequence:` may stand instead
        names.append("sequence")
    close = meant(key, names, _MEANINGS, lambda name: not _given(parent, name))
    if close is not None:
        return (
            f"{who}: unknown key {key!r} — did you mean {close!r}?",
            f"rename {key!r} to {close!r}",
        )
    return f"{who}: unknown key {key!r}", "the keys of a mock's answer are: " + ", ".join(names)


def _at(node: Any, path: Path) -> Any:
    for step in path:
        if not _has(node, step):
            return None
        node = node[step]
    return node


def _has(node: Any, step: str | int) -> bool:
    if isinstance(node, dict):
        return step in node
    return isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)


def _given(parent: Any, name: str) -> bool:
    return isinstance(parent, dict) and name in parent
