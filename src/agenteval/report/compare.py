"""`agenteval compare`: what changed from a base run to a candidate run, and whether it is real.

For each scorer: the pass rate (and, for scorers whose values are not just 0 or 1, the mean
score) of both runs over the cases they share, the change with its 95% interval, and a paired
significance test; the cases that newly fail or newly pass; cost and latency.

**The unit is the case, not the (case, trial) pair.** A case's trials share its input and its
difficulty, so they are not independent evidence; and trial 2 of the base has nothing to do
with trial 2 of the candidate, so pairing by trial index would be arbitrary. Each shared case
gives one pair of values: its pass rate over its judged trials in each run (0 or 1 with one
trial) and its mean score. The tests:
- pass rate: the exact McNemar test when every shared case has one judged trial in each run;
  with more trials, the same exact binomial test on the cases whose pass rate went down
  against those whose went up (the sign test, which McNemar is on pass/fail pairs);
- mean score: the exact Wilcoxon signed-rank test on the per-case differences (see
  `statistics.wilcoxon_signed_rank` for why);
- the interval of each change: Bonett and Price's adjusted interval for paired data
  (`statistics.paired_difference`).

`gate` reads the same `Comparison`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from rich import box
from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

from agenteval.pricing import PriceTable
from agenteval.records import MissingTrials, RunInfo, RunStatus, TrialResult
from agenteval.report.statistics import (
    TRIAL,
    WILCOXON_EXACT_LIMIT,
    Interval,
    Reliability,
    ReliabilityBuilder,
    check_passing,
    mcnemar,
    paired_difference,
    trial_passed,
    wilcoxon_signed_rank,
)
from agenteval.report.summary import Summary, SummaryBuilder
from agenteval.store import RunStore

__all__ = [
    "SCHEMA",
    "CaseChange",
    "Change",
    "Comparison",
    "Coverage",
    "MetricChange",
    "RunSide",
    "ScorerComparison",
    "UnjudgedCase",
    "compare_results",
    "compare_runs",
    "comparison_markdown",
    "print_comparison",
    "write_comparison_json",
]

SCHEMA = "agenteval.compare/1"

SIGNIFICANCE = 0.05
"""The level at which `compare` marks a change as significant (the gate has its own)."""


class RunSide(BaseModel):
    """One of the two runs: what it is, its whole summary and its reliability."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    created_at: datetime
    target: str | None
    finished: bool
    """False for a run that was interrupted (or is still going), or that lacks a stored trial
    whatever its status says: some trials are missing."""
    missing: str | None = None
    """How many of its trials have no stored result, naming a few (None: none missing, or not
    counted because the comparison was not made from a store)."""
    partial: bool = False
    """Its session ran only some of its cases on purpose (a pytest `-k`, `--lf`, `-x` or
    Ctrl-C): never finished, and only its stored trials are compared."""
    cases: int
    summary: Summary
    reliability: Reliability


class Change(BaseModel):
    """A paired change over the shared cases: both values, the change with its interval, and
    the paired test."""

    model_config = ConfigDict(extra="forbid")

    base: float
    """The mean over the shared cases of the per-case value (pass rate or mean score)."""
    candidate: float
    change: Interval
    """candidate − base, with its 95% interval."""
    p_value: float
    """Two-sided."""
    test: str
    """The test that gave `p_value`."""
    improved: int
    """Shared cases whose value went up."""
    regressed: int
    """Shared cases whose value went down."""

    @property
    def significant(self) -> bool:
        """p < 0.05."""
        return self.p_value < SIGNIFICANCE


class ScorerComparison(BaseModel):
    """One scorer (or `statistics.TRIAL`, "the trial passes") across the two runs."""

    model_config = ConfigDict(extra="forbid")

    name: str
    cases: int
    """Shared cases the scorer judged in both runs: the pairs the tests are over."""
    binary: bool
    """Every value was 0 or 1, so the mean is the pass rate and has no test of its own."""
    pass_rate: Change | None
    """None when no shared case was judged in both runs."""
    mean: Change | None
    """The mean score; None for binary scorers (see `pass_rate`)."""
    unjudged_in_candidate: int = 0
    """Shared cases the base judged with this scorer that the candidate did not (it errored,
    did not apply, or did not run there): the gate cannot check them."""


class CaseChange(BaseModel):
    """A case that newly fails a scorer, or newly passes it.

    A case *fails* a scorer in a run when at least one of its trials failed it. A new failure
    fails it in the candidate and did not in the base (the base passed it, did not judge it,
    or did not have the case); a new fix failed it in the base and passes it in the candidate.
    """

    model_config = ConfigDict(extra="forbid")

    case_id: str
    scorer: str
    base_failed: int
    base_judged: int
    candidate_failed: int
    candidate_judged: int
    in_base: bool = True
    reason: str | None = None
    """Why it fails, in the run where it fails (its first failing trial)."""
    trial: int | None = None
    """The trial `reason` is from."""


class UnjudgedCase(BaseModel):
    """A case the base judged that the candidate ran without judging any of its trials, and
    why: each trial's infrastructure failure (`timeout`, `connection_error`, ...), or
    `scorer error` (every scorer that applied crashed), or `no scorer applied`."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    why: dict[str, int]
    """What left each trial unjudged → how many trials."""

    def describe(self) -> str:
        """`c3 (2 timeout, 1 connection_error)`."""
        parts = ", ".join(f"{count} {why}" for why, count in self.why.items())
        return f"{self.case_id} ({parts})"


class Coverage(BaseModel):
    """How much of what the base judged the candidate judged too.

    A case is *judged* in a run when a scorer gave at least one of its trials a score. A trial
    that failed as infrastructure (a timeout, a rate limit, a provider or connection error) is
    left out of scoring, so a candidate whose every trial timed out judged nothing, and the
    comparisons over shared judged cases have nothing to say about it: a gate must not read
    that silence as "no regression" (see `gate`).
    """

    model_config = ConfigDict(extra="forbid")

    base_judged: int
    """Cases the base judged."""
    both_judged: int
    """Of those, the cases the candidate judged too: the evidence the comparison rests on."""
    candidate_judged: int
    """Every case the candidate judged, those the base did not have or judge included."""
    not_run: list[str] = Field(default_factory=list)
    """Cases the base judged that the candidate did not run at all."""
    unjudged: list[UnjudgedCase] = Field(default_factory=list)
    """Cases the base judged that the candidate ran but judged no trial of."""


class MetricChange(BaseModel):
    """A number of each run's summary (cost, latency), and how it moved."""

    model_config = ConfigDict(extra="forbid")

    base: float | None
    candidate: float | None

    @property
    def change(self) -> float | None:
        """candidate − base, when both are known."""
        if self.base is None or self.candidate is None:
            return None
        return self.candidate - self.base

    @property
    def relative(self) -> float | None:
        """The change as a share of the base, when the base is known and not zero."""
        change = self.change
        if change is None or not self.base:
            return None
        return change / self.base


class Comparison(BaseModel):
    """Everything `agenteval compare` reports, and what `agenteval gate` decides on."""

    model_config = ConfigDict(extra="forbid")

    base: RunSide
    candidate: RunSide
    passing: list[str] | None
    """The scorers that define "the trial passes"; None: every scorer that applied."""
    shared_cases: int
    only_in_base: list[str] = Field(default_factory=list)
    only_in_candidate: list[str] = Field(default_factory=list)
    changed_cases: list[str] = Field(default_factory=list)
    """Shared case ids whose content (input, expectations) differs between the runs."""
    coverage: Coverage
    """How much of what the base judged the candidate judged too."""
    trial: ScorerComparison
    """"The trial passes" (`passing`), compared like a scorer."""
    scorers: list[ScorerComparison]
    new_failures: list[CaseChange]
    new_fixes: list[CaseChange]
    agent_cost_per_case: MetricChange
    """The agent's mean cost in USD of answering a case once (cost over trials)."""
    judge_cost_per_case: MetricChange
    unpriced_models: list[str] = Field(default_factory=list)
    """Models either run called that have no price: their cost is missing, not zero."""
    latency_p50: MetricChange
    latency_p95: MetricChange
    working_latency_p50: MetricChange
    working_latency_p95: MetricChange

    def scorer(self, name: str) -> ScorerComparison | None:
        """The comparison of one scorer (or `TRIAL`), if either run has it."""
        if name == TRIAL:
            return self.trial
        return next((s for s in self.scorers if s.name == name), None)

    def document(self) -> dict[str, Any]:
        """The comparison as the JSON document `--json` writes (schema `agenteval.compare/1`)."""
        return {"schema": SCHEMA, **self.model_dump(mode="json")}


# -- collecting ------------------------------------------------------------------------------


@dataclass
class _Tally:
    """One scorer (or the trial verdict) on one case in one run."""

    judged: int = 0
    passed: int = 0
    value_sum: float = 0.0
    binary: bool = True
    reason: str | None = None
    reason_trial: int | None = None

    @property
    def failed(self) -> int:
        return self.judged - self.passed


@dataclass
class _RunTally:
    summary: SummaryBuilder
    reliability: ReliabilityBuilder
    passing: frozenset[str] | None
    cases: dict[str, dict[str, _Tally]] = field(default_factory=dict)
    fingerprints: dict[str, str] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    judged: set[str] = field(default_factory=set)
    """Cases at least one of whose trials a scorer gave a score."""
    unjudged: dict[str, dict[str, int]] = field(default_factory=dict)
    """Case → why its trials were not judged → how many (every trial's, judged case or not)."""

    def add(self, result: TrialResult) -> None:
        self.summary.add(result)
        self.reliability.add(result)
        case_id = result.case.id
        if case_id not in self.fingerprints:
            self.fingerprints[case_id] = hashlib.sha256(
                result.case.model_dump_json().encode("utf-8")
            ).hexdigest()
        tallies = self.cases.setdefault(case_id, {})
        verdict = trial_passed(result, self.passing)
        if verdict is not None:
            tally = tallies.setdefault(TRIAL, _Tally())
            tally.judged += 1
            tally.passed += verdict
            tally.value_sum += verdict
        judged = False
        errored = False
        for name, score in result.scores.items():
            if not score.applied or score.value is None:
                errored = errored or score.error is not None
                continue
            judged = True
            if name not in self.names:
                self.names.append(name)
            tally = tallies.setdefault(name, _Tally())
            passed = bool(score.passed)
            tally.judged += 1
            tally.passed += passed
            tally.value_sum += score.value
            tally.binary = (
                tally.binary and score.value in (0.0, 1.0) and passed == (score.value == 1.0)
            )
            if not passed and tally.reason is None:
                tally.reason = score.reason or "failed"
                tally.reason_trial = result.trial.trial
        if judged:
            self.judged.add(case_id)
        else:
            failure = result.trial.failure
            why = (
                failure.cause.value
                if failure is not None
                else "scorer error"
                if errored
                else "no scorer applied"
            )
            counts = self.unjudged.setdefault(case_id, {})
            counts[why] = counts.get(why, 0) + 1


def _side(info: RunInfo, tally: _RunTally, missing: MissingTrials | None) -> RunSide:
    lacking = missing is not None and missing.count > 0
    return RunSide(
        run_id=info.run_id,
        created_at=info.created_at,
        target=info.target,
        finished=info.status is RunStatus.FINISHED and not lacking,
        missing=missing.describe() if missing is not None and lacking else None,
        partial=info.status is RunStatus.PARTIAL,
        cases=len(tally.cases),
        summary=tally.summary.build(),
        reliability=tally.reliability.build(),
    )


def _change(
    base: Sequence[float], candidate: Sequence[float], *, test: str, p_value: float
) -> Change:
    interval = paired_difference(base, candidate)
    improved = sum(c > b for b, c in zip(base, candidate, strict=True))
    regressed = sum(c < b for b, c in zip(base, candidate, strict=True))
    return Change(
        base=sum(base) / len(base),
        candidate=sum(candidate) / len(candidate),
        change=interval,
        p_value=p_value,
        test=test,
        improved=improved,
        regressed=regressed,
    )


def _compare_scorer(
    name: str, shared: Sequence[str], base: _RunTally, cand: _RunTally
) -> ScorerComparison:
    pairs = [
        (base.cases[c][name], cand.cases[c][name])
        for c in shared
        if name in base.cases[c] and name in cand.cases[c]
    ]
    binary = all(b.binary and c.binary for b, c in pairs)
    unjudged = sum(name in base.cases[c] and name not in cand.cases[c] for c in shared)
    if not pairs:
        return ScorerComparison(
            name=name,
            cases=0,
            binary=binary,
            pass_rate=None,
            mean=None,
            unjudged_in_candidate=unjudged,
        )
    base_rates = [b.passed / b.judged for b, _ in pairs]
    cand_rates = [c.passed / c.judged for _, c in pairs]
    single = all(b.judged == 1 and c.judged == 1 for b, c in pairs)
    regressed = sum(c < b for b, c in zip(base_rates, cand_rates, strict=True))
    improved = sum(c > b for b, c in zip(base_rates, cand_rates, strict=True))
    pass_rate = _change(
        base_rates,
        cand_rates,
        test="exact McNemar" if single else "exact sign test over cases",
        p_value=mcnemar(regressed, improved),
    )
    mean: Change | None = None
    if not binary:
        base_means = [b.value_sum / b.judged for b, _ in pairs]
        cand_means = [c.value_sum / c.judged for _, c in pairs]
        differences = [c - b for b, c in zip(base_means, cand_means, strict=True)]
        mean = _change(
            base_means,
            cand_means,
            test="exact Wilcoxon signed-rank"
            if sum(round(d, 12) != 0 for d in differences) <= WILCOXON_EXACT_LIMIT
            else "Wilcoxon signed-rank (normal approximation)",
            p_value=wilcoxon_signed_rank(differences),
        )
    return ScorerComparison(
        name=name,
        cases=len(pairs),
        binary=binary,
        pass_rate=pass_rate,
        mean=mean,
        unjudged_in_candidate=unjudged,
    )


def _case_changes(
    names: Sequence[str], base: _RunTally, cand: _RunTally
) -> tuple[list[CaseChange], list[CaseChange]]:
    failures: list[CaseChange] = []
    fixes: list[CaseChange] = []
    for name in names:
        for case_id, tallies in cand.cases.items():
            now = tallies.get(name)
            before = base.cases.get(case_id, {}).get(name)
            base_failed = before.failed if before else 0
            base_judged = before.judged if before else 0
            if now is None:
                continue
            if now.failed and not base_failed:
                failures.append(
                    CaseChange(
                        case_id=case_id,
                        scorer=name,
                        base_failed=0,
                        base_judged=base_judged,
                        candidate_failed=now.failed,
                        candidate_judged=now.judged,
                        in_base=case_id in base.cases,
                        reason=now.reason,
                        trial=now.reason_trial,
                    )
                )
            elif before is not None and base_failed and not now.failed:
                fixes.append(
                    CaseChange(
                        case_id=case_id,
                        scorer=name,
                        base_failed=base_failed,
                        base_judged=base_judged,
                        candidate_failed=0,
                        candidate_judged=now.judged,
                        reason=before.reason,
                        trial=before.reason_trial,
                    )
                )
    return failures, fixes


def _coverage(base: _RunTally, cand: _RunTally) -> Coverage:
    not_run: list[str] = []
    unjudged: list[UnjudgedCase] = []
    both = 0
    for case_id in base.cases:
        if case_id not in base.judged:
            continue
        if case_id not in cand.cases:
            not_run.append(case_id)
        elif case_id in cand.judged:
            both += 1
        else:
            unjudged.append(UnjudgedCase(case_id=case_id, why=cand.unjudged.get(case_id, {})))
    return Coverage(
        base_judged=len(base.judged),
        both_judged=both,
        candidate_judged=len(cand.judged),
        not_run=not_run,
        unjudged=unjudged,
    )


def _per_trial(total: float | None, summary: Summary) -> float | None:
    if total is None:
        return None
    return total / summary.trials if summary.trials else None


def _agent_cost(summary: Summary) -> float | None:
    cost = summary.cost.agent_usd
    if cost is None and not summary.cost.unpriced_models and summary.usage.total_tokens == 0:
        cost = 0.0  # no model call was recorded: nothing to pay for
    return _per_trial(cost, summary)


def compare_results(
    base_info: RunInfo,
    base_results: Iterable[TrialResult],
    candidate_info: RunInfo,
    candidate_results: Iterable[TrialResult],
    *,
    passing: Collection[str] | None = None,
    prices: PriceTable | None = None,
    base_missing: MissingTrials | None = None,
    candidate_missing: MissingTrials | None = None,
    passing_field: str = "--passing",
) -> Comparison:
    """Compare two runs' results (each streamed once, in the store's case order).

    `passing` names the scorers that define "the trial passes" (default: the candidate run's
    own setting, else every scorer that applied); `prices` prices the agent's and the judge's
    model calls (default: the shipped table). `base_missing` and `candidate_missing` (from
    `RunStore.missing_trials`) mark a run with trials missing as unfinished, whatever its
    status.
    """
    given = passing
    if passing is None:
        stored = candidate_info.settings.get("passing")
        passing = list(stored) if stored else None
    chosen = None if passing is None else frozenset(passing)
    sides: list[_RunTally] = []
    for results in (base_results, candidate_results):
        tally = _RunTally(
            summary=SummaryBuilder((), prices),
            reliability=ReliabilityBuilder(chosen),
            passing=chosen,
        )
        for result in results:
            tally.add(result)
        sides.append(tally)
    base, cand = sides
    shared = [case_id for case_id in cand.cases if case_id in base.cases]
    names = list(cand.names) + [n for n in base.names if n not in cand.names]
    check_passing(given, names, field=passing_field)  # the candidate's own was checked
    failures, fixes = _case_changes(names, base, cand)
    base_side = _side(base_info, base, base_missing)
    cand_side = _side(candidate_info, cand, candidate_missing)
    bs, cs = base_side.summary, cand_side.summary
    return Comparison(
        base=base_side,
        candidate=cand_side,
        passing=None if chosen is None else sorted(chosen),
        shared_cases=len(shared),
        only_in_base=[c for c in base.cases if c not in cand.cases],
        only_in_candidate=[c for c in cand.cases if c not in base.cases],
        changed_cases=[c for c in shared if base.fingerprints[c] != cand.fingerprints[c]],
        coverage=_coverage(base, cand),
        trial=_compare_scorer(TRIAL, shared, base, cand),
        scorers=[_compare_scorer(name, shared, base, cand) for name in names],
        new_failures=failures,
        new_fixes=fixes,
        agent_cost_per_case=MetricChange(base=_agent_cost(bs), candidate=_agent_cost(cs)),
        judge_cost_per_case=MetricChange(
            base=_per_trial(bs.cost.judge_usd, bs), candidate=_per_trial(cs.cost.judge_usd, cs)
        ),
        unpriced_models=sorted(set(bs.cost.unpriced_models) | set(cs.cost.unpriced_models)),
        latency_p50=MetricChange(base=bs.latency.p50, candidate=cs.latency.p50),
        latency_p95=MetricChange(base=bs.latency.p95, candidate=cs.latency.p95),
        working_latency_p50=MetricChange(
            base=bs.working_latency.p50, candidate=cs.working_latency.p50
        ),
        working_latency_p95=MetricChange(
            base=bs.working_latency.p95, candidate=cs.working_latency.p95
        ),
    )


def compare_runs(
    store: RunStore,
    base_run: str,
    candidate_run: str,
    *,
    passing: Collection[str] | None = None,
    prices: PriceTable | None = None,
    passing_field: str = "--passing",
) -> Comparison:
    """Compare two stored runs, each named by an id, a unique prefix or `latest`
    (`passing_field`: where the caller's `passing` was given, for an error naming it)."""
    base_id = store.resolve_run_id(base_run)
    candidate_id = store.resolve_run_id(candidate_run)
    return compare_results(
        store.get_info(base_id),
        store.iter_results(base_id),
        store.get_info(candidate_id),
        store.iter_results(candidate_id),
        passing=passing,
        prices=prices,
        passing_field=passing_field,
        base_missing=store.missing_trials(base_id),
        candidate_missing=store.missing_trials(candidate_id),
    )


def write_comparison_json(path: Path, comparison: Comparison) -> None:
    """Write the comparison's JSON document to `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(comparison.document(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )


# -- rendering -------------------------------------------------------------------------------


def _pct(value: float) -> str:
    return f"{value:.0%}" if value in (0.0, 1.0) else f"{value:.1%}"


def _points(interval: Interval, unit: str = " pts") -> str:
    """A change of rates in percentage points, with its interval."""
    return (
        f"{interval.estimate * 100:+.1f}{unit} "
        f"[{interval.low * 100:+.1f}, {interval.high * 100:+.1f}]"
    )


def _score_change(interval: Interval) -> str:
    return f"{interval.estimate:+.3f} [{interval.low:+.3f}, {interval.high:+.3f}]"


def _p(value: float) -> str:
    if value < 0.001:
        return "<0.001"
    return f"{value:.3f}" if value < 0.1 else f"{value:.2f}"


def _verdict(change: Change) -> str:
    if not change.significant:
        return ""
    return "better" if change.change.estimate > 0 else "worse"


def _usd(value: float | None) -> str:
    if value is None:
        return "—"
    return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 1000:.0f} ms" if abs(value) < 1 else f"{value:.2f} s"


def _relative(metric: MetricChange) -> str:
    relative = metric.relative
    if relative is None:
        return ""
    return f"{relative:+.0%}"


def _rows(comparison: Comparison) -> list[tuple[str, ScorerComparison]]:
    rows = [(f"{TRIAL} passes", comparison.trial)]
    rows += [(s.name, s) for s in comparison.scorers]
    return rows


def _cost_rows(comparison: Comparison) -> list[tuple[str, MetricChange, str]]:
    """(label, metric, unit) for the cost and latency lines."""
    return [
        ("agent cost per case", comparison.agent_cost_per_case, "usd"),
        ("judge cost per case", comparison.judge_cost_per_case, "usd"),
        ("latency p50", comparison.latency_p50, "s"),
        ("latency p95", comparison.latency_p95, "s"),
        ("latency p50 excluding waits", comparison.working_latency_p50, "s"),
        ("latency p95 excluding waits", comparison.working_latency_p95, "s"),
    ]


def _format(value: float | None, unit: str) -> str:
    return _usd(value) if unit == "usd" else _seconds(value)


def _case_line(change: CaseChange, *, fix: bool) -> str:
    before = (
        "not in the base"
        if not change.in_base
        else f"{change.base_judged - change.base_failed}/{change.base_judged} passed"
    )
    after = f"{change.candidate_judged - change.candidate_failed}/{change.candidate_judged} passed"
    why = f" — {change.reason}" if change.reason else ""
    where = "base" if fix else "candidate"
    trial = f" ({where} trial {change.trial})" if change.trial is not None and why else ""
    return f"{change.case_id} · {change.scorer}: {before} → {after}{why}{trial}"


def _notes(comparison: Comparison) -> list[str]:
    notes: list[str] = [
        f"the {which} run {side.run_id} is partial (its session ran only some of its cases); "
        "only its stored trials are compared"
        if side.partial
        else f"the {which} run {side.run_id}: {side.missing}; only its stored trials are compared"
        if side.missing
        else f"the {which} run {side.run_id} is unfinished: only its stored trials are compared"
        for which, side in (("base", comparison.base), ("candidate", comparison.candidate))
        if not side.finished
    ]
    if comparison.only_in_base or comparison.only_in_candidate:
        notes.append(
            f"the runs differ in cases: {len(comparison.only_in_base)} only in the base, "
            f"{len(comparison.only_in_candidate)} only in the candidate; tests are over the "
            f"{comparison.shared_cases} shared cases"
        )
    unjudged = comparison.coverage.unjudged
    if unjudged:
        shown = ", ".join(case.describe() for case in unjudged[:5])
        more = len(unjudged) - 5
        notes.append(
            f"the candidate judged no trial of {len(unjudged)} case(s) the base judged "
            f"({shown}{f' and {more} more' if more > 0 else ''}): they are in no test"
        )
    if comparison.changed_cases:
        shown = ", ".join(comparison.changed_cases[:5])
        more = len(comparison.changed_cases) - 5
        notes.append(
            f"{len(comparison.changed_cases)} shared case(s) changed content between the runs "
            f"({shown}{f' and {more} more' if more > 0 else ''})"
        )
    if comparison.unpriced_models:
        notes.append(
            "no price for " + ", ".join(comparison.unpriced_models) + ": their cost is missing"
        )
    return notes


def print_comparison(comparison: Comparison, console: Console | None = None) -> None:
    """Print the comparison: per scorer the change, its interval and test; the cases that
    newly fail or pass; cost and latency."""
    console = console or Console()
    console.print(
        Text.assemble(
            ("base ", "dim"),
            (comparison.base.run_id, "bold cyan"),
            ("  →  candidate ", "dim"),
            (comparison.candidate.run_id, "bold cyan"),
            f"  ·  {comparison.shared_cases} shared cases",
        )
    )
    table = Table(
        title="Scores over the shared cases",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    columns: list[tuple[str, JustifyMethod]] = [
        ("scorer", "left"),
        ("cases", "right"),
        ("base", "right"),
        ("cand.", "right"),
        ("change [95% CI]", "right"),
        ("p", "left"),
    ]
    for column, justify in columns:
        # A scorer's name is an id: it wraps inside its cell on a narrow terminal, never cut.
        table.add_column(column, justify=justify, no_wrap=column != "scorer", overflow="fold")
    for label, row in _rows(comparison):
        for kind, change in (("pass rate", row.pass_rate), ("mean", row.mean)):
            if change is None:
                continue
            verdict = _verdict(change)
            style = "green" if verdict == "better" else "red" if verdict == "worse" else ""
            if kind == "pass rate":
                values = (
                    _pct(change.base),
                    _pct(change.candidate),
                    _points(change.change, unit=""),
                )
            else:
                values = (
                    f"{change.base:.3f}",
                    f"{change.candidate:.3f}",
                    _score_change(change.change),
                )
            table.add_row(
                # Text, not markup: a name like `x[require_order]` is printed as it is.
                Text(label) if kind == "pass rate" else "  └ mean score",
                str(row.cases),
                *values,
                Text.assemble(_p(change.p_value), (f" {verdict}" if verdict else "", style)),
            )
    console.print(table)
    console.print(
        Text(
            "change in percentage points (mean: in score); per case: pass rate over its judged "
            "trials, and mean score; p: exact McNemar "
            "(sign test over cases with several trials) for pass rates, exact Wilcoxon "
            "signed-rank for mean scores; better/worse: p < 0.05",
            style="dim",
        )
    )
    costs = Table(title="Cost and latency", title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("", "base", "candidate", "change"):
        costs.add_column(column, justify="left" if not column else "right", no_wrap=bool(column))
    for label, metric, unit in _cost_rows(comparison):
        costs.add_row(
            label,
            _format(metric.base, unit),
            _format(metric.candidate, unit),
            _relative(metric),
        )
    console.print(costs)
    for title, cases, style, fix in (
        ("New failures", comparison.new_failures, "red", False),
        ("New fixes", comparison.new_fixes, "green", True),
    ):
        console.print(Text(f"{title}: {len(cases)}", style=f"bold {style}"))
        for case in cases:
            console.print(Text("  " + _case_line(case, fix=fix)), highlight=False)
    for note in _notes(comparison):
        console.print(Text(f"note: {note}", style="yellow"))


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def comparison_markdown(comparison: Comparison) -> str:
    """The comparison as Markdown for a pull-request comment: a table of scores, cost and
    latency, and the new failures and fixes (folded)."""
    lines = [
        f"### agenteval: `{comparison.candidate.run_id}` against `{comparison.base.run_id}`",
        "",
        f"{comparison.shared_cases} shared cases · "
        f"{len(comparison.new_failures)} new failures · {len(comparison.new_fixes)} new fixes",
        "",
        "| scorer | cases | base | candidate | change [95% CI] | p | |",
        "|---|--:|--:|--:|--:|--:|---|",
    ]
    for label, row in _rows(comparison):
        for kind, change in (("pass rate", row.pass_rate), ("mean", row.mean)):
            if change is None:
                continue
            verdict = _verdict(change)
            mark = {"better": "✅ better", "worse": "❌ worse"}.get(verdict, "")
            if kind == "pass rate":
                name = f"`{_md(label)}`"
                values = [_pct(change.base), _pct(change.candidate), _points(change.change)]
            else:
                name = f"`{_md(label)}` (mean)"
                values = [
                    f"{change.base:.3f}",
                    f"{change.candidate:.3f}",
                    _score_change(change.change),
                ]
            lines.append(
                f"| {name} | {row.cases} | "
                + " | ".join(values)
                + f" | {_p(change.p_value)} | {mark} |"
            )
    lines += ["", "| | base | candidate | change |", "|---|--:|--:|--:|"]
    for label, metric, unit in _cost_rows(comparison):
        lines.append(
            f"| {label} | {_format(metric.base, unit)} | {_format(metric.candidate, unit)} "
            f"| {_relative(metric)} |"
        )
    for title, changes, fix in (
        ("New failures", comparison.new_failures, False),
        ("New fixes", comparison.new_fixes, True),
    ):
        if not changes:
            continue
        lines += ["", f"<details><summary>{title} ({len(changes)})</summary>", ""]
        lines += [f"- {_md(_case_line(change, fix=fix))}" for change in changes]
        lines += ["", "</details>"]
    notes = _notes(comparison)
    if notes:
        lines.append("")
        lines += [f"> {_md(note)}" for note in notes]
    lines += [
        "",
        "<sub>Per case: pass rate over its judged trials. p: exact McNemar (sign test over cases "
        "with several trials) for pass rates, exact Wilcoxon signed-rank for mean scores; "
        "better/worse at p &lt; 0.05.</sub>",
    ]
    return "\n".join(lines) + "\n"
