"""A run's summary as data: `Summary` and its parts (`Rate`, `ScorerStats`, `LatencyStats`,
`CostStats`, `RetrievalAttribution`, `Section`), what every report reads. `report/summary.py`
builds one (`SummaryBuilder`) and re-exports these under their documented import path."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from agenteval.report import statistics as stats
from agenteval.report.simulation import SimulationStats
from agenteval.report.statistics import Interval, Reliability
from agenteval.trace import Usage

__all__ = [
    "CONFIDENCE",
    "CostStats",
    "LatencyStats",
    "Rate",
    "RetrievalAttribution",
    "ScorerStats",
    "Section",
    "Summary",
    "rate_interval",
]

CONFIDENCE = 0.95


def rate_interval(count: int, total: int) -> Interval | None:
    """The 95% Wilson interval of `count` out of `total` (None for no trial)."""
    return stats.wilson(count, total, confidence=CONFIDENCE) if total > 0 else None


class Rate(BaseModel):
    """`count` of `total` trials, with the share and its 95% Wilson interval."""

    model_config = ConfigDict(extra="forbid")

    count: int = 0
    total: int = 0
    rate: float | None = None
    interval: Interval | None = None

    @classmethod
    def of(cls, count: int, total: int) -> Rate:
        """`count` out of `total`; no rate when `total` is 0."""
        return cls(
            count=count,
            total=total,
            rate=count / total if total else None,
            interval=rate_interval(count, total),
        )


class ScorerStats(BaseModel):
    """One scorer over a run. `mean` and `pass_rate` are over the trials it scored."""

    model_config = ConfigDict(extra="forbid")

    mean: float | None = None
    pass_rate: float | None = None
    interval: Interval | None = None
    """The pass rate's 95% Wilson interval, over the `scored` trials."""
    scored: int = 0
    passed: int = 0
    skipped: int = 0
    """Trials the scorer did not apply to (no score)."""
    errors: int = 0
    """Trials where the scorer itself failed, counted apart from failing scores."""
    reported: int = 0
    """Trials it measured without judging (`scorers.reported`: an efficiency metric); such a
    scorer has no mean score and no pass rate, its measurement is `reported_mean`."""
    reported_mean: float | None = None
    """The mean of the measured values, in `unit` (never a pass or a fail)."""
    unit: str | None = None
    """What a reported value counts (`tool calls per turn`)."""


class LatencyStats(BaseModel):
    """Latency percentiles in seconds over the trials that have a latency."""

    model_config = ConfigDict(extra="forbid")

    count: int = 0
    p50: float | None = None
    p95: float | None = None
    mean: float | None = None
    max: float | None = None

    @classmethod
    def of(cls, values: Sequence[float]) -> LatencyStats:
        """Percentiles of `values` (linear interpolation between closest ranks)."""
        if not values:
            return cls()
        if len(values) == 1:
            only = values[0]
            return cls(count=1, p50=only, p95=only, mean=only, max=only)
        cuts = statistics.quantiles(values, n=100, method="inclusive")
        return cls(
            count=len(values),
            p50=cuts[49],
            p95=cuts[94],
            mean=statistics.fmean(values),
            max=max(values),
        )


class CostStats(BaseModel):
    """Money spent, in USD, from the price table, with the agent, the judge and the user
    simulator kept apart; the total is all three.

    Per correct answer is the cost over the trials whose answer was right: those passing
    `correct_by` (`exact_match` where it scored, else the judge's `correctness` rubric).
    """

    model_config = ConfigDict(extra="forbid")

    agent_usd: float | None = None
    """The agent's model calls; None when none of them had a price."""
    judge_usd: float | None = None
    """The judge's calls (cache hits cost nothing); None when no judge call had a price."""
    simulator_usd: float | None = None
    """The user simulator's calls (`report/simulation.py`); None when none had a price."""
    total_usd: float | None = None
    """Agent, judge and user simulator together; None when none had a price."""
    correct_by: str | None = None
    """The scorer whose passing trials count as correct answers; None when none scored."""
    correct_answers: int = 0
    agent_per_correct_usd: float | None = None
    judge_per_correct_usd: float | None = None
    simulator_per_correct_usd: float | None = None
    total_per_correct_usd: float | None = None
    unpriced_models: list[str] = Field(default_factory=list)
    """Models that were called but have no price (the agent's, the judge's and the user
    simulator's): add them under `prices:` in agenteval.yaml."""
    agent_unpriced_models: list[str] = Field(default_factory=list)
    """The agent's own models among `unpriced_models`: `agent_usd` is then partial, so the
    gate's agent-cost rule cannot check it. A judge or simulator without a price leaves the
    agent's cost whole (their costs are `judge_usd` and `simulator_usd`)."""
    models_without_usage: list[str] = Field(default_factory=list)
    """Models called in a way whose trace recorded no token usage (`ModelCall.usage_recorded`:
    an OpenAI stream without `include_usage`, a server that answered without `usage`): those
    calls' cost is missing from the totals, not zero."""
    judge_models_without_usage: list[str] = Field(default_factory=list)
    """Judge models some of whose answers carried no token usage (`JudgeRecord.usage_recorded`:
    a proxy that strips it): their cost is missing from `judge_usd`, not zero."""


class RetrievalAttribution(BaseModel):
    """`retrieval_recall` crossed with `exact_match`, over the trials both scored: was a wrong
    answer the search's fault (a relevant document was missed) or the model's (it had them all)?
    """

    model_config = ConfigDict(extra="forbid")

    trials: int = 0
    """Trials that both scorers scored."""
    correct_all_found: int = 0
    correct_missed: int = 0
    wrong_all_found: int = 0
    wrong_missed: int = 0
    search_missed: Rate = Field(default_factory=Rate)
    """Wrong answers where the search missed a relevant document, over the wrong answers."""
    model_had_all: Rate = Field(default_factory=Rate)
    """Wrong answers where the model had every relevant document, over the wrong answers."""
    wrong_unchecked: int = 0
    """Wrong answers on cases without `relevant_docs` (no retrieval score to split them)."""


class Section(BaseModel):
    """One section of the summary, present only where it applies."""

    model_config = ConfigDict(extra="forbid")

    key: str
    title: str
    scorers: list[str] = Field(default_factory=list)
    """The scorers shown in it (scoring sections only), in order."""


class Summary(BaseModel):
    """What a run measured, as the terminal, the HTML report and the JSON document show it.

    `sections` lists the sections that apply, in order; `scorers` holds every scorer's numbers.
    """

    model_config = ConfigDict(extra="forbid")

    trials: int = 0
    failed_trials: int = 0
    failed: Rate = Field(default_factory=Rate)
    """Failed trials over all trials."""
    passed: Rate = Field(default_factory=Rate)
    """Passing trials (see `passing`) over the trials with a verdict."""
    passing: list[str] | None = None
    """The scorers that decide whether a trial passes; None: every scorer that applied."""
    sections: list[Section] = Field(default_factory=list)
    scorers: dict[str, ScorerStats] = Field(default_factory=dict)
    attribution: RetrievalAttribution | None = None
    """Wrong answers split by whether the search missed a document; None where no trial has
    both an `exact_match` and a `retrieval_recall` score."""
    failures: dict[str, int] = Field(default_factory=dict)
    """Failed trials by cause."""
    failure_rates: dict[str, Rate] = Field(default_factory=dict)
    """Failed trials by cause, over all trials."""
    retries: dict[str, int] = Field(default_factory=dict)
    """Retries by reason, over all trials."""
    retried_trials: Rate = Field(default_factory=Rate)
    """Trials retried at least once, over all trials."""
    latency: LatencyStats = Field(default_factory=LatencyStats)
    """Total latency: what a user waits, retries and backoff included."""
    working_latency: LatencyStats = Field(default_factory=LatencyStats)
    """Latency excluding waits: time inside the agent's attempts, without backoff."""
    usage: Usage = Field(default_factory=Usage)
    """The agent's token usage, summed over trials."""
    judge_usage: Usage = Field(default_factory=Usage)
    """The judge's token usage, summed over scores."""
    judge_retries: dict[str, int] = Field(default_factory=dict)
    """The judge's retries by reason, apart from the agent's."""
    cost: CostStats = Field(default_factory=CostStats)
    simulation: SimulationStats | None = None
    """The simulated conversations (end reasons, turns, the simulator's tokens and cost); None
    when no trial had one."""
    reliability: Reliability | None = None
    """pass@k, pass^k and flaky cases; None unless some case ran more than one trial."""
    not_recorded: dict[str, Rate] = Field(default_factory=dict)
    """Trials whose trace does not record a field (`output`, `tool_calls`, `tool_arguments`:
    `Trial.not_recorded`), over all trials; the scorers that read it gave those trials no
    score."""
    not_recorded_why: dict[str, str] = Field(default_factory=dict)
    """Why the first such trial's trace does not record each field."""

    def section(self, key: str) -> Section | None:
        """The section called `key`, if it applies."""
        return next((s for s in self.sections if s.key == key), None)
