"""The numbers of a run: per scorer mean and pass rate, failures, retries, latency and usage.

Built incrementally (`SummaryBuilder.add` per trial), so a run of any size is summarised
without holding its trials in memory.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from agenteval.pricing import PriceTable
from agenteval.run import TrialResult
from agenteval.score import Score
from agenteval.trace import Usage

__all__ = ["CostStats", "LatencyStats", "ScorerStats", "Summary", "SummaryBuilder", "summarize"]


class ScorerStats(BaseModel):
    """One scorer over a run. `mean` and `pass_rate` are over the trials it scored."""

    model_config = ConfigDict(extra="forbid")

    mean: float | None = None
    pass_rate: float | None = None
    scored: int = 0
    passed: int = 0
    skipped: int = 0
    """Trials the scorer did not apply to (no score)."""
    errors: int = 0
    """Trials where the scorer itself failed, counted apart from failing scores."""


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
    """Money spent, in USD, from the price table, with the agent and the judge kept apart."""

    model_config = ConfigDict(extra="forbid")

    agent_usd: float | None = None
    """The agent's model calls; None when none of them had a price."""
    judge_usd: float | None = None
    """The judge's calls (cache hits cost nothing); None when no judge call had a price."""
    unpriced_models: list[str] = Field(default_factory=list)
    """Models that were called but have no price: add them under `prices:` in agenteval.yaml."""


class Summary(BaseModel):
    """What a run measured, as the terminal and the JSON document show it."""

    model_config = ConfigDict(extra="forbid")

    trials: int = 0
    failed_trials: int = 0
    scorers: dict[str, ScorerStats] = Field(default_factory=dict)
    failures: dict[str, int] = Field(default_factory=dict)
    """Failed trials by cause."""
    retries: dict[str, int] = Field(default_factory=dict)
    """Retries by reason, over all trials."""
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


class SummaryBuilder:
    """Accumulates a Summary one trial at a time."""

    def __init__(self, scorer_order: Iterable[str] = (), prices: PriceTable | None = None) -> None:
        self._order = list(scorer_order)
        self._prices = PriceTable.default() if prices is None else prices
        self._agent_usd: float | None = None
        self._judge_usd: float | None = None
        self._unpriced: set[str] = set()
        self._judge_usage = Usage()
        self._judge_retries: Counter[str] = Counter()
        self._trials = 0
        self._failed = 0
        self._sums: dict[str, float] = {}
        self._stats: dict[str, ScorerStats] = {name: ScorerStats() for name in self._order}
        self._failures: Counter[str] = Counter()
        self._retries: Counter[str] = Counter()
        self._latency: list[float] = []
        self._working: list[float] = []
        self._usage = Usage()

    def add(self, result: TrialResult) -> None:
        """Count one (case, trial) result."""
        trial = result.trial
        self._trials += 1
        if trial.failure is not None:
            self._failed += 1
            self._failures[trial.failure.cause.value] += 1
        self._retries.update(trial.retries)
        if trial.latency_s is not None:
            self._latency.append(trial.latency_s)
        if trial.working_latency_s is not None:
            self._working.append(trial.working_latency_s)
        self._usage = self._usage + trial.usage
        for call in trial.model_calls:
            cost = self._prices.cost(call.model, call.usage)
            if cost is None:
                self._unpriced.add(call.model)
            else:
                self._agent_usd = (self._agent_usd or 0.0) + cost
        for name, score in result.scores.items():
            if score.judge is not None:
                self._add_judge(score)
            stats = self._stats.setdefault(name, ScorerStats())
            if score.error is not None:
                stats.errors += 1
            elif score.value is None:
                stats.skipped += 1
            else:
                stats.scored += 1
                self._sums[name] = self._sums.get(name, 0.0) + score.value
                if score.passed:
                    stats.passed += 1

    def _add_judge(self, score: Score) -> None:
        assert score.judge is not None
        if score.usage is not None:
            self._judge_usage = self._judge_usage + score.usage
        self._judge_retries.update(score.judge.retries)
        if score.judge.cost_usd is not None:
            self._judge_usd = (self._judge_usd or 0.0) + score.judge.cost_usd
        elif score.usage is not None and score.usage.total_tokens:
            self._unpriced.add(score.judge.judge.partition(":")[2])

    def build(self) -> Summary:
        """The summary of everything added so far."""
        scorers: dict[str, ScorerStats] = {}
        for name, stats in self._stats.items():
            scored = stats.scored
            scorers[name] = stats.model_copy(
                update={
                    "mean": self._sums.get(name, 0.0) / scored if scored else None,
                    "pass_rate": stats.passed / scored if scored else None,
                }
            )
        return Summary(
            trials=self._trials,
            failed_trials=self._failed,
            scorers=scorers,
            failures=dict(self._failures.most_common()),
            retries=dict(self._retries.most_common()),
            latency=LatencyStats.of(self._latency),
            working_latency=LatencyStats.of(self._working),
            usage=self._usage,
            judge_usage=self._judge_usage,
            judge_retries=dict(self._judge_retries.most_common()),
            cost=CostStats(
                agent_usd=self._agent_usd,
                judge_usd=self._judge_usd,
                unpriced_models=sorted(self._unpriced),
            ),
        )


def summarize(
    results: Iterable[TrialResult],
    scorer_order: Iterable[str] = (),
    prices: PriceTable | None = None,
) -> Summary:
    """The summary of a sequence of results."""
    builder = SummaryBuilder(scorer_order, prices)
    for result in results:
        builder.add(result)
    return builder.build()
