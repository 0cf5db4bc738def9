"""The numbers of a run, in the sections of "What gets measured".

Correctness; tool use step by step; faithfulness and retrieval (with `retrieval_recall` crossed
with `exact_match`); safety; latency; cost; retries; failures; LLM judge rubrics; other scores;
and, with several trials per case, reliability (pass@k, pass^k, flaky cases). Every rate carries
how many trials it is over and its 95% Wilson interval.

Built incrementally (`SummaryBuilder.add` per trial), so a run of any size is summarised
without holding its trials in memory (per case, only pass counts are kept).

The summary is redacted when it is built, as the store redacts what it writes: it is made from
the trials as the agent left them in memory (retry reasons and model names are the agent's own
text), and every report of a run (terminal, JSON, HTML, the `Run` that `evaluate` returns) shows
it. Nothing is redacted per trial: the strings a summary keeps of its trials (retry reasons,
unpriced model names, flaky case ids) are redacted once, in `build`.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Collection, Iterable
from typing import Any

from agenteval.judge.rubrics import RUBRICS
from agenteval.pricing import PriceTable
from agenteval.records import TrialResult
from agenteval.redaction import Redactor
from agenteval.report.floats import FloatLog
from agenteval.report.simulation import SimulationBuilder
from agenteval.report.statistics import Reliability, ReliabilityBuilder
from agenteval.report.summary_model import (
    CostStats,
    LatencyStats,
    Rate,
    RetrievalAttribution,
    ScorerStats,
    Section,
    Summary,
    rate_interval,
)
from agenteval.score import Score
from agenteval.scorers.recorded import NOT_RECORDED
from agenteval.scorers.reported import REPORTED, reported_unit, reported_value
from agenteval.trace import Usage

__all__ = [
    "SECTION_SCORERS",
    "SECTION_TITLES",
    "CostStats",
    "LatencyStats",
    "Rate",
    "RetrievalAttribution",
    "ScorerStats",
    "Section",
    "Summary",
    "SummaryBuilder",
    "summarize",
]

SECTION_SCORERS: dict[str, tuple[str, ...]] = {
    "correctness": ("exact_match", "state_match"),
    "tool_use": (
        "tool_selection",
        "tool_arguments_valid",
        "tool_execution",
        "trajectory_order",
        "step_efficiency",
        "redundant_calls",
    ),
    "faithfulness": ("tool_faithfulness", "retrieval_recall"),
    "safety": ("avoids_forbidden_text",),
}
"""The built-in scorers of each scoring section, in the order they are shown."""

SECTION_TITLES: dict[str, str] = {
    "correctness": "Correctness",
    "tool_use": "Tool use, step by step",
    "faithfulness": "Faithfulness and retrieval",
    "safety": "Safety",
    "latency": "Latency",
    "cost": "Cost",
    "retries": "Retries by reason",
    "failures": "Failures by cause",
    "judge": "LLM judge rubrics",
    "other": "Other scores",
    "simulation": "Simulated conversations",
    "reliability": "Reliability over trials",
}
"""Every section's title, in the order sections come."""


class SummaryBuilder:
    """Accumulates a Summary one trial at a time."""

    def __init__(
        self,
        scorer_order: Iterable[str] = (),
        prices: PriceTable | None = None,
        passing: Collection[str] | None = None,
        *,
        trials_per_case: int | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self._order = list(scorer_order)
        self._redactor = redactor
        self._given_prices = prices
        self._passing = None if passing is None else sorted(passing)
        self._passing_set = None if passing is None else frozenset(passing)
        self._per_case = trials_per_case
        self._reliability = ReliabilityBuilder(passing, trials_per_case=trials_per_case)
        # Only in a `partial` builder: every float added to a sum, so `merge` can add them
        # again in the order one builder would have (see `FloatLog`).
        self._log: FloatLog | None = None
        self._sum_logs: dict[str, array[float]] = {}  # `_log.of(("sum", name))` by name
        self._agent_usd: float | None = None
        self._judge_usd: float | None = None
        self._agent_unpriced: set[str] = set()  # the agent's models without a price
        self._judge_unpriced: set[str] = set()  # the judge's (the simulator's: `_simulation`)
        self._without_usage: set[str] = set()  # models called with no token usage recorded
        self._judge_without_usage: set[str] = set()  # the same, of the judge's calls
        self._judge_usage = Usage()
        self._judge_retries: Counter[str] = Counter()
        self._judged: set[str] = set()
        self._trials = 0
        self._failed = 0
        self._retried = 0
        self._verdicts = 0
        self._passes = 0
        self._sums: dict[str, float] = {}
        # Per scorer: [scored, passed, skipped, errors], plain integers on the hot path.
        self._counts: dict[str, list[int]] = {name: [0, 0, 0, 0] for name in self._order}
        # Per reported scorer: [measured trials, sum of values, unit].
        self._reported: dict[str, list[Any]] = {}
        self._failures: Counter[str] = Counter()
        self._gaps: Counter[str] = Counter()
        self._gaps_why: dict[str, str] = {}
        self._retries: Counter[str] = Counter()
        # Flat arrays, not lists of float objects: a third of the memory on a large run.
        self._latency = array("d")
        self._working = array("d")
        # The agent's tokens as plain integers (input, output, cached, reasoning), not a `Usage`
        # summed per trial: `Usage.__add__` builds a pydantic object each time (~1.5 us a
        # trial of W5's ~100); the `Usage` is made once, in `build`.
        self._tokens = [0, 0, 0, 0]
        self._cross: Counter[tuple[bool, bool]] = Counter()
        self._wrong_unchecked = 0
        self._simulation = SimulationBuilder()

    def add(self, result: TrialResult) -> None:
        """Count one (case, trial) result."""
        trial = result.trial
        self._trials += 1
        if trial.failure is not None:
            self._failed += 1
            self._failures[trial.failure.cause.value] += 1
        for field, why in trial.not_recorded.items():
            self._gaps[field] += 1
            self._gaps_why.setdefault(field, why)
        if trial.retries:
            self._retried += 1
            self._retries.update(trial.retries)
        if trial.latency_s is not None:
            self._latency.append(trial.latency_s)
        self._simulation.add(trial)
        if trial.working_latency_s is not None:
            self._working.append(trial.working_latency_s)
        usage = trial.usage
        tokens = self._tokens
        tokens[0] += usage.input_tokens
        tokens[1] += usage.output_tokens
        tokens[2] += usage.cached_tokens
        tokens[3] += usage.reasoning_tokens
        for call in trial.model_calls:
            if not call.usage_recorded:  # its cost is unknown: never added as free
                self._without_usage.add(call.model)
                continue
            cost = self._prices().cost(call.model, call.usage)
            if cost is None:
                self._agent_unpriced.add(call.model)
            else:
                self._agent_usd = (self._agent_usd or 0.0) + cost
                if self._log is not None:
                    self._log.add(("agent", ""), cost)
        # The trial's verdict (`statistics.trial_passed`) is worked out in this same pass over
        # its scores, not in a second one: the summary was ~15 % of a rescore worker's time a
        # trial and ~12 % of a live run's main thread (issue 21). This pass and the
        # reliability's plain counts (`ReliabilityBuilder._add_single`) took `add` from 12.6-18
        # to 9.9-11.8 us on W5's trials (3 interleaved pairs, a loaded 2-core host).
        passing = self._passing_set
        failed = trial.failure is not None
        applied = unknown = False
        log = self._log
        all_counts = self._counts
        for name, score in result.scores.items():
            if score.judge is not None:
                self._judged.add(name)
                self._add_judge(score)
            counts = all_counts.get(name)
            if counts is None:
                counts = all_counts[name] = [0, 0, 0, 0]
            value = score.value
            if score.error is not None:
                counts[3] += 1
                if passing is None or name in passing:
                    failed = True
            elif value is None:
                details = score.details
                measured = reported_value(score) if REPORTED in details else None
                if measured is None:
                    counts[2] += 1
                else:
                    entry = self._reported.setdefault(name, [0, 0.0, reported_unit(score)])
                    entry[0] += 1
                    entry[1] += measured
                    if log is not None:
                        log.add(("reported", name), measured)
                if not unknown and (passing is None or name in passing):
                    unknown = NOT_RECORDED in details  # `is_not_recorded`
            else:
                counts[0] += 1
                self._sums[name] = self._sums.get(name, 0.0) + value
                if log is not None:
                    # The score sums' logs by name: no key tuple made a score (~1.5 us a W5
                    # trial in a rescore worker's partial builder).
                    logged = self._sum_logs.get(name)
                    if logged is None:
                        logged = self._sum_logs[name] = log.of(("sum", name))
                    logged.append(value)
                if score.passed:
                    counts[1] += 1
                    applied = applied or passing is None or name in passing
                elif passing is None or name in passing:
                    failed = True
        self._add_cross(result)
        verdict = False if failed else (True if applied and not unknown else None)
        if verdict is not None:
            self._verdicts += 1
            self._passes += verdict
        self._reliability.add_judged(result, verdict)

    def partial(self) -> SummaryBuilder:
        """An empty builder with this one's settings, whose trials `merge` adds to this one
        as if they had been added here: a part of the run summarised elsewhere (a rescore's
        worker process), merged in the run's order."""
        part = SummaryBuilder(
            self._order,
            self._given_prices,
            self._passing,
            trials_per_case=self._per_case,
        )
        part._log = FloatLog()
        part._simulation.log_costs()
        return part

    def merge(self, part: SummaryBuilder) -> None:
        """Count the trials of `part` (from `partial`), added after those of this builder:
        the summary is then exactly the one this builder would give had it been given them
        itself, in that order (first reasons, names by first appearance, the flaky cases'
        order, and float sums to the last bit, added again one by one from `part`'s log)."""
        if part._log is None:
            raise ValueError("only a builder made by `partial` can be merged")
        self._trials += part._trials
        self._failed += part._failed
        self._retried += part._retried
        self._verdicts += part._verdicts
        self._passes += part._passes
        self._failures.update(part._failures)
        self._gaps.update(part._gaps)
        for field, why in part._gaps_why.items():
            self._gaps_why.setdefault(field, why)
        self._retries.update(part._retries)
        self._latency.extend(part._latency)
        self._working.extend(part._working)
        self._tokens = [
            mine + theirs for mine, theirs in zip(self._tokens, part._tokens, strict=True)
        ]
        self._agent_unpriced |= part._agent_unpriced
        self._judge_unpriced |= part._judge_unpriced
        self._without_usage |= part._without_usage
        self._judge_without_usage |= part._judge_without_usage
        self._judged |= part._judged
        self._judge_usage = self._judge_usage + part._judge_usage
        self._judge_retries.update(part._judge_retries)
        for name, counts in part._counts.items():
            mine = self._counts.setdefault(name, [0, 0, 0, 0])
            for i, n in enumerate(counts):
                mine[i] += n
        for name, (measured, _total, unit) in part._reported.items():
            self._reported.setdefault(name, [0, 0.0, unit])[0] += measured
        for (kind, name), values in part._log.items():
            if kind == "agent":
                self._agent_usd = part._log.added(self._agent_usd, values)
            elif kind == "judge":
                self._judge_usd = part._log.added(self._judge_usd, values)
            elif kind == "sum":
                self._sums[name] = part._log.added(self._sums.get(name, 0.0), values)
            else:
                entry = self._reported[name]
                entry[1] = part._log.added(entry[1], values)
        self._cross.update(part._cross)
        self._wrong_unchecked += part._wrong_unchecked
        self._simulation.merge(part._simulation)
        self._reliability.merge(part._reliability)
        if self._log is not None:
            self._log.extend(part._log)

    def _prices(self) -> PriceTable:
        # The shipped table is read only when a trial made a model call to price.
        return PriceTable.default() if self._given_prices is None else self._given_prices

    def _add_cross(self, result: TrialResult) -> None:
        answer = result.scores.get("exact_match")
        if answer is None or not answer.applied:
            return
        recall = result.scores.get("retrieval_recall")
        if recall is None or not recall.applied:
            if not answer.passed:
                self._wrong_unchecked += 1
            return
        self._cross[(bool(answer.passed), recall.value == 1.0)] += 1

    def _add_judge(self, score: Score) -> None:
        assert score.judge is not None
        if score.usage is not None:
            self._judge_usage = self._judge_usage + score.usage
        self._judge_retries.update(score.judge.retries)
        if not score.judge.usage_recorded:  # its cost is unknown: never added as free
            self._judge_without_usage.add(score.judge.judge.partition(":")[2])
        elif score.judge.cost_usd is not None:
            self._judge_usd = (self._judge_usd or 0.0) + score.judge.cost_usd
            if self._log is not None:
                self._log.add(("judge", ""), score.judge.cost_usd)
        elif score.usage is not None and score.usage.total_tokens:
            self._judge_unpriced.add(score.judge.judge.partition(":")[2])

    def _scorer_stats(self) -> dict[str, ScorerStats]:
        scorers: dict[str, ScorerStats] = {}
        for name, (scored, passed, skipped, errors) in self._counts.items():
            measured, total, unit = self._reported.get(name, (0, 0.0, None))
            scorers[name] = ScorerStats(
                reported=measured,
                reported_mean=total / measured if measured else None,
                unit=unit,
                mean=self._sums.get(name, 0.0) / scored if scored else None,
                pass_rate=passed / scored if scored else None,
                interval=rate_interval(passed, scored),
                scored=scored,
                passed=passed,
                skipped=skipped,
                errors=errors,
            )
        return scorers

    def _attribution(self) -> RetrievalAttribution | None:
        total = sum(self._cross.values())
        if not total:
            return None
        wrong_all = self._cross[(False, True)]
        wrong_missed = self._cross[(False, False)]
        wrong = wrong_all + wrong_missed
        return RetrievalAttribution(
            trials=total,
            correct_all_found=self._cross[(True, True)],
            correct_missed=self._cross[(True, False)],
            wrong_all_found=wrong_all,
            wrong_missed=wrong_missed,
            search_missed=Rate.of(wrong_missed, wrong),
            model_had_all=Rate.of(wrong_all, wrong),
            wrong_unchecked=self._wrong_unchecked,
        )

    def _cost(self, scorers: dict[str, ScorerStats], redactor: Redactor) -> CostStats:
        agent, judge, user = self._agent_usd, self._judge_usd, self._simulation.cost_usd
        priced = [usd for usd in (agent, judge, user) if usd is not None]
        total = sum(priced) if priced else None
        correct_by = next(
            (
                name
                for name in ("exact_match", "correctness")
                if scorers.get(name, ScorerStats()).scored
            ),
            None,
        )
        correct = scorers[correct_by].passed if correct_by else 0

        def per(value: float | None) -> float | None:
            return value / correct if value is not None and correct else None

        return CostStats(
            agent_usd=agent,
            judge_usd=judge,
            total_usd=total,
            correct_by=correct_by,
            correct_answers=correct,
            agent_per_correct_usd=per(agent),
            judge_per_correct_usd=per(judge),
            simulator_usd=user,
            simulator_per_correct_usd=per(user),
            total_per_correct_usd=per(total),
            unpriced_models=sorted(
                {
                    redactor.redact_text(model)
                    for model in self._agent_unpriced
                    | self._judge_unpriced
                    | self._simulation.unpriced_models
                }
            ),
            agent_unpriced_models=sorted(
                {redactor.redact_text(model) for model in self._agent_unpriced}
            ),
            models_without_usage=sorted(
                {redactor.redact_text(model) for model in self._without_usage}
            ),
            judge_models_without_usage=sorted(
                {redactor.redact_text(model) for model in self._judge_without_usage}
            ),
        )

    def _sections(self, summary: Summary) -> list[Section]:
        scored = [name for name, s in summary.scorers.items() if s.scored or s.errors or s.reported]
        builtin = {name for names in SECTION_SCORERS.values() for name in names}
        judge = [n for n in scored if n not in builtin and (n in RUBRICS or n in self._judged)]
        other = [n for n in scored if n not in builtin and n not in judge]
        judge.sort(key=lambda n: (RUBRICS.index(n) if n in RUBRICS else len(RUBRICS), n))
        cost = summary.cost
        present = {
            **{key: [n for n in names if n in scored] for key, names in SECTION_SCORERS.items()},
            "latency": summary.latency.count > 0,
            "cost": cost.total_usd is not None
            or bool(cost.unpriced_models)
            or bool(cost.models_without_usage)
            or bool(cost.judge_models_without_usage)
            or bool(summary.simulation is not None and summary.simulation.models_without_usage)
            or summary.usage.total_tokens > 0
            or summary.judge_usage.total_tokens > 0
            or (summary.simulation is not None and summary.simulation.usage.total_tokens > 0),
            "retries": bool(summary.retries or summary.judge_retries),
            "failures": bool(summary.failures),
            "judge": judge,
            "other": other,
            "simulation": summary.simulation is not None,
            "reliability": summary.reliability is not None,
        }
        sections = []
        for key, title in SECTION_TITLES.items():
            applies = present[key]
            if applies:
                names = applies if isinstance(applies, list) else []
                sections.append(Section(key=key, title=title, scorers=names))
        return sections

    def build(self) -> Summary:
        """The summary of everything added so far, secrets redacted (see the module docs)."""
        redactor = self._redactor if self._redactor is not None else Redactor.from_environment()
        scorers = self._scorer_stats()
        reliability = self._reliability.build()
        summary = Summary(
            trials=self._trials,
            failed_trials=self._failed,
            failed=Rate.of(self._failed, self._trials),
            passed=Rate.of(self._passes, self._verdicts),
            passing=self._passing,
            scorers=scorers,
            attribution=self._attribution(),
            failures=dict(self._failures.most_common()),
            failure_rates={
                cause: Rate.of(n, self._trials) for cause, n in self._failures.most_common()
            },
            retries=_redacted_counts(self._retries, redactor),
            retried_trials=Rate.of(self._retried, self._trials),
            latency=LatencyStats.of(self._latency),
            working_latency=LatencyStats.of(self._working),
            usage=Usage(
                input_tokens=self._tokens[0],
                output_tokens=self._tokens[1],
                cached_tokens=self._tokens[2],
                reasoning_tokens=self._tokens[3],
            ),
            judge_usage=self._judge_usage,
            judge_retries=_redacted_counts(self._judge_retries, redactor),
            cost=self._cost(scorers, redactor),
            simulation=self._simulation.build(redactor),
            reliability=_redacted_reliability(reliability, redactor)
            if reliability.trials > 1
            else None,
            not_recorded={field: Rate.of(n, self._trials) for field, n in self._gaps.items()},
            not_recorded_why={
                field: redactor.redact_text(why) for field, why in self._gaps_why.items()
            },
        )
        summary.sections = self._sections(summary)
        return summary


def _redacted_reliability(reliability: Reliability, redactor: Redactor) -> Reliability:
    """`reliability` with secrets redacted from the flaky cases' ids, as the store keeps them.

    Not a whole-model `redact_model`: a reason or a name that is itself secret-looking (a retry
    reason `api_key`) would have its count masked, and the summary would no longer validate.
    """
    flaky = [
        case.model_copy(update={"case_id": redactor.redact_text(case.case_id)})
        for case in reliability.flaky
    ]
    return reliability.model_copy(update={"flaky": flaky})


def _redacted_counts(counts: Counter[str], redactor: Redactor) -> dict[str, int]:
    """Counts by reason, most common first, with secrets redacted from the reasons: reasons
    that differ only by a secret are one reason, their counts summed."""
    merged: Counter[str] = Counter()
    for reason, count in counts.items():
        merged[redactor.redact_text(reason)] += count
    return dict(merged.most_common())


def summarize(
    results: Iterable[TrialResult],
    scorer_order: Iterable[str] = (),
    prices: PriceTable | None = None,
    passing: Collection[str] | None = None,
) -> Summary:
    """The summary of a sequence of results; `passing` names the scorers that decide whether
    a trial passes (default: every scorer that applied)."""
    builder = SummaryBuilder(scorer_order, prices, passing)
    for result in results:
        builder.add(result)
    return builder.build()
