"""What `AgentEvaluator.evaluate` returns: `EvalReport`, with an `EvalCaseResult` per (case, trial)
and an `EvalSummary` whose `criterion_stats` give, per criterion, its mean, pass rate and counts.

Everything is computed from the engine's `Run` (its stored results), so the report and
`agenteval show RUN_ID` describe the same run.

**A (case, trial) result** is, from its criteria's scores:

- `failed` when a criterion failed (a score below its threshold, or an error such as
  `All LLM samples failed`);
- else `error` when the trial failed for an infrastructure reason (timeout, rate limit,
  provider or connection error): it was not judged;
- else `undecided` when a criterion's judge tied (see `agenteval.evalset.ties`), or a criterion
  could not score because the trial's trace does not record what it reads (`scorers.recorded`:
  an instrumentation without content capture): nothing checked that, so it is no pass;
- else `passed` when at least one criterion passed;
- else `not_evaluated` (no criterion gave a score: nothing to compare against, no judge).

A reported metric (ADK's efficiency metrics, `tool_call_count_v1` and its siblings: see
`agenteval.scorers.reported`) never changes a status: its measurement is shown
(`CriterionStats.reported`, `mean` in its `unit`), never counted as a pass or a fail, as in ADK.

A (case, trial) the run asked for but has no stored result for (the store lost it, say) is an
`error` too, with the error saying so; and a report of such an incomplete run never passes
(`complete` is False, `summary.missing_trials` counts them).

**A case** takes the first of those statuses among its trials (failed, error, undecided,
not_evaluated, passed): it passes when every trial passed. `pass_rate` is passed cases over
decided ones (passed + failed): a tie, an infrastructure error or a case with nothing to judge
is counted as neither.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from statistics import fmean
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agenteval.evalset.criterion_settings import EFFICIENCY_METRICS
from agenteval.records import MissingTrials, TrialResult
from agenteval.run import Run
from agenteval.score import Score
from agenteval.scorers.recorded import is_not_recorded
from agenteval.scorers.reported import is_reported, reported_unit, reported_value
from agenteval.trace import ToolCall

if TYPE_CHECKING:
    from agenteval.evalset.config import EvalConfig

__all__ = ["CaseStatus", "CriterionStats", "EvalCaseResult", "EvalReport", "EvalSummary"]


class CaseStatus(StrEnum):
    """Where a case (or one trial of it) stands after its criteria."""

    PASSED = "passed"
    FAILED = "failed"
    UNDECIDED = "undecided"
    """A judge tie, or a criterion the trace could not feed (`scorers.recorded`), and no
    criterion failed."""
    ERROR = "error"
    """An infrastructure failure (timeout, rate limit, provider, connection): not judged."""
    NOT_EVALUATED = "not_evaluated"
    """No criterion gave a score."""


_WORST_FIRST = (
    CaseStatus.FAILED,
    CaseStatus.ERROR,
    CaseStatus.UNDECIDED,
    CaseStatus.NOT_EVALUATED,
    CaseStatus.PASSED,
)


def is_tie(score: Score) -> bool:
    """Whether the score is an undecided judge tie."""
    return score.value is None and score.error is None and score.details.get("tie") is True


class CriterionStats(BaseModel):
    """One criterion over the evaluation's trials."""

    model_config = ConfigDict(extra="forbid")

    threshold: float | None = None
    """The pass mark the criterion was run with."""
    mean: float | None = None
    """Mean score over the trials it scored."""
    min: float | None = None
    max: float | None = None
    pass_rate: float | None = None
    """Passed over decided trials (passed + failed); None when none was decided."""
    scored: int = 0
    """Trials with a score (errors included, at their 0.0)."""
    passed: int = 0
    failed: int = 0
    """Scores below the threshold, and errors (with or without a score)."""
    errors: int = 0
    """Trials where the criterion itself failed (every judge sample failed, say)."""
    ties: int = 0
    """Undecided judge ties: neither passed nor failed."""
    skipped: int = 0
    """Trials it gave no score (nothing to compare against, no judge, an infrastructure
    failure, a measurement that could not be made), ties apart."""
    reported: int = 0
    """Trials a reported metric measured (an efficiency metric: never a pass or a fail); its
    `mean`, `min` and `max` are then the measured values, in `unit`, and it has no threshold
    and no pass rate."""
    unit: str | None = None
    """What a reported metric's values count (`tool calls per turn`)."""

    @property
    def avg_score(self) -> float | None:
        """The mean score, under agentflow's name."""
        return self.mean


class EvalCaseResult(BaseModel):
    """One trial of one case: its status and every criterion's score."""

    model_config = ConfigDict(extra="forbid")

    eval_id: str
    trial: int = 0
    status: CaseStatus
    score: float | None = None
    """Mean of the criteria's scores (None when none scored)."""
    criterion_results: dict[str, Score] = Field(default_factory=dict)
    """Each criterion's score, by criterion name."""
    actual_response: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    error: str | None = None
    """Why the trial failed, when it did (`cause: message`)."""

    @property
    def passed(self) -> bool | None:
        """True when passed, False when failed, None otherwise (undecided, error, not
        evaluated)."""
        if self.status is CaseStatus.PASSED:
            return True
        if self.status is CaseStatus.FAILED:
            return False
        return None

    @property
    def failed_criteria(self) -> list[str]:
        """The criteria that failed this trial."""
        return [
            name
            for name, score in self.criterion_results.items()
            if score.error is not None or score.passed is False
        ]

    @classmethod
    def lost(cls, case_id: str, trial: int, run_id: str) -> EvalCaseResult:
        """A (case, trial) of the run with no stored result: not judged, so never a pass."""
        return cls(
            eval_id=case_id,
            trial=trial,
            status=CaseStatus.ERROR,
            error=f"missing: the trial has no stored result; run {run_id} is incomplete",
        )

    @classmethod
    def of(cls, result: TrialResult, criteria: Iterable[str] | None = None) -> EvalCaseResult:
        """The result of one stored (case, trial), over `criteria` (all its scores if None)."""
        names = list(criteria) if criteria is not None else list(result.scores)
        scores = {name: result.scores[name] for name in names if name in result.scores}
        trial = result.trial
        failure = trial.failure
        values = [s.value for s in scores.values() if s.value is not None]
        if any(s.error is not None or s.passed is False for s in scores.values()):
            status = CaseStatus.FAILED
        elif not trial.responded:
            status = CaseStatus.ERROR
        elif any(is_tie(s) or is_not_recorded(s) for s in scores.values()):
            status = CaseStatus.UNDECIDED
        elif any(s.passed for s in scores.values()):
            status = CaseStatus.PASSED
        else:
            status = CaseStatus.NOT_EVALUATED
        return cls(
            eval_id=result.case.id,
            trial=trial.trial,
            status=status,
            score=fmean(values) if values else None,
            criterion_results=scores,
            actual_response=trial.actual_response,
            tool_calls=list(trial.tool_calls),
            error=f"{failure.cause.value}: {failure.message}".rstrip(": ")
            if failure is not None
            else None,
        )


class EvalSummary(BaseModel):
    """The evaluation in numbers: cases by status, pass rate, and per criterion its stats."""

    model_config = ConfigDict(extra="forbid")

    total_cases: int = 0
    passed_cases: int = 0
    failed_cases: int = 0
    undecided_cases: int = 0
    """Cases held up only by a judge tie."""
    error_cases: int = 0
    """Cases with a trial stopped by an infrastructure failure (and none failed)."""
    not_evaluated_cases: int = 0
    pass_rate: float | None = None
    """Passed cases over decided ones (passed + failed); None when none was decided."""
    avg_score: float | None = None
    """Mean over the trials of their mean criterion score."""
    trials: int = 0
    """(case, trial) results: cases × trials per case."""
    missing_trials: int = 0
    """(case, trial) pairs with no stored result (counted among the `error` results): the run
    is incomplete and the report does not pass."""
    criterion_stats: dict[str, CriterionStats] = Field(default_factory=dict)
    """Per criterion (by name): threshold, mean, min, max, pass rate, and counts of scored,
    passed, failed, errors, ties and skipped trials."""

    @classmethod
    def of(
        cls,
        results: Iterable[EvalCaseResult],
        thresholds: Mapping[str, float | None] | None = None,
    ) -> EvalSummary:
        """The summary of these results; `thresholds` gives each criterion's pass mark (and the
        order `criterion_stats` lists them in)."""
        # ADK's efficiency metrics are measured, never held to a mark, whatever the config says.
        marks = {
            name: None if name in EFFICIENCY_METRICS else mark
            for name, mark in (thresholds or {}).items()
        }
        by_case: dict[str, list[CaseStatus]] = defaultdict(list)
        values: dict[str, list[float]] = defaultdict(list)
        stats: dict[str, CriterionStats] = {
            name: CriterionStats(threshold=mark) for name, mark in marks.items()
        }
        trial_scores: list[float] = []
        count = lost = 0
        for result in results:
            count += 1
            lost += result.error is not None and result.error.startswith("missing: ")
            by_case[result.eval_id].append(result.status)
            if result.score is not None:
                trial_scores.append(result.score)
            for name, score in result.criterion_results.items():
                entry = stats.setdefault(name, CriterionStats(threshold=marks.get(name)))
                if score.error is not None:
                    entry.errors += 1
                if score.value is not None:
                    entry.scored += 1
                    values[name].append(score.value)
                    if score.passed:
                        entry.passed += 1
                    else:
                        entry.failed += 1
                elif score.error is not None:
                    entry.failed += 1  # the criterion crashed: no score, counted as a fail
                elif is_tie(score):
                    entry.ties += 1
                elif is_reported(score):
                    entry.threshold = None  # measured, never held to a mark
                    entry.unit = reported_unit(score)
                    measured = reported_value(score)
                    if measured is None:
                        entry.skipped += 1
                    else:
                        entry.reported += 1
                        values[name].append(measured)
                else:
                    entry.skipped += 1
        for name, entry in stats.items():
            scored = values.get(name, [])
            if scored:
                entry.mean = fmean(scored)
                entry.min = min(scored)
                entry.max = max(scored)
            if entry.passed + entry.failed:
                entry.pass_rate = entry.passed / (entry.passed + entry.failed)
        statuses = [next(s for s in _WORST_FIRST if s in trials) for trials in by_case.values()]
        passed = statuses.count(CaseStatus.PASSED)
        failed = statuses.count(CaseStatus.FAILED)
        return cls(
            total_cases=len(statuses),
            passed_cases=passed,
            failed_cases=failed,
            undecided_cases=statuses.count(CaseStatus.UNDECIDED),
            error_cases=statuses.count(CaseStatus.ERROR),
            not_evaluated_cases=statuses.count(CaseStatus.NOT_EVALUATED),
            pass_rate=passed / (passed + failed) if passed + failed else None,
            avg_score=fmean(trial_scores) if trial_scores else None,
            trials=count,
            missing_trials=lost,
            criterion_stats=stats,
        )


def _shown(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.0%}" if percent else f"{value:.2f}"


@dataclass(kw_only=True, eq=False, repr=False)
class EvalReport:
    """An evaluation's results: `results` (an `EvalCaseResult` per case and trial), `summary`
    (an `EvalSummary`), and the engine's `run` behind them (`run.run_id` names it in the
    store: `agenteval show RUN_ID`)."""

    eval_set_id: str
    eval_set_name: str | None
    results: list[EvalCaseResult]
    summary: EvalSummary
    run: Run
    """The engine's run behind the report."""
    config: EvalConfig
    """The evaluation's settings."""
    created_at: datetime
    """When the evaluation started."""
    duration_s: float
    """How long it took, in seconds."""

    @classmethod
    def from_run(
        cls,
        run: Run,
        *,
        eval_set_id: str,
        eval_set_name: str | None = None,
        config: EvalConfig,
        thresholds: Mapping[str, float | None],
        created_at: datetime,
        duration_s: float,
    ) -> EvalReport:
        """The report of a finished run, over the criteria named in `thresholds`; an
        incomplete run's missing trials are `error` results (`EvalCaseResult.lost`)."""
        results = [EvalCaseResult.of(result, thresholds) for result in run.results]
        if not run.complete:
            results = _with_lost(run, results)
        return cls(
            eval_set_id=eval_set_id,
            eval_set_name=eval_set_name,
            results=results,
            summary=EvalSummary.of(results, thresholds),
            run=run,
            config=config,
            created_at=created_at,
            duration_s=duration_s,
        )

    @property
    def run_id(self) -> str:
        """The run's id in the store."""
        return self.run.run_id

    @property
    def complete(self) -> bool:
        """Whether every (case, trial) of the run has a stored result (`run.complete`)."""
        return self.run.complete

    @property
    def missing(self) -> MissingTrials | None:
        """The run's missing trials, counted and a few named (`run.missing`)."""
        return self.run.missing

    @property
    def passed(self) -> bool:
        """Whether the run is complete and every case passed."""
        return self.complete and self.summary.passed_cases == self.summary.total_cases

    @property
    def pass_rate(self) -> float | None:
        """`summary.pass_rate`."""
        return self.summary.pass_rate

    def failures(self) -> list[EvalCaseResult]:
        """The results that failed."""
        return [r for r in self.results if r.status is CaseStatus.FAILED]

    def case(self, eval_id: str) -> list[EvalCaseResult]:
        """The results of one case, one per trial."""
        return [r for r in self.results if r.eval_id == eval_id]

    def format_summary(self) -> str:
        """The summary as text: cases by status, then one line per criterion."""
        s = self.summary
        title = self.eval_set_name or self.eval_set_id
        lines = [
            f"{title}: {s.passed_cases}/{s.total_cases} cases passed "
            f"(pass rate {_shown(s.pass_rate, percent=True)}), {s.failed_cases} failed"
            + (
                f", {s.undecided_cases} undecided (a judge tie, or a criterion the trace could not feed)"
                if s.undecided_cases
                else ""
            )
            + (f", {s.error_cases} not judged (infrastructure)" if s.error_cases else "")
            + (f", {s.not_evaluated_cases} not evaluated" if s.not_evaluated_cases else ""),
        ]
        if not self.complete:
            missing = self.missing
            lines.append(
                f"  INCOMPLETE: {missing.describe() if missing else 'the run did not finish'}"
                f" (run {self.run_id})"
            )
        width = max((len(name) for name in s.criterion_stats), default=0)
        for name, c in s.criterion_stats.items():
            if c.unit is not None and not c.scored:
                lines.append(
                    f"  {name:<{width}}  reported {_shown(c.mean)} {c.unit} (mean of "
                    f"{c.reported} trial{'s' * (c.reported != 1)}"
                    + (f", {c.skipped} not measured" if c.skipped else "")
                    + "), never a pass or a fail"
                )
                continue
            lines.append(
                f"  {name:<{width}}  mean {_shown(c.mean)}  pass {_shown(c.pass_rate, True)}"
                f"  ({c.passed}/{c.scored} passed"
                + (f", {c.ties} ties" if c.ties else "")
                + (f", {c.errors} errors" if c.errors else "")
                + (f", {c.skipped} skipped" if c.skipped else "")
                + f")  threshold {_shown(c.threshold)}"
            )
        for result in self.failures():
            lines.append(
                f"  FAILED {result.eval_id} (trial {result.trial}): "
                + ", ".join(
                    f"{name}: {result.criterion_results[name].reason or 'failed'}"
                    for name in result.failed_criteria
                )
            )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON data: set, summary, results, the run id, and whether the run is
        complete (`complete`, `missing`: as in `agenteval.run/1`'s document)."""
        from agenteval.report.json_document import completeness

        state = completeness(self.run.info, self.run.missing)
        return {
            "eval_set_id": self.eval_set_id,
            "eval_set_name": self.eval_set_name,
            "run_id": self.run_id,
            "complete": state["complete"],
            "missing": state["missing"],
            "created_at": self.created_at.isoformat(),
            "duration_s": self.duration_s,
            "config": self.config.model_dump(mode="json", exclude_none=True),
            "summary": self.summary.model_dump(mode="json"),
            "results": [r.model_dump(mode="json") for r in self.results],
        }

    def __repr__(self) -> str:
        return (
            f"EvalReport({self.eval_set_id!r}, cases={self.summary.total_cases}, "
            f"passed={self.summary.passed_cases}, run={self.run_id!r})"
        )


def _with_lost(run: Run, results: list[EvalCaseResult]) -> list[EvalCaseResult]:
    """`results` with a `lost` result for each (case, trial) the run asked for and has not
    stored, in case then trial order (the run's cases are read from its store)."""
    from agenteval.store import RunStore

    by_key = {(result.eval_id, result.trial): result for result in results}
    with RunStore(run.store_path, create=False) as store:
        case_ids = [case.id for case in store.iter_cases(run.run_id)]
    return [
        by_key.get((case_id, trial)) or EvalCaseResult.lost(case_id, trial, run.run_id)
        for case_id in case_ids
        for trial in range(run.info.trials)
    ]
