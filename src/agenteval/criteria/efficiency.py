"""ADK's efficiency metrics, reported and never passed or failed: `tool_call_count_v1`,
`inference_call_count_v1`, `token_usage_v1`, `invocation_duration_v1`.

google-adk 2.13 measures each per invocation (one user turn) and reports the case's value as the
mean over its turns: tool calls per turn, model calls per turn, tokens per turn, seconds per
turn. The mean of per-turn counts is the trial's total over its turns, which is how agenteval
computes it from the trial (its tool calls, model calls, usage and latency), so a turn the trace
cannot split off changes nothing in the value; the per-turn values are given in `details` where
the trial records them (`per_turn`).

Each result is a reported score (`agenteval.scorers.reported`): no score value, no pass, no
fail, the measurement under `details["agenteval.reported"]`. A measurement that cannot be made
is None with the reason, never a 0: a trial whose trace does not record its tool calls has no
tool call count, an agent that reports no model call has no model call count nor token count,
a trial with no measured latency has no duration. ADK refuses a threshold on these metrics, and
so does agenteval (`validate_config`).

Where agenteval's value may differ from ADK's: tokens are agenteval's `Usage` (input with the
cached tokens inside it, output with the reasoning tokens inside it; ADK adds Gemini's tool-use
prompt tokens to the input, which agenteval's providers count in the input already); a count no
model call reported is 0 here where ADK shows n/a. The duration is the trial's latency as the
engine measured it (the whole attempt, every turn and the agent's own set-up), over the turns;
ADK times each turn inside its runner. The model and tool parts of the duration are the time
with a model call (a tool call) in flight, from the calls' own timings when the trial records
them, and the framework's part what is left.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, ClassVar

from agenteval.case import EvalCase
from agenteval.criteria.base import CriterionResult, SyncCriterion
from agenteval.scorers.reported import REPORTED
from agenteval.trace import Trial

__all__ = [
    "EFFICIENCY_CRITERIA",
    "EfficiencyCriterion",
    "InferenceCallCountCriterion",
    "InvocationDurationCriterion",
    "TokenUsageCriterion",
    "ToolCallCountCriterion",
    "played_turns",
]

Measured = tuple[float | None, str, dict[str, Any]]
"""What a measurement gives: the value per turn, a line on it, the breakdown for `details`."""

THRESHOLD_REFUSED = (
    "reports a value and never passes or fails, so it takes no threshold (as in ADK): "
    "remove the threshold"
)


def played_turns(case: EvalCase, trial: Trial) -> int:
    """How many invocations (user turns) the trial played: a conversation's turns as the trial
    records them (each turn's answer, else its steps), else the case's; every user message of a
    simulated conversation; one for any other case."""
    if trial.simulation is not None and trial.simulation.turns:
        return len(trial.simulation.turns)
    if not case.conversation:
        return 1
    outputs = trial.metadata.get("turn_outputs")
    if isinstance(outputs, list) and outputs:
        return len(outputs)
    if trial.steps:
        return len(trial.steps)
    return len(case.conversation)


def _turns(count: int) -> str:
    return f"{count} turn{'s' * (count != 1)}"


def _per_turn(case: EvalCase, trial: Trial, turns: int) -> list[int] | None:
    """Each turn's tool calls, when the trial's steps are its turns."""
    if (case.conversation or trial.simulation is not None) and len(trial.steps) == turns:
        return [len(step.tool_calls) for step in trial.steps]
    if not case.conversation and turns == 1:
        return [len(trial.tool_calls)]
    return None


def _busy_seconds(spans: Iterable[tuple[datetime, float]]) -> float:
    """The seconds covered by at least one of the spans (start, duration): overlapping calls
    (parallel tool calls, say) count once."""
    total = 0.0
    end: datetime | None = None
    for start, length in sorted(spans):
        stop = start + timedelta(seconds=max(length, 0.0))
        if end is None or start >= end:
            total += (stop - start).total_seconds()
            end = stop
        elif stop > end:
            total += (stop - end).total_seconds()
            end = stop
    return total


def _overlap_seconds(
    first: list[tuple[datetime, float]], second: list[tuple[datetime, float]]
) -> float:
    """The seconds covered by both sets of spans (a tool awaiting a model: counted as model)."""
    both = _busy_seconds(first) + _busy_seconds(second)
    return max(both - _busy_seconds([*first, *second]), 0.0)


class EfficiencyCriterion(SyncCriterion):
    """A reported efficiency measurement of a trial: the per-turn mean of `measure`'s total
    (see the module's docs). Subclasses set `name`, `unit` and implement `measure`."""

    unit: ClassVar[str] = ""
    """What the value counts, per turn."""
    reads: ClassVar[frozenset[str]] = frozenset()
    """Nothing the not-recorded rule would turn into an undecided case: a measurement the trace
    cannot give is None with its reason, and never holds a case up."""

    def validate_config(self) -> list[str]:
        """A threshold is refused: the metric never passes or fails."""
        if "threshold" in self.config.model_fields_set:
            return [f"{self.name} {THRESHOLD_REFUSED}"]
        return []

    def measure(self, actual: Trial, expected: EvalCase, turns: int) -> Measured:
        """The value per turn (None when it cannot be measured), a line saying what it is (or
        why there is none), and the breakdown to keep in `details`."""
        raise NotImplementedError

    def evaluate_sync(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """The reported measurement: no score, no pass or fail."""
        turns = played_turns(expected, actual)
        value, reason, extra = self.measure(actual, expected, turns)
        details = {
            REPORTED: {"value": value, "unit": self.unit},
            "turns": turns,
            **extra,
            "reason": reason,
        }
        return CriterionResult(criterion=self.name, details=details, reason=reason)


class ToolCallCountCriterion(EfficiencyCriterion):
    """`tool_call_count_v1`: tool calls per turn (reported)."""

    name = "tool_call_count_v1"
    description = "Tool calls per turn (reported, never pass/fail)"
    unit = "tool calls per turn"

    def measure(self, actual: Trial, expected: EvalCase, turns: int) -> Measured:
        """The trial's tool calls over its turns."""
        gap = actual.not_recorded.get("tool_calls")
        if gap is not None:
            return None, f"not measured: the trace does not record the tool calls ({gap})", {}
        per_turn = _per_turn(expected, actual, turns)
        count = len(actual.tool_calls)
        return (
            count / turns,
            f"{count} tool call{'s' * (count != 1)} in {_turns(turns)}",
            {"per_turn": per_turn} if per_turn is not None else {},
        )


class InferenceCallCountCriterion(EfficiencyCriterion):
    """`inference_call_count_v1`: model calls per turn (reported)."""

    name = "inference_call_count_v1"
    description = "Model calls per turn (reported, never pass/fail)"
    unit = "model calls per turn"

    def measure(self, actual: Trial, expected: EvalCase, turns: int) -> Measured:
        """The trial's model calls over its turns."""
        if not actual.model_calls:
            return (
                None,
                "not measured: the trial records no model call (the agent does not report its "
                "model calls: use a framework agent, record_model_call, or traces)",
                {},
            )
        count = len(actual.model_calls)
        return count / turns, f"{count} model call{'s' * (count != 1)} in {_turns(turns)}", {}


class TokenUsageCriterion(EfficiencyCriterion):
    """`token_usage_v1`: tokens per turn, input plus output (reported), with the breakdown."""

    name = "token_usage_v1"
    description = "Tokens per turn (reported, never pass/fail)"
    unit = "tokens per turn"

    def measure(self, actual: Trial, expected: EvalCase, turns: int) -> Measured:
        """The trial's usage over its turns: total, input (cached inside), output (reasoning
        inside)."""
        usage = actual.usage
        gap = actual.not_recorded.get("usage")
        if gap is not None:
            return None, f"not measured: the trace does not record the token usage ({gap})", {}
        if not actual.model_calls and not usage.total_tokens:
            return (
                None,
                "not measured: the trial records no token usage (the agent reports no model call "
                "with its usage)",
                {},
            )
        breakdown = {
            "total_tokens": usage.total_tokens / turns,
            "input_tokens": usage.input_tokens / turns,
            "cached_tokens": usage.cached_tokens / turns,
            "output_tokens": usage.output_tokens / turns,
            "reasoning_tokens": usage.reasoning_tokens / turns,
        }
        return (
            usage.total_tokens / turns,
            f"{usage.total_tokens} tokens ({usage.input_tokens} in, {usage.output_tokens} out) "
            f"in {_turns(turns)}",
            {"token_usage": breakdown},
        )


class InvocationDurationCriterion(EfficiencyCriterion):
    """`invocation_duration_v1`: seconds per turn (reported), with the model, tool and framework
    parts when the trial's calls carry their timings."""

    name = "invocation_duration_v1"
    description = "Seconds per turn (reported, never pass/fail)"
    unit = "seconds per turn"

    def measure(self, actual: Trial, expected: EvalCase, turns: int) -> Measured:
        """The trial's latency over its turns, and where it went."""
        if actual.latency_s is None:
            return None, "not measured: the trial has no measured latency", {}
        total = actual.latency_s
        models = [
            (c.started_at, c.duration_s)
            for c in actual.model_calls
            if c.started_at is not None and c.duration_s is not None
        ]
        tools = [
            (c.started_at, c.duration_s)
            for c in actual.tool_calls
            if c.started_at is not None and c.duration_s is not None
        ]
        timed = len(models) == len(actual.model_calls) and len(tools) == len(actual.tool_calls)
        parts: dict[str, float | None] = {"total_seconds": round(total / turns, 3)}
        if timed:
            model_s = _busy_seconds(models)
            tool_s = max(_busy_seconds(tools) - _overlap_seconds(models, tools), 0.0)
            parts.update(
                model_seconds=round(model_s / turns, 3),
                tool_seconds=round(tool_s / turns, 3),
                framework_seconds=round(max(total - model_s - tool_s, 0.0) / turns, 3),
            )
        else:
            parts.update(model_seconds=None, tool_seconds=None, framework_seconds=None)
        return total / turns, f"{total:.3f} s in {_turns(turns)}", {"duration": parts}


EFFICIENCY_CRITERIA: tuple[type[EfficiencyCriterion], ...] = (
    ToolCallCountCriterion,
    InferenceCallCountCriterion,
    TokenUsageCriterion,
    InvocationDurationCriterion,
)
"""The four, in ADK's order."""
