"""Running an agent both ways, and what a trial records, side by side.

- Live: `agenteval.evaluate` runs the agent and captures its spans into each trial.
- Offline: the app runs the agent itself, each request under a root span of its own carrying
  `agenteval.case.id` (as the README tells users to), its provider exports to an OTLP JSON
  file, and `score_traces` (what `agenteval score FILE --cases CASES` runs) scores the file.

`facts` reads a stored trial into plain values (tool calls, their results and errors, tokens,
cost, answer, failure, scores), so the two runs compare field by field and against the
expected values.
"""

from __future__ import annotations

import asyncio
import inspect
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace

import agenteval
from agenteval import EvalCase, RunStore
from agenteval.otel import CASE_ID_ATTRIBUTE
from agenteval.otel.scoring import score_traces
from agenteval.records import TrialResult
from agenteval.scorers.tools import call_error

from .agents import (
    CASES,
    EXPECTED,
    PRICES,
    SCORERS,
    Expected,
    expected_cost,
    expected_scores,
    expected_usage,
)


@dataclass
class TraceFile:
    """Every span the app's provider exports, as OTLP JSON lines (what the
    `opentelemetry-exporter-otlp-json-file` exporter writes), saved to `path` on demand."""

    stream: io.StringIO
    path: Path

    def save(self) -> Path:
        self.path.write_text(self.stream.getvalue())
        return self.path


CHECKED_SCORES = (
    "tool_selection",
    "trajectory_order",
    "tool_call_accuracy[require_order]",
    "tool_arguments_valid",
    "tool_execution",
    "exact_match",
)
"""The scores compared: the tool rungs, the order of calls, and the answer."""


def run_live(agent: Callable[[str], Any], store: Path) -> dict[str, TrialResult]:
    """`agenteval.evaluate` over CASES, each trial's spans captured live: the stored trials,
    by case id."""
    # No tools of the run's own (`tools={}`): the schemas must come from the spans, and the
    # process's `@agenteval.tool` registry (other tests declare a `get_weather`) stays out.
    agenteval.evaluate(
        agent, CASES, scorers=SCORERS, prices=PRICES, store=store, concurrency=3, tools={}
    )
    return stored_results(store)


def record_offline(agent: Callable[[str], Any], cases: list[EvalCase] = CASES) -> None:
    """The app answers each case outside agenteval, under a root span of its own naming the
    case (its provider writes the spans to the trace file)."""
    tracer = trace.get_tracer("weather-app")
    for case in cases:
        with tracer.start_as_current_span(
            "POST /ask", attributes={CASE_ID_ATTRIBUTE: case.id, "http.request.method": "POST"}
        ):
            answer = agent(str(case.input))
            if inspect.isawaitable(answer):
                asyncio.run(_awaited(answer))


def run_offline(
    agent: Callable[[str], Any], traces: TraceFile, store: Path
) -> dict[str, TrialResult]:
    """`record_offline`, then the OTLP JSON file scored with no agent (`score_traces`, what
    `agenteval score FILE --cases CASES` runs): the stored trials, by case id."""
    record_offline(agent)
    score_traces(traces.save(), CASES, scorers=SCORERS, prices=PRICES, store=store)
    return stored_results(store)


def live_and_offline(
    agent: Callable[[str], Any], trace_file: TraceFile, tmp_path: Path, prices: Any
) -> tuple[dict[str, TrialResult], dict[str, TrialResult]]:
    """The agent's trials scored from its exported trace file (`agenteval score`'s way), then
    run live (three at a time): (live results, offline results), each by case id."""
    record_offline(agent)
    offline_store = tmp_path / "offline.db"
    score_traces(trace_file.save(), CASES, scorers=SCORERS, prices=prices, store=offline_store)
    live_store = tmp_path / "live.db"
    agenteval.evaluate(
        agent, CASES, scorers=SCORERS, prices=prices, store=live_store, concurrency=3, tools={}
    )
    return stored_results(live_store), stored_results(offline_store)


def stored_results(store: Path) -> dict[str, TrialResult]:
    """The one run in `store`, read back from it (what reports and rescoring see), by case."""
    with RunStore(store) as runs:
        [row] = runs.list_runs()
        return {result.case.id: result for result in runs.iter_results(row.run_id)}


async def _awaited(answer: Any) -> Any:
    return await answer


def facts(result: TrialResult) -> dict[str, Any]:
    """What a stored trial records, as plain values (durations and start times left out: a
    rebuilt call's timing is not specified)."""
    trial = result.trial
    return {
        "calls": [(c.name, c.arguments, c.id) for c in trial.tool_calls],
        "results": [c.result for c in trial.tool_calls],
        "errors": [c.error for c in trial.tool_calls],
        "call_errors": [call_error(c) for c in trial.tool_calls],
        "usage": trial.usage.model_dump(),
        "model_calls": len(trial.model_calls),
        "cost": sum(PRICES.cost(m.model, m.usage) or 0.0 for m in trial.model_calls),
        "unpriced": sorted(
            {m.model for m in trial.model_calls if PRICES.cost(m.model, m.usage) is None}
        ),
        "output": trial.output,
        "failure": None if trial.failure is None else trial.failure.cause.value,
        "not_recorded": sorted(trial.not_recorded),
        "scores": {
            name: (result.scores[name].value, result.scores[name].passed)
            for name in CHECKED_SCORES
            if name in result.scores
        },
    }


def both_ways(
    live: dict[str, TrialResult], offline: dict[str, TrialResult]
) -> Iterator[tuple[str, Expected, str, TrialResult]]:
    """Each case's trial live, then offline: (case id, what it must record, where, result)."""
    for case_id, expected in EXPECTED.items():
        for way, results in (("live", live), ("offline", offline)):
            yield case_id, expected, f"{case_id} ({way})", results[case_id]


def check_as_expected(
    seen: dict[str, Any], case_id: str, *, details: bool = True, tool_schemas: bool = True
) -> None:
    """A trial's `facts` are what the agent did on the case: its calls (names and arguments),
    each result or the failed call's error, the answer, no failure and no gap, its model
    calls, tokens, cost and scores (`details`, `tool_schemas`: what the family records)."""
    expected = EXPECTED[case_id]
    asked = [(name, arguments) for name, arguments, _ in seen["calls"]]
    assert asked == [(name, arguments) for name, arguments, _ in expected.calls], case_id
    for result, failed, wanted in zip(
        seen["results"], seen["call_errors"], expected.results, strict=True
    ):
        if wanted is None:  # the failed call: its exception, or the result sent to the model
            assert str(expected.error) in str(failed), case_id
        else:
            assert result == wanted and failed is None, case_id
    assert seen["output"] == expected.output, case_id
    assert (seen["failure"], seen["not_recorded"]) == (None, []), case_id
    assert seen["model_calls"] == expected.model_calls, case_id
    assert seen["usage"] == expected_usage(case_id, details=details), case_id
    assert seen["cost"] == pytest.approx(expected_cost(case_id, details=details)), case_id
    assert seen["scores"] == expected_scores(case_id, tool_schemas=tool_schemas), case_id
