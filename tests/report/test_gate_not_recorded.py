"""The gate never takes a scorer its candidate's traces could not feed (`Trial.not_recorded`:
an instrumentation without content capture) for a pass: a candidate whose traces leave out the
tool calls its cases expect does not pass a gate that asks for tool use, and the trial rule
has no passing trial to count. Real runs in a real SQLite store, read back as `agenteval gate`
reads them."""

from __future__ import annotations

from pathlib import Path

import agenteval
from agenteval import EvalCase
from agenteval.report.compare import compare_runs
from agenteval.report.gate import GatePolicy, evaluate_gate
from agenteval.report.gate.policy import Thresholds
from agenteval.store import RunStore
from agenteval.trace import ToolCall, Trial

CASES = [
    EvalCase(id=f"c{i}", input=f"q{i}", expected_output="sunny", expected_tools=["weather"])
    for i in range(6)
]
WHY = "the model asked for tools and no message content was captured; set SPAN_ONLY"


def recorded(question: str) -> Trial:
    return Trial(output="sunny", tool_calls=[ToolCall(name="weather", result="sunny")])


def not_recorded(question: str) -> Trial:
    return Trial(output="sunny", not_recorded={"tool_calls": WHY})


def test_a_candidate_whose_traces_leave_the_tool_calls_out_does_not_pass_the_gate(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    base = agenteval.evaluate(recorded, CASES, store=store, retries=0).run_id
    candidate = agenteval.evaluate(not_recorded, CASES, store=store, retries=0).run_id
    with RunStore(store, create=False) as opened:
        comparison = compare_runs(opened, base, candidate)
    policy = GatePolicy(
        trial=Thresholds(min_pass_rate=1.0),
        scorers={"tool_selection": Thresholds(min_pass_rate=1.0)},
    )
    verdict = evaluate_gate(comparison, policy)
    assert not verdict.passed
    broken = {outcome.rule: outcome.detail for outcome in verdict.broken}
    assert any("tool_selection" in rule for rule in broken), broken
    assert broken["no significant regression: tool_selection"].startswith(
        "cannot check: the base judged 6 shared case(s) with it, the candidate none (the "
        f"candidate's traces do not record tool_calls in 6 of 6 trials ({WHY}); or did it error"
    )
    assert any("trial passes" in rule for rule in broken), broken
    # No candidate trial counts as passing: each one's tool calls are unknown.
    assert comparison.candidate.summary.passed.count == 0
