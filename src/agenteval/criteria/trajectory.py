"""Criteria over what the agent did, with no LLM call: `TrajectoryMatchCriterion` (tool calls),
`NodeOrderMatchCriterion` (graph nodes) and `ToolNameMatchCriterion` (tool names as a multiset).

Expected values come from the case's turns, concatenated (see `agenteval.criteria.expected`).
Partial scores are the best achievable: the alignments of `agenteval.criteria.matching`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from agenteval.case import EvalCase
from agenteval.criteria.base import CriterionResult, SyncCriterion
from agenteval.criteria.config import MatchType
from agenteval.criteria.expected import (
    expected_node_order,
    expected_tool_names,
    expected_trajectory_calls,
)
from agenteval.criteria.matching import (
    Alignment,
    align_any_order,
    align_in_order,
    align_positions,
)
from agenteval.redaction import mask_secret_keys
from agenteval.scorers.tools import canonical_arguments
from agenteval.trace import ToolCall, Trial

__all__ = [
    "NodeOrderMatchCriterion",
    "ToolNameMatchCriterion",
    "TrajectoryMatchCriterion",
    "align",
    "alignment_score",
    "call_fits",
]

E = TypeVar("E")
A = TypeVar("A")

_ALIGNERS = {
    MatchType.EXACT: align_positions,
    MatchType.IN_ORDER: align_in_order,
    MatchType.ANY_ORDER: align_any_order,
}

_MODE_WORDS = {
    MatchType.EXACT: "in the same positions",
    MatchType.IN_ORDER: "in order",
    MatchType.ANY_ORDER: "in any order",
}


def align(
    expected: Sequence[E],
    actual: Sequence[A],
    fits: Callable[[E, A], bool],
    match_type: MatchType,
) -> Alignment:
    """The best alignment of `expected` with `actual` under `match_type`."""
    return _ALIGNERS[match_type](expected, actual, fits)


def alignment_score(alignment: Alignment, match_type: MatchType) -> float:
    """The score of an alignment: matched over expected; for `EXACT`, matched over the longer
    of the two lists, so a missing, extra or moved item each costs. With nothing expected:
    1.0, except that `EXACT` then needs nothing done (0.0 otherwise)."""
    if match_type is MatchType.EXACT:
        longest = max(alignment.expected, alignment.actual)
        return alignment.matched / longest if longest else 1.0
    return alignment.recall


def call_fits(check_args: bool) -> Callable[[ToolCall, ToolCall], bool]:
    """The rule for an actual call standing for an expected one: the same tool name; with
    `check_args`, also the same arguments (compared as canonical JSON, so key order does not
    matter and 3 equals 3.0), except that an expected call with no arguments accepts any."""

    def fits(expected: ToolCall, actual: ToolCall) -> bool:
        if expected.name != actual.name:
            return False
        if not check_args or not expected.arguments:
            return True
        return canonical_arguments(expected.arguments) == canonical_arguments(actual.arguments)

    return fits


def _call_text(call: ToolCall, with_args: bool) -> str:
    if not with_args or not call.arguments:
        return call.name
    # A reason is text once written: plain words under `password` are masked while they are
    # data (the store's text redaction could not tell them), and deep arguments are cut.
    shown = mask_secret_keys(call.arguments)
    if not isinstance(shown, dict):  # not reached: arguments are a mapping
        return f"{call.name}({shown!r})"
    arguments = ", ".join(f"{key}={value!r}" for key, value in shown.items())
    return f"{call.name}({arguments})"


def _call_record(call: ToolCall) -> dict[str, Any]:
    return {"name": call.name, "args": call.arguments}


def _reason(
    alignment: Alignment,
    match_type: MatchType,
    what: str,
    missing: list[str],
    extra: list[str],
) -> str:
    if not alignment.expected:
        if match_type is MatchType.EXACT and alignment.actual:
            return f"no {what}s expected, but {alignment.actual} made (EXACT allows none)"
        return f"no {what}s expected"
    text = (
        f"matched {alignment.matched} of {alignment.expected} expected {what}s "
        f"{_MODE_WORDS[match_type]}"
    )
    if missing:
        text += "; unmatched: " + ", ".join(missing)
    if match_type is MatchType.EXACT and extra:
        text += "; extra: " + ", ".join(extra)
    return text


def _verdict(
    alignment: Alignment,
    match_type: MatchType,
    what: str,
    missing: list[str],
    extra: list[str],
    shown: dict[str, Any],
) -> tuple[float, dict[str, Any], str]:
    """The score, details and reason of an alignment of `what`s; `shown` are the details
    particular to the criterion (what was expected and done)."""
    details: dict[str, Any] = {
        "match_type": match_type.value,
        **shown,
        "matched": alignment.matched,
        "pairs": [list(pair) for pair in alignment.pairs],
        "missing": missing,
        "extra": extra,
    }
    reason = _reason(alignment, match_type, what, missing, extra)
    return alignment_score(alignment, match_type), details, reason


def written_turns_calls(actual: Trial, expected: EvalCase, field: str) -> list[ToolCall]:
    """The calls to compare with what the case's turns expect (`field` stated on a turn): a
    simulated user that went on after the written turns led to calls they say nothing of, so
    only the written turns' own are compared (a step per turn, as played); else every call."""
    turns = expected.conversation or []
    simulation = actual.simulation
    if (
        simulation is not None
        and any(field in turn.model_fields_set for turn in turns)
        and len(actual.steps) == len(simulation.turns) > len(turns)
    ):
        return [call for step in actual.steps[: len(turns)] for call in step.tool_calls]
    return list(actual.tool_calls)


class TrajectoryMatchCriterion(SyncCriterion):
    """The tools the agent called against every turn's `expected_tool_trajectory`.

    `config.match_type`: `EXACT` (the same calls in the same positions; a missing, extra or
    moved call lowers the score: matched over the longer list), `IN_ORDER` (the expected calls
    in order, others in between allowed) or `ANY_ORDER` (anywhere). `config.check_args`: the
    arguments must be equal too; an expected call with empty `args` accepts any. The score is
    the fraction of expected calls matched, by the best alignment there is. With no expected
    calls, `EXACT` scores 1.0 only when nothing was called; the others score 1.0.
    """

    name = "tool_trajectory_avg_score"
    description = "The right tools were called, in the right order"
    reads: ClassVar[frozenset[str]] = frozenset({"tool_calls", "tool_arguments"})
    """The trial fields it reads (`agenteval.scorers.recorded`)."""

    def evaluate_sync(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Align the calls made with the calls expected."""
        match_type, check_args = self.config.match_type, self.config.check_args
        want = expected_trajectory_calls(expected) or []
        got = written_turns_calls(actual, expected, "expected_tool_trajectory")
        alignment = align(want, got, call_fits(check_args), match_type)
        missing = [_call_text(want[i], check_args) for i in alignment.missing]
        extra = [_call_text(got[j], check_args) for j in alignment.extra]
        shown = {
            "check_args": check_args,
            "expected": [_call_record(call) for call in want],
            "actual": [_call_record(call) for call in got],
        }
        score, details, reason = _verdict(alignment, match_type, "tool call", missing, extra, shown)
        return self._result(score, details, reason=reason)


class NodeOrderMatchCriterion(SyncCriterion):
    """The graph nodes the agent visited (`node_visits`) against every turn's
    `expected_node_order`, matched by `config.match_type` as `TrajectoryMatchCriterion` matches
    calls (node names compared exactly)."""

    name = "node_order_score"
    description = "The graph routed through the right nodes"

    def evaluate_sync(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Align the nodes visited with the nodes expected."""
        match_type = self.config.match_type
        want = expected_node_order(expected) or []
        got = actual.node_visits
        alignment = align(want, got, str.__eq__, match_type)
        missing = [want[i] for i in alignment.missing]
        extra = [got[j] for j in alignment.extra]
        shown = {"expected": want, "actual": got}
        score, details, reason = _verdict(alignment, match_type, "node", missing, extra, shown)
        return self._result(score, details, reason=reason)


class ToolNameMatchCriterion(SyncCriterion):
    """Tool names only, as multisets: expected names matched by calls of that name (each call
    counts once), over the expected names. Order and arguments are ignored. When nothing is
    expected: 1.0 if the agent called no tool, 0.5 if it called some."""

    name = "tool_name_match_score"
    description = "The right tools were called, ignoring arguments and order"
    reads: ClassVar[frozenset[str]] = frozenset({"tool_calls"})
    """The trial fields it reads (`agenteval.scorers.recorded`)."""

    def evaluate_sync(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Compare the multisets of names."""
        want = Counter(expected_tool_names(expected) or [])
        calls = written_turns_calls(actual, expected, "expected_tool_trajectory")
        got = Counter(call.name for call in calls)
        if not want:
            score = 1.0 if not got else 0.5
            return self._result(
                score,
                {"expected": {}, "called": dict(got)},
                reason="no tools expected, "
                + ("none called" if not got else f"{sum(got.values())} calls made"),
            )
        matched = want & got
        missing = want - got
        details: dict[str, Any] = {
            "expected": dict(want),
            "called": dict(got),
            "matched": sum(matched.values()),
            "missing": dict(missing),
        }
        total = sum(want.values())
        reason = f"matched {details['matched']} of {total} expected tool names"
        if missing:
            reason += "; missing: " + ", ".join(
                name if count == 1 else f"{name} ×{count}" for name, count in missing.items()
            )
        return self._result(details["matched"] / total, details, reason=reason)
