"""The page's trials: one view per trial, its row in the case table (what the table's
JavaScript filters and sorts on) and its trace (input, expectations, steps and tool calls,
model calls, scores)."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import to_jsonable_python

from agenteval.case import EvalCase
from agenteval.pricing import PriceTable
from agenteval.records import TrialResult
from agenteval.report.simulation import END_REASON_WORDS, turn_tool_calls
from agenteval.report.statistics import trial_passed
from agenteval.report.terminal import format_seconds, format_usd
from agenteval.trace import ToolCall, Trial

__all__ = ["MAX_TEXT", "TrialView", "row_data", "search_text", "trace", "trial_view"]

MAX_TEXT = 20_000
"""Characters kept of any one text shown in a trace (tool results can be huge)."""


def _clip(text: str, limit: int = MAX_TEXT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters not shown)"


def _shown(value: Any) -> str:
    """A value as the page shows it: strings as they are, anything else as indented JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return _clip(value)
    plain = to_jsonable_python(value, fallback=repr)
    return _clip(json.dumps(plain, indent=2, ensure_ascii=False, default=repr))


def _one_line(value: Any) -> str:
    """A value as compact JSON, for a line of the expectations list."""
    plain = to_jsonable_python(value, fallback=repr)
    return _clip(json.dumps(plain, ensure_ascii=False, default=repr), 2000)


def _call_view(call: ToolCall) -> dict[str, Any]:
    return {
        "name": call.name,
        "arguments": _shown(call.arguments) if call.arguments else "",
        "result": _shown(call.result),
        "has_result": call.result is not None,
        "error": call.error,
        "duration": format_seconds(call.duration_s) if call.duration_s is not None else "",
        "mocked": _MOCKED.get(call.mocked or "", ""),
    }


_MOCKED = {"mock": "mocked", "replay": "replayed"}
"""How a call answered in place of its tool is labelled (`ToolCall.mocked`): the tool never
ran, so its result is the case's (or the replayed run's), not the world's."""


def _steps(trial: Trial) -> list[dict[str, Any]]:
    """The trial's steps; without recorded steps, one step per tool call, then the answer."""
    if trial.steps:
        return [
            {
                "thought": step.thought,
                "calls": [_call_view(call) for call in step.tool_calls],
                "output": step.output,
            }
            for step in trial.steps
        ]
    return [
        {"thought": None, "calls": [_call_view(call)], "output": None} for call in trial.tool_calls
    ]


def _input_text(result: TrialResult) -> str:
    return _case_input_text(result.case)


def _case_input_text(case: EvalCase) -> str:
    value = case.input
    if isinstance(value, str):
        return value
    if value:
        return "\n".join(f"{m.role}: {m.content}" for m in value)
    return "\n".join(f"user: {turn}" for turn in case.turns)


def _score_views(result: TrialResult) -> list[dict[str, Any]]:
    views = []
    for name, score in result.scores.items():
        state = (
            "error"
            if score.error is not None
            else "skip"
            if score.value is None
            else "pass"
            if score.passed
            else "fail"
        )
        samples = [
            {"score": s.get("score"), "reasoning": _clip(str(s.get("reasoning") or ""))}
            for s in score.details.get("samples", [])
            if isinstance(s, Mapping)
        ]
        details = {k: v for k, v in score.details.items() if k != "samples"}
        judge = score.judge
        views.append(
            {
                "name": name,
                "state": state,
                "value": "—" if score.value is None else f"{score.value:.2f}",
                "reason": _clip(score.error or score.reason or ""),
                "details": _shown(details) if details else "",
                "judge": (
                    f"{judge.judge} · template {judge.template} v{judge.template_version} · "
                    f"{judge.samples} sample(s), {judge.cached_samples} cached"
                    if judge is not None
                    else ""
                ),
                "samples": samples if len(samples) > 1 or judge is not None else [],
            }
        )
    return views


@dataclass
class TrialView:
    """One trial as the page shows it."""

    index: int
    """The row's number as the page shows it, from 1 in the run's order: `#trace-N` in the
    address, the row's link and its `data-i` all use it."""
    result: TrialResult
    status: str
    failing: list[str]
    mean: float | None
    cost: float | None
    flaky: bool
    extra: dict[str, Any] = field(default_factory=dict)


def _trial_cost(trial: Trial, result: TrialResult, prices: PriceTable) -> float | None:
    """What the trial cost: its agent's, judge's and user simulator's calls. None when any part
    is unknown (a call whose tokens were not recorded, a model without a price that spent
    tokens), never the known part shown as the whole; None too when nothing was called."""
    parts: list[float] = []
    for call in trial.model_calls:
        cost = prices.cost(call.model, call.usage) if call.usage_recorded else None
        if cost is None:
            return None
        parts.append(cost)
    for score in result.scores.values():
        judge = score.judge
        if judge is None:
            continue
        if not judge.usage_recorded:
            return None
        if judge.cost_usd is not None:
            parts.append(judge.cost_usd)
        elif score.usage is not None and score.usage.total_tokens:
            return None  # tokens spent on a model without a price (a cached answer spent none)
    conversation = trial.simulation
    if conversation is not None and conversation.model_calls:
        if not all(call.usage_recorded for call in conversation.model_calls):
            return None
        if conversation.cost_usd is not None:
            parts.append(conversation.cost_usd)
        elif conversation.usage.total_tokens:
            return None
    return sum(parts) if parts else None


def _conversation(result: TrialResult) -> dict[str, Any] | None:
    """The trial's simulated conversation as the trace shows it, turn by turn: each user
    message with who wrote it (written / simulated / scripted), the tool calls it led to, the
    agent's answer; then how it ended. None when the trial had none."""
    conversation = result.trial.simulation
    if conversation is None:
        return None
    calls = turn_tool_calls(result.trial)
    simulation = result.case.user_simulation
    reason = conversation.end_reason
    usage = conversation.usage
    return {
        "user": conversation.user,
        "goal": _clip(simulation.goal) if simulation is not None and simulation.goal else "",
        "persona": (
            _clip(simulation.persona) if simulation is not None and simulation.persona else ""
        ),
        "turns": [
            {
                "source": turn.source,
                "user": _clip(turn.user),
                "agent": None if turn.agent is None else _clip(turn.agent),
                "calls": [_call_view(call) for call in calls[index]] if calls else [],
            }
            for index, turn in enumerate(conversation.turns)
        ],
        "end_reason": reason.value if reason is not None else "",
        "end_words": END_REASON_WORDS.get(reason.value, "") if reason is not None else "",
        "end_detail": _clip(conversation.end_detail or ""),
        "simulator": (
            f"{len(conversation.model_calls)} model calls"
            + (
                f" ({conversation.cached_calls} from its cache)"
                if conversation.cached_calls
                else ""
            )
            + f" · {usage.input_tokens:,} tokens in, {usage.output_tokens:,} out"
            + f" · {format_usd(conversation.cost_usd)}"
        ),
    }


def trial_view(
    index: int,
    result: TrialResult,
    prices: PriceTable,
    passing: Collection[str] | None,
    flaky: set[str],
) -> TrialView:
    """The trial's status (`error`, `unscored`, `pass`, `fail`), failing scorers, mean score
    and cost."""
    trial = result.trial
    failing = [
        name
        for name, score in result.scores.items()
        if score.error is not None or (score.value is not None and score.passed is False)
    ]
    values = [s.value for s in result.scores.values() if s.value is not None and s.error is None]
    verdict = trial_passed(result, passing)
    status = (
        "error"
        if trial.failure is not None
        else "unscored"
        if verdict is None
        else "pass"
        if verdict
        else "fail"
    )
    return TrialView(
        index=index,
        result=result,
        status=status,
        failing=failing,
        mean=sum(values) / len(values) if values else None,
        cost=_trial_cost(trial, result, prices),
        flaky=result.case.id in flaky,
    )


def search_text(case: EvalCase, output: str | None) -> str:
    """What the case table's search looks in, per trial, casefolded: the case id, its input
    (the first 2,000 characters), the trial's answer (as many) and the case's tags. The
    viewer's search (`StoreReader.search`) matches the same text, so the two find the same
    trials."""
    return " ".join(
        [case.id, _case_input_text(case)[:2000], (output or "")[:2000], *case.tags]
    ).casefold()


def row_data(view: TrialView) -> dict[str, Any]:
    """What the table's JavaScript filters and sorts on, per trial."""
    result, trial = view.result, view.result.trial
    search = search_text(result.case, trial.output)
    return {
        "i": view.index,
        "case": result.case.id,
        "trial": trial.trial,
        "status": view.status,
        "failing": view.failing,
        "score": view.mean,
        "latency": trial.latency_s,
        "tokens": trial.usage.total_tokens,
        "cost": view.cost,
        "tags": result.case.tags,
        "flaky": view.flaky,
        "text": search,
    }


def trace(view: TrialView) -> dict[str, Any]:
    """What the trial's trace shows: input, expectations, answer, steps, model calls, scores."""
    result, trial = view.result, view.result.trial
    case = result.case
    expected: list[tuple[str, str]] = []
    if case.expected_output is not None:
        expected.append(("expected answer", case.expected_output))
    if case.expected_tools is not None:
        expected.append(("expected tools", ", ".join(case.expected_tools) or "none"))
    if case.expected_trajectory is not None:
        expected.append(
            ("expected order", " → ".join(call.name for call in case.expected_trajectory))
        )
    if case.max_tool_calls is not None:
        expected.append(("max tool calls", str(case.max_tool_calls)))
    if case.relevant_docs is not None:
        expected.append(("relevant documents", ", ".join(case.relevant_docs)))
    if case.must_not_contain is not None:
        expected.append(("must not contain", " · ".join(case.must_not_contain)))
    if case.expected_state is not None:
        expected.append(("expected state", _one_line(case.expected_state)))
    return {
        "input": _clip(_input_text(result)),
        "expected": expected,
        "output": _clip(trial.output) if trial.output is not None else None,
        "failure": trial.failure,
        "conversation": _conversation(result),
        "steps": _steps(trial),
        "model_calls": [
            {
                "model": call.model,
                "tokens": f"{call.usage.input_tokens:,} in, {call.usage.output_tokens:,} out",
                "duration": format_seconds(call.duration_s),
            }
            for call in trial.model_calls
        ],
        "scores": _score_views(result),
        "retries": ", ".join(f"{reason} {n}" for reason, n in trial.retries.items()),
        "attempts": trial.attempts,
        "metadata": _shown(trial.metadata) if trial.metadata else "",
        "initial_state": _shown(case.initial_state) if case.initial_state else "",
        "state": None if trial.state is None else _shown(trial.state) or "{}",
    }
