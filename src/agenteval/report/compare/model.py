"""What `agenteval compare` reports, and what `agenteval gate` decides on: the `Comparison` of a
candidate run with its base, and its parts (each run's side, a paired change, a scorer's
comparison, the cases that newly fail or pass, how much of the base the candidate judged)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agenteval.report.statistics import TRIAL, Interval, Reliability
from agenteval.report.summary import Summary

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
    """Shared cases the scorer counted a trial of in both runs (scored it, or errored on it:
    an error is no pass): the pairs the pass-rate test is over."""
    binary: bool
    """Every value was 0 or 1, so the mean is the pass rate and has no test of its own."""
    pass_rate: Change | None
    """None when no shared case was judged in both runs."""
    mean: Change | None
    """The mean score; None for binary scorers (see `pass_rate`)."""
    unjudged_in_candidate: int = 0
    """Shared cases the base judged with this scorer that the candidate gave no score (it
    errored, did not apply, or did not run there)."""
    judged_in_candidate: int = 0
    """Shared cases the base judged with this scorer that the candidate gave a score too: with
    none (and some unjudged), the gate cannot check the scorer."""


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
    models_without_usage: list[str] = Field(default_factory=list)
    """Models either run called with no token usage recorded (`CostStats.models_without_usage`,
    and the judge's `judge_models_without_usage`): that cost is unknown, not lower."""
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
