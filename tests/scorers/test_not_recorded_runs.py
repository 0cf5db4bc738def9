"""Trials whose traces leave the answer or the tool calls unknown, through whole runs: scoring
recorded trials (`score_traces`), rescoring the stored run (the gaps are stored with each
trial), and the verdict a trial gets (`trial_passed`): never failed, never passed, on a gap.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

import agenteval
from agenteval import EvalCase
from agenteval.agents.calling import no_response_failure
from agenteval.otel.scoring import score_traces
from agenteval.report.statistics import trial_passed
from agenteval.report.terminal import print_summary
from agenteval.scorers.recorded import is_not_recorded
from agenteval.trace import FailureCause, ToolCall, Trial

WHY_CALLS = "finish_reasons say tool_calls; no message content captured"
WHY_OUTPUT = "the model answered; no message content captured"
CASES = [
    EvalCase(
        id="paris",
        input="Weather in Paris?",
        expected_output="Sunny",
        expected_tools=["get_weather"],
    ),
    EvalCase(
        id="rome",
        input="Weather in Rome?",
        expected_output="Rainy",
        expected_tools=["get_weather"],
    ),
]
TOOL_READERS = ("tool_selection", "tool_execution", "redundant_calls", "retrieval_recall")


def test_a_trial_whose_trace_does_not_record_the_answer_is_no_no_response() -> None:
    assert no_response_failure(Trial(not_recorded={"output": WHY_OUTPUT})) is None
    assert no_response_failure(Trial(output="  ", not_recorded={"output": WHY_OUTPUT})) is None
    failure = no_response_failure(Trial(not_recorded={"tool_calls": WHY_CALLS}))
    assert failure is not None and failure.cause is FailureCause.NO_RESPONSE


def _trials_file(tmp_path: Path) -> Path:
    lines = [
        Trial(case_id="paris", output="Sunny", not_recorded={"tool_calls": WHY_CALLS}),
        Trial(
            case_id="rome",
            tool_calls=[ToolCall(name="get_weather", arguments={"city": "Rome"}, result="rain")],
            not_recorded={"output": WHY_OUTPUT},
        ),
    ]
    path = tmp_path / "trials.jsonl"
    path.write_text(
        "\n".join(json.dumps(t.model_dump(mode="json", exclude_defaults=True)) for t in lines)
        + "\n",
        encoding="utf-8",
    )
    return path


def _check(run: agenteval.Run) -> None:
    by_case = {r.case.id: r for r in run.results}
    paris, rome = by_case["paris"], by_case["rome"]
    assert paris.trial.failure is None and rome.trial.failure is None
    # Paris: the answer is there and right; its calls are unknown.
    assert paris.scores["exact_match"].passed is True
    assert is_not_recorded(paris.scores["tool_selection"])
    assert paris.scores["tool_selection"].reason == (
        f"not scored: the trace does not record the tool calls — {WHY_CALLS}"
    )
    # Rome: the call is there; its answer is unknown.
    assert rome.scores["tool_selection"].passed is True
    assert is_not_recorded(rome.scores["exact_match"])
    assert rome.scores["exact_match"].reason == (
        f"not scored: the trace does not record the answer — {WHY_OUTPUT}"
    )
    # Neither gap fails or passes a trial by itself.
    assert trial_passed(paris, ["tool_selection"]) is None
    assert trial_passed(rome, ["exact_match"]) is None
    # Every scorer counts by default: Paris's answer passed, but the tools it was to call are
    # unknown, so the trial has no verdict (it passed before: a vacuous pass of tool_selection).
    assert trial_passed(paris) is None
    assert trial_passed(paris, ["exact_match"]) is True  # judged on what was recorded


def test_scoring_and_rescoring_recorded_trials_honour_what_their_traces_leave_out(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    run = score_traces(_trials_file(tmp_path), CASES, store=store)
    _check(run)
    stats = run.summary.scorers["tool_selection"]
    assert (stats.scored, stats.passed, stats.skipped) == (1, 1, 1)
    again = agenteval.rescore(run.run_id, store=store)
    _check(again)


def test_the_summary_counts_the_trials_whose_traces_leave_a_field_out(tmp_path: Path) -> None:
    run = score_traces(_trials_file(tmp_path), CASES, store=tmp_path / "runs.db")
    summary = run.summary
    # "Trials passing" counts neither trial: each one's case expects what its trace does not
    # record (both passed before, on the one scorer that could judge each).
    assert (summary.passed.count, summary.passed.total) == (0, 0)
    assert {field: (r.count, r.total) for field, r in summary.not_recorded.items()} == {
        "tool_calls": (1, 2),
        "output": (1, 2),
    }
    assert summary.not_recorded_why == {"tool_calls": WHY_CALLS, "output": WHY_OUTPUT}
    out = io.StringIO()
    print_summary(summary, run.info, Console(file=out, width=400))
    text = out.getvalue()
    assert (
        f"not scored: the traces of 1 of 2 trials do not record the tool calls ({WHY_CALLS}); "
        "the scorers that read it gave those trials no score (counted as skipped; such a trial "
        "is no pass: it is left out of Trials passing unless a scorer failed it)"
    ) in text
    assert "do not record the answer" in text
    assert "Trials passing:" not in text  # neither trial has a verdict
