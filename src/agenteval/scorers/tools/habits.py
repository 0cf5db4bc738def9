"""How the agent got there: the expected calls in order (`TrajectoryOrder`), calls needed over
calls made (`StepEfficiency`), and no repeat of a call that already worked (`RedundantCalls`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from agenteval.case import EvalCase, ExpectedCall
from agenteval.jsonsafe import cuts_in, holds_cut, plain_copy
from agenteval.score import Score
from agenteval.scorers.answer import not_judged
from agenteval.scorers.redacted import holds_redacted, undecided
from agenteval.scorers.scores import binary_score, no_score, threshold_score
from agenteval.scorers.text import EXCERPT_CHARS, EXCERPT_ITEMS, excerpt
from agenteval.scorers.tools.verdicts import call_error, calls_or_skip
from agenteval.trace import ToolCall, Trial

# --- trajectory_order ----------------------------------------------------------------------------


def _same_value(expected: Any, actual: Any) -> bool:
    # Exact equality, except that numbers compare by value (3 == 3.0) and a bool is not a number.
    if type(expected) is str and type(actual) is str:  # the usual argument: plain equality
        return expected == actual
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
    if expected.name != call.name:
        return False
    # A loop, not `all()` over a generator, which costs more than the comparisons (it runs
    # for every expected call against every call until one fits).
    arguments = call.arguments
    for key, value in expected.arguments.items():
        if key not in arguments or not _same_value(value, arguments[key]):
            return False
    return True


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
    reads: ClassVar[frozenset[str]] = frozenset({"tool_calls", "tool_arguments"})
    """The trial fields it reads (`scorers.recorded`)."""

    def declines(self, case: EvalCase) -> str | None:
        """Why it does not apply to `case`, whatever the trial did (`scorers.recorded`)."""
        return "no expected_trajectory in the case" if case.expected_trajectory is None else None

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        expected = case.expected_trajectory
        if expected is None:
            return no_score(self.name, "no expected_trajectory in the case")
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
            return binary_score(self.name, True, reason, details)
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
        return binary_score(self.name, False, reason, details)


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
    reads: ClassVar[frozenset[str]] = frozenset({"tool_calls"})
    """The trial fields it reads (`scorers.recorded`)."""

    def declines(self, case: EvalCase) -> str | None:
        """Why it does not apply to `case`, whatever the trial did (`scorers.recorded`)."""
        if (case.max_tool_calls, case.expected_trajectory, case.expected_tools) == (None,) * 3:
            return "no max_tool_calls, expected_trajectory or expected_tools in the case"
        return None

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
        reason = f"{made} calls made, {needed} needed ({source})"
        return threshold_score(self.name, value, self.threshold, reason, details)


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
    return _CANONICAL_JSON.encode(data)


# `json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` makes this
# encoder anew on every call; made once: 2.1 -> 1.4 us an argument list of W5's.
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _same_uncut(first: Any, second: Any) -> bool | None:
    """Whether two calls' arguments that read the same once cut for the record are the same:
    they are, held whole in a trial the agent built (one object, or equal); None when that
    cannot be told (either was recorded cut, as `@tool` records, or is too deep to compare)."""
    if first is second:
        return True
    if holds_cut(first) or holds_cut(second):
        return None
    try:
        return bool(first == second)
    except Exception:  # RecursionError past Python's depth, or a value that cannot compare
        return None


@dataclass(frozen=True)
class RedundantCalls:
    """No tool was called again with the same arguments after an identical call had worked.

    Arguments are the same when their canonical JSON is (key order does not matter, numbers
    compare by value). Retrying a call that failed (see `call_error`) is fine. Tools named in
    `exempt_tools` (a clock, a poll) may repeat freely.

    Applies when the trial made at least one tool call. Not judged when the trial failed for an
    infrastructure reason, nor in a rescore when a repeat's stored arguments hold a masked
    secret (different secrets read the same: `scorers.redacted`), nor when they were cut for
    the record (nested past 64 levels: calls that differ past the cut read the same; held
    whole, in a trial the agent built, they are compared whole). Binary: 1.0 or 0.0;
    `details["redundant"]` lists each repeat with the earlier call that had already worked.
    """

    name: str = "redundant_calls"
    threshold: float = 1.0
    reads: ClassVar[frozenset[str]] = frozenset({"tool_calls", "tool_arguments"})
    """The trial fields it reads (`scorers.recorded`)."""
    exempt_tools: tuple[str, ...] = ()

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        skipped = calls_or_skip(self.name, trial)
        if skipped is not None:
            return skipped
        worked: dict[tuple[str, str], int] = {}
        redundant: list[dict[str, Any]] = []
        # A call is a repeat only of a call of the same tool: a tool called once can neither
        # repeat nor be repeated, so its arguments are not written out as JSON (nor its result
        # read) at all. W5's trials call each tool once or twice: 13-14 -> 4-5 us a trial.
        names: dict[str, int] = {}
        for call in trial.tool_calls:
            names[call.name] = names.get(call.name, 0) + 1
        for index, call in enumerate(trial.tool_calls):
            if call.name in self.exempt_tools or names[call.name] == 1:
                continue
            key = (call.name, canonical_arguments(call.arguments))
            if key in worked:
                # A rescore reads different secrets as the same `[REDACTED]`: not a repeat it
                # can tell.
                if holds_redacted(key[1]):
                    return undecided(self.name)
                cut = cuts_in(key[1])
                if cut:  # calls that differ only past the record's limits read the same
                    earlier = trial.tool_calls[worked[key]].arguments
                    same = _same_uncut(call.arguments, earlier)
                    if same is None:
                        return Score(
                            name=self.name,
                            reason=f"not decided: call {index + 1} ({call.name}) reads the same "
                            f"as call {worked[key] + 1} as stored, but its arguments were cut "
                            f"before they were stored ({'; '.join(cut)}): whether it repeats it "
                            "cannot be told",
                            details={"cut": cut},
                        )
                    if not same:
                        continue
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
            return binary_score(self.name, True, "no call repeated one that had worked", details)
        first = redundant[0]
        reason = (
            f"{len(redundant)} redundant {'call' if len(redundant) == 1 else 'calls'}; "
            f"call {first['index'] + 1} ({first['name']}) repeats call {first['earlier_index'] + 1}, "
            "which had already worked"
        )
        return binary_score(self.name, False, reason, details)
