"""What the tool scorers share: the verdict of a rung that checks each call, a call's failure as a result reports it
(`call_error`), and the counts in their reasons."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval.score import Score
from agenteval.scorers.answer import not_judged
from agenteval.scorers.scores import binary_score, no_score
from agenteval.scorers.text import json_value
from agenteval.trace import ToolCall, Trial


def calls_or_skip(name: str, trial: Trial) -> Score | None:
    """The score to give instead of checking the trial's calls: not judged (`not_judged`), or
    no score when it made none; None when there are calls to check."""
    skipped = not_judged(name, trial)
    if skipped is None and not trial.tool_calls:
        return no_score(name, "no tool calls to check")
    return skipped


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
        return binary_score(name, True, passed, details)
    first = bad[0]
    reason = (
        f"{len(bad)} of {total} calls {said}; "
        f"call {first['index'] + 1} ({first['name']}): {first[what]}"
    )
    return binary_score(name, False, reason, details)


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
