"""What the tool scorers share: a binary score, a call's failure as a result reports it
(`call_error`), and the counts in their reasons."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval.score import Score
from agenteval.scorers.text import json_value
from agenteval.trace import ToolCall


def binary(name: str, passed: bool, reason: str, details: dict[str, Any]) -> Score:
    """A pass (1.0) or a fail (0.0)."""
    return Score(
        name=name, value=1.0 if passed else 0.0, passed=passed, reason=reason, details=details
    )


def per_call(
    name: str,
    bad: list[dict[str, Any]],
    total: int,
    *,
    said: str,
    what: str,
    passed: str,
    details: dict[str, Any],
) -> Score:
    """The score of a rung that checks each call: a pass with the reason `passed` when no call
    is `bad`, else a fail naming how many of `total` calls are `said` and the first one's
    `what` (each bad call is a dict with its `index`, `name` and `what`)."""
    if not bad:
        return binary(name, True, passed, details)
    first = bad[0]
    reason = (
        f"{len(bad)} of {total} calls {said}; "
        f"call {first['index'] + 1} ({first['name']}): {first[what]}"
    )
    return binary(name, False, reason, details)


def times(count: int) -> str:
    """`count` times, in words."""
    return "1 time" if count == 1 else f"{count} times"


def calls(count: int) -> str:
    """`count` calls, in words."""
    return "1 call" if count == 1 else f"{count} calls"


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
