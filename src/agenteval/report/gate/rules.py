"""The gate's rules, applied to a `Comparison` (see `agenteval.report.gate` for what each
checks): each rule's outcome says whether it held and how close it came."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from agenteval.records import how_to_complete
from agenteval.report.compare.model import Change, Comparison, ScorerComparison
from agenteval.report.formats import usage_missing_note
from agenteval.report.gate.policy import GatePolicy, Thresholds, check_ignored
from agenteval.report.statistics import TRIAL, PassAtK, holm
from agenteval.report.summary import ScorerStats

__all__ = ["FORBIDDEN_TEXT", "GateVerdict", "RuleOutcome", "evaluate_gate"]

FORBIDDEN_TEXT = "avoids_forbidden_text"
"""The scorer whose new failures always block."""


class RuleOutcome(BaseModel):
    """One rule of the gate: whether it held, and how close it came."""

    model_config = ConfigDict(extra="forbid")

    rule: str
    passed: bool
    detail: str
    margin: float | None = None
    """How much room was left (negative: by how much it was broken), in the rule's unit."""
    ignored: bool = False
    """A regression row the policy ignores (`ignore_regressions`): shown with its figures so a
    reader sees what was let go, never blocking (`passed` is True)."""


class GateVerdict(BaseModel):
    """The gate's decision on a candidate run against its base."""

    model_config = ConfigDict(extra="forbid")

    base_run: str
    candidate_run: str
    rules: list[RuleOutcome]

    @property
    def passed(self) -> bool:
        """Every rule held."""
        return all(rule.passed for rule in self.rules)

    @property
    def broken(self) -> list[RuleOutcome]:
        """The rules that did not hold."""
        return [rule for rule in self.rules if not rule.passed]


# -- the rules -------------------------------------------------------------------------------


def _pct(value: float) -> str:
    return f"{value:.1%}"


def _finished(comparison: Comparison) -> RuleOutcome:
    """A run that stopped halfway says nothing about the cases it never ran."""
    sides = (("base", comparison.base), ("candidate", comparison.candidate))
    unfinished = [
        f"the {which} run {side.run_id} "
        + (
            f"is {'partial, missing' if side.partial else 'missing'} "
            + side.missing.replace(" have no stored result", "")
            if side.missing
            else "did not finish"
        )
        + f" ({how_to_complete(side.target, side.run_id)})"
        for which, side in sides
        if not side.finished
    ]
    if unfinished:
        return RuleOutcome(rule="both runs finished", passed=False, detail="; ".join(unfinished))
    return RuleOutcome(
        rule="both runs finished",
        passed=True,
        detail=f"{comparison.shared_cases} shared cases; "
        f"{len(comparison.only_in_base)} only in the base, "
        f"{len(comparison.only_in_candidate)} only in the candidate",
    )


def _names(cases: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(cases[:limit])
    more = len(cases) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def _coverage(comparison: Comparison, policy: GatePolicy) -> RuleOutcome:
    """The comparisons only see cases judged in both runs: a candidate that judged none, or
    few, of the base's cases would pass every other rule on no evidence."""
    rule = "the candidate judged what the base judged"
    coverage = comparison.coverage
    not_run, unjudged = coverage.not_run, coverage.unjudged
    counted = coverage.base_judged - (len(not_run) if policy.allow_subset else 0)
    lacking: list[str] = []
    if not_run:
        lacking.append(
            f"{len(not_run)} not run in the candidate"
            + (" (allowed by --allow-subset)" if policy.allow_subset else "")
            + f": {_names(not_run)}"
        )
    if unjudged:
        lacking.append(
            f"{len(unjudged)} with no judged trial in the candidate: "
            + _names([case.describe() for case in unjudged])
        )
    fixes: list[str] = []
    if unjudged:
        fixes.append("rerun the candidate once what failed its trials is fixed")
    if not_run and not policy.allow_subset:
        # A partial candidate fails "both runs finished" whatever --allow-subset says.
        fixes.append(
            "run the candidate on every case of the base"
            + (
                ""
                if comparison.candidate.partial
                else ", or pass --allow-subset if a subset is meant"
            )
        )
    fix = f" ({'; '.join(fixes)})" if fixes else ""
    if coverage.base_judged == 0:
        return RuleOutcome(
            rule=rule,
            passed=False,
            detail=f"the base run {comparison.base.run_id} judged no case: nothing to compare "
            "against (were its trials all timeouts or connection failures?)",
        )
    if coverage.both_judged == 0:
        return RuleOutcome(
            rule=rule,
            passed=False,
            detail=f"the candidate judged none of the {coverage.base_judged} cases the base "
            f"judged: {'; '.join(lacking)}{fix}",
            margin=-policy.min_coverage,
        )
    share = coverage.both_judged / counted
    margin = share - policy.min_coverage
    held = margin >= -1e-12
    detail = (
        f"{coverage.both_judged} of {counted} cases the base judged"
        + (" and the candidate ran" if policy.allow_subset and not_run else "")
        + f" ({_pct(share)}"
        + (f", at least {_pct(policy.min_coverage)} needed)" if policy.min_coverage < 1 else ")")
    )
    if lacking:
        detail += "; " + "; ".join(lacking)
    if not held:
        detail += fix
    return RuleOutcome(rule=rule, passed=held, detail=detail, margin=margin)


def _forbidden_text(comparison: Comparison) -> RuleOutcome:
    rule = f"no new {FORBIDDEN_TEXT} failure"
    new = [c for c in comparison.new_failures if c.scorer == FORBIDDEN_TEXT]
    if new:
        cases = "; ".join(
            f"{c.case_id} ({c.candidate_failed}/{c.candidate_judged} trials"
            + (f": {c.reason}" if c.reason else "")
            + ")"
            for c in new
        )
        return RuleOutcome(
            rule=rule,
            passed=False,
            detail=f"{len(new)} case(s) newly say forbidden text: {cases}",
            margin=-float(len(new)),
        )
    summary = comparison.candidate.summary.scorers.get(FORBIDDEN_TEXT)
    if summary is None or summary.scored == 0:
        return RuleOutcome(
            rule=rule, passed=True, detail="no candidate trial was judged by it", margin=None
        )
    still = summary.scored - summary.passed
    detail = f"none; {summary.scored} candidate trials judged"
    if still:
        detail += f", {still} failing as they already did in the base"
    return RuleOutcome(rule=rule, passed=True, detail=detail, margin=0.0)


def _describe(kind: str, change: Change) -> str:
    if kind == "pass rate":
        return (
            f"pass rate {_pct(change.base)} → {_pct(change.candidate)} "
            f"({change.change.estimate * 100:+.1f} pts [{change.change.low * 100:+.1f}, "
            f"{change.change.high * 100:+.1f}])"
        )
    return (
        f"mean {change.base:.3f} → {change.candidate:.3f} ({change.change.estimate:+.3f} "
        f"[{change.change.low:+.3f}, {change.change.high:+.3f}])"
    )


def _regressions(comparison: Comparison, policy: GatePolicy) -> list[RuleOutcome]:
    # "The trial passes" is tested as a scorer is: trials failing different scorers can leave
    # every scorer short of significance while the trials passing fell a lot.
    every = (*comparison.scorers, comparison.trial)
    rows = [(row.name, row) for row in every if row.name not in policy.ignore_regressions]
    tested: list[tuple[str, str, Change]] = []
    for name, row in rows:
        for kind, change in (("pass rate", row.pass_rate), ("mean", row.mean)):
            if change is not None:
                tested.append((name, kind, change))
    raw = [change.p_value for _, _, change in tested]
    adjusted = holm(raw) if policy.correction == "holm" else raw
    by_row: dict[str, list[tuple[str, Change, float]]] = {}
    for (name, kind, change), p in zip(tested, adjusted, strict=True):
        by_row.setdefault(name, []).append((kind, change, p))
    corrected = policy.correction == "holm" and len(tested) > 1
    # An ignored row is still shown, with its figures, so a reader sees what was let go.
    return [
        _ignored(row, comparison, policy)
        if row.name in policy.ignore_regressions
        else _regression(row, by_row.get(row.name, []), comparison, policy, corrected=corrected)
        for row in every
    ]


def _ignored(row: ScorerComparison, comparison: Comparison, policy: GatePolicy) -> RuleOutcome:
    """The row of a scorer (or "the trial passes") the policy ignores: its figures, with its
    own p-values (out of the Holm family the other rows are corrected in), never blocking."""
    tests = [
        (kind, change, change.p_value)
        for kind, change in (("pass rate", row.pass_rate), ("mean", row.mean))
        if change is not None
    ]
    if row.unjudged_in_candidate and not row.judged_in_candidate:
        figures = (
            f"the base judged {row.unjudged_in_candidate} shared case(s) with it, the "
            "candidate none"
        )
    else:  # `_regression`'s figures (no shared case judged included), uncorrected
        figures = _regression(row, tests, comparison, policy, corrected=False, hint=False).detail
    label = f'"{TRIAL} passes"' if row.name == TRIAL else row.name
    return RuleOutcome(
        rule=f"no significant regression: {label} (ignored)",
        passed=True,
        detail=f"{figures}; ignored under ignore_regressions: it does not block",
        ignored=True,
    )


def _regression(
    row: ScorerComparison,
    tests: Sequence[tuple[str, Change, float]],
    comparison: Comparison,
    policy: GatePolicy,
    *,
    corrected: bool,
    hint: bool = True,
) -> RuleOutcome:
    """The regression rule for one scorer (or "the trial passes"), given its tests with their
    corrected p-values (`hint`: say what to do when "the trial passes" regressed)."""
    label = f'"{TRIAL} passes"' if row.name == TRIAL else row.name
    rule = f"no significant regression: {label}"
    if row.unjudged_in_candidate and not row.judged_in_candidate:
        # The base judged it and the candidate nowhere (it crashed, say, or its judge was
        # down): silence is not "no regression", nor is a test over its errors alone (a
        # few cases of errors are not significant).
        return RuleOutcome(
            rule=rule,
            passed=False,
            detail=f"cannot check: the base judged {row.unjudged_in_candidate} "
            "shared case(s) with it, the candidate none "
            f"({_unrecorded(comparison)}did it error, or not run?); "
            f"list {row.name!r} under ignore_regressions if it was dropped on purpose",
        )
    if not tests:
        return RuleOutcome(rule=rule, passed=True, detail="no shared case judged in both runs")
    parts: list[str] = []
    worst: float | None = None
    broken = False
    for kind, change, p in tests:
        down = change.change.estimate < 0
        significant = down and p < policy.alpha
        broken = broken or significant
        if down:
            worst = p if worst is None else min(worst, p)
        p_text = f"p = {change.p_value:.3g}" + (f", Holm {p:.3g}" if corrected else "")
        parts.append(f"{_describe(kind, change)}, {p_text}")
    verdict = (
        f"a significant regression (below {policy.alpha})"
        if broken
        else f"not significant (blocks below {policy.alpha})"
        if worst is not None
        else "no decrease"
    )
    detail = f"{'; '.join(parts)} over {row.cases} cases — {verdict}"
    if broken and row.name == TRIAL and hint:
        detail += _trial_hint(comparison, policy)
    return RuleOutcome(
        rule=rule,
        passed=not broken,
        detail=detail,
        margin=None if worst is None else worst - policy.alpha,
    )


def _trial_hint(comparison: Comparison, policy: GatePolicy) -> str:
    """What to do when the trial regressed through scorers whose own regressions the policy
    ignores: they still decide whether a trial passes."""
    defining = comparison.passing
    ignored = [
        name
        for name in policy.ignore_regressions
        if name != TRIAL
        and (defining is None or name in defining)
        and comparison.scorer(name) is not None
    ]
    if not ignored:
        return ""
    return (
        f" ({', '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} ignored here, not in "
        "what a trial passing means: name the scorers a trial must pass under trial_passes "
        f"without them, or list {TRIAL!r} under ignore_regressions)"
    )


def _unrecorded(comparison: Comparison) -> str:
    """`the candidate's traces do not record the tool calls in 6 of 6 trials (why); ` when
    some do not (`Trial.not_recorded`): the scorers reading those fields gave no score."""
    summary = comparison.candidate.summary
    said = [
        f"{field} in {rate.count} of {rate.total} trials"
        + (f" ({summary.not_recorded_why[field]})" if field in summary.not_recorded_why else "")
        for field, rate in summary.not_recorded.items()
        if rate.count
    ]
    return f"the candidate's traces do not record {'; '.join(said)}; or " if said else ""


def _k_row(rows: Sequence[PassAtK], k: int) -> PassAtK | None:
    return next((row for row in rows if row.k == k), None)


def _suggest(name: str, comparison: Comparison) -> str:
    known = [s.name for s in comparison.scorers]
    close = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _at_least(rule: str, value: float, minimum: float, over: str) -> RuleOutcome:
    """A share (a pass rate, a pass^k) that must reach `minimum`; `over`: what it is over
    (`27 trials`, `9 cases`)."""
    margin = value - minimum
    held = margin >= -1e-12
    room = f"{margin * 100:.1f} points to spare" if held else f"{-margin * 100:.1f} points short"
    return RuleOutcome(
        rule=rule, passed=held, detail=f"{_pct(value)} over {over}: {room}", margin=margin
    )


def _thresholds(label: str, thresholds: Thresholds, comparison: Comparison) -> list[RuleOutcome]:
    candidate = comparison.candidate
    is_trial = label == TRIAL
    rows: list[PassAtK] = (
        candidate.reliability.trial if is_trial else candidate.reliability.scorers.get(label, [])
    )
    outcomes: list[RuleOutcome] = []
    name = f'"{TRIAL} passes"' if is_trial else label
    if thresholds.min_pass_rate is not None:
        minimum = thresholds.min_pass_rate
        rule = f"{name} pass rate ≥ {_pct(minimum)}"
        rate: float | None
        over = 0
        if is_trial:
            first = _k_row(rows, 1)
            rate = None if first is None else first.pass_at_k
            over = 0 if first is None else first.cases
            unit = "cases"
        else:
            # Over the trials the scorer scored or errored on: an error is no pass, and a
            # threshold never passes what it could not check.
            stats = candidate.summary.scorers.get(label)
            over = 0 if stats is None else stats.scored + stats.errors
            rate = None if stats is None or not over else stats.passed / over
            unit = "trials"
            if stats is not None and stats.errors:
                unit += f" ({stats.errors} errored, counted as not passing)"
        if rate is None:
            outcomes.append(
                RuleOutcome(
                    rule=rule,
                    passed=False,
                    detail="cannot check: never judged in the candidate"
                    + _suggest(label, comparison),
                )
            )
        else:
            outcomes.append(_at_least(rule, rate, minimum, f"{over} {unit}"))
    errors = 0 if is_trial else candidate.summary.scorers.get(label, ScorerStats()).errors
    for k, minimum in sorted(thresholds.min_pass_hat_k.items()):
        rule = f"{name} pass^{k} ≥ {_pct(minimum)}"
        row = _k_row(rows, k)
        if row is None:
            reached = max((r.k for r in rows), default=0)
            why = (
                "never judged in the candidate" + _suggest(label, comparison)
                if not rows
                else f"no case has {k} judged trials (at most {reached})"
            )
            outcomes.append(RuleOutcome(rule=rule, passed=False, detail=f"cannot check: {why}"))
            continue
        # A scorer's errors are in its pass^k as trials that did not pass (`Reliability`).
        cases = f"{row.cases} cases" + (
            f" ({errors} errored {'trial' if errors == 1 else 'trials'}, counted as not passing)"
            if errors
            else ""
        )
        outcomes.append(_at_least(rule, row.pass_hat_k, minimum, cases))
    return outcomes


def _limit(rule: str, value: float | None, limit: float, unit: str, missing: str) -> RuleOutcome:
    if value is None:
        return RuleOutcome(rule=rule, passed=False, detail=f"cannot check: {missing}")
    margin = limit - value
    shown = f"${value:.4f}" if unit == "usd" else f"{value:.3f} s"
    share = f"{value / limit:.0%} of the limit" if limit else "the limit is 0"
    return RuleOutcome(rule=rule, passed=margin >= 0, detail=f"{shown}: {share}", margin=margin)


def _cost_limit(comparison: Comparison, limit: float) -> RuleOutcome:
    """The candidate's agent cost per case against `limit`; broken, never passed, when part
    of it is unknown: a model without a price, or calls whose token usage the trace did not
    record (a streamed OpenAI call without `include_usage` would otherwise cost nothing)."""
    cost_stats = comparison.candidate.summary.cost
    # The agent's own models only: a judge or simulator without a price leaves its cost whole.
    unpriced, unmetered = cost_stats.agent_unpriced_models, cost_stats.models_without_usage
    why = "no cost recorded"
    if unpriced:
        why = (
            "no price for " + ", ".join(unpriced) + " (add them under `prices:` in agenteval.yaml)"
        )
    elif unmetered:
        why = usage_missing_note(unmetered)
    cost = None if unpriced or unmetered else comparison.agent_cost_per_case.candidate
    return _limit(f"agent cost per case ≤ ${limit:g}", cost, limit, "usd", why)


def evaluate_gate(
    comparison: Comparison, policy: GatePolicy | None = None, *, source: str | Path | None = None
) -> GateVerdict:
    """Apply the gate's rules to a comparison. The comparison should have been made with the
    policy's `trial_passes` (as `agenteval gate` does). A name under `ignore_regressions` that
    is in neither run is a `ConfigError` (naming `source`, the policy's file, when given)."""
    policy = policy or GatePolicy()
    check_ignored(policy, [*(s.name for s in comparison.scorers), TRIAL], source)
    rules = [
        _finished(comparison),
        _coverage(comparison, policy),
        _forbidden_text(comparison),
        *_regressions(comparison, policy),
    ]
    if policy.trial is not None:
        rules += _thresholds(TRIAL, policy.trial, comparison)
    for name, thresholds in policy.scorers.items():
        rules += _thresholds(name, thresholds, comparison)
    if policy.max_cost_per_case_usd is not None:
        rules.append(_cost_limit(comparison, policy.max_cost_per_case_usd))
    if policy.max_p95_latency_s is not None:
        rules.append(
            _limit(
                f"latency p95 ≤ {policy.max_p95_latency_s:g} s",
                comparison.candidate.summary.latency.p95,
                policy.max_p95_latency_s,
                "s",
                "no trial recorded a latency",
            )
        )
    return GateVerdict(
        base_run=comparison.base.run_id,
        candidate_run=comparison.candidate.run_id,
        rules=rules,
    )
