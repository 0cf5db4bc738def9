"""Building a `Comparison`: from two runs' results (`compare_results`) or from two stored runs
(`compare_runs`), and writing it as JSON."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from pathlib import Path

from agenteval.pricing import PriceTable
from agenteval.records import MissingTrials, RunInfo, TrialResult
from agenteval.report.compare.matching import RunTally, case_changes, coverage, run_side
from agenteval.report.compare.model import Comparison, MetricChange
from agenteval.report.compare.paired import compare_scorer
from agenteval.report.statistics import TRIAL, ReliabilityBuilder, check_passing
from agenteval.report.summary import Summary, SummaryBuilder
from agenteval.store import RunStore

__all__ = ["compare_results", "compare_runs", "write_comparison_json"]


def _per_trial(total: float | None, summary: Summary) -> float | None:
    if total is None:
        return None
    return total / summary.trials if summary.trials else None


def _agent_cost(summary: Summary) -> float | None:
    cost = summary.cost.agent_usd
    if summary.cost.models_without_usage or summary.cost.agent_unpriced_models:
        return None  # some calls' cost is unknown: a partial total would read as a saving
    if cost is None and summary.usage.total_tokens == 0:
        cost = 0.0  # no model call was recorded: nothing to pay for
    return _per_trial(cost, summary)


def _judge_cost(summary: Summary) -> float | None:
    if summary.cost.judge_models_without_usage:
        return None  # some judge calls' cost is unknown: a partial total would read as a saving
    return _per_trial(summary.cost.judge_usd, summary)


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
    sides: list[RunTally] = []
    for results in (base_results, candidate_results):
        tally = RunTally(
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
    failures, fixes = case_changes(names, base, cand)
    base_side = run_side(base_info, base, base_missing)
    cand_side = run_side(candidate_info, cand, candidate_missing)
    bs, cs = base_side.summary, cand_side.summary
    return Comparison(
        base=base_side,
        candidate=cand_side,
        passing=None if chosen is None else sorted(chosen),
        shared_cases=len(shared),
        only_in_base=[c for c in base.cases if c not in cand.cases],
        only_in_candidate=[c for c in cand.cases if c not in base.cases],
        changed_cases=[c for c in shared if base.fingerprints[c] != cand.fingerprints[c]],
        coverage=coverage(base, cand),
        trial=compare_scorer(TRIAL, shared, base, cand),
        scorers=[compare_scorer(name, shared, base, cand) for name in names],
        new_failures=failures,
        new_fixes=fixes,
        agent_cost_per_case=MetricChange(base=_agent_cost(bs), candidate=_agent_cost(cs)),
        judge_cost_per_case=MetricChange(base=_judge_cost(bs), candidate=_judge_cost(cs)),
        unpriced_models=sorted(set(bs.cost.unpriced_models) | set(cs.cost.unpriced_models)),
        models_without_usage=sorted(
            set(bs.cost.models_without_usage)
            | set(cs.cost.models_without_usage)
            | set(bs.cost.judge_models_without_usage)
            | set(cs.cost.judge_models_without_usage)
        ),
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
