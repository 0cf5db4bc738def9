"""`AgentEvaluator`'s report never passes a trial on which a criterion could not score because
its trace does not record what the criterion reads (`scorers.recorded`): it is undecided, like
a judge tie, and the case does not pass. It passed before when another criterion passed."""

from __future__ import annotations

from agenteval import EvalCase, Score, Trial
from agenteval.evalset.report import CaseStatus, EvalCaseResult, EvalSummary
from agenteval.run import TrialResult
from agenteval.scorers.recorded import NOT_RECORDED

GAP = Score(
    name="tool_trajectory_avg_score",
    reason="not scored: the trace does not record the tool calls — set SPAN_ONLY",
    details={NOT_RECORDED: ["tool_calls"]},
)


def _result(*scores: Score) -> TrialResult:
    return TrialResult(
        case=EvalCase(id="weather", input="Weather in Paris?"),
        trial=Trial(case_id="weather", output="Sunny"),
        scores={score.name: score for score in scores},
    )


def test_a_criterion_the_trace_could_not_feed_leaves_the_trial_undecided_not_passed() -> None:
    answered = Score(name="response_match_score", value=1.0, passed=True)
    result = EvalCaseResult.of(_result(answered, GAP))
    assert result.status is CaseStatus.UNDECIDED
    assert result.passed is None
    summary = EvalSummary.of([result])
    assert (summary.passed_cases, summary.undecided_cases, summary.pass_rate) == (0, 1, None)
    assert summary.criterion_stats["tool_trajectory_avg_score"].skipped == 1
    # A criterion that failed still fails the trial.
    wrong = Score(name="response_match_score", value=0.0, passed=False)
    assert EvalCaseResult.of(_result(wrong, GAP)).status is CaseStatus.FAILED
    # Left out of the criteria that count, the gap does not hold the verdict.
    only = EvalCaseResult.of(_result(answered, GAP), ["response_match_score"])
    assert only.status is CaseStatus.PASSED
