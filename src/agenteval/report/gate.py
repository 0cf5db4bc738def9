"""`agenteval gate`: whether a candidate run may replace its base, by rules, each saying how
close it came.

The rules, on a `Comparison` (the same statistics `compare` shows):
0. **Both runs finished**: a run that stopped halfway says nothing about the cases it never ran.
   A run lacking a stored trial is unfinished whatever its status says (a store written by an
   older agenteval could mark a run finished with trials lost); the rule names them.
1. **No new forbidden text.** Any case that fails `avoids_forbidden_text` in the candidate and
   did not fail it in the base blocks, whatever else improved (seed 000). A case the base did
   not have counts as not failing there.
2. **No significant regression.** A scorer whose pass rate (exact McNemar / sign test over the
   shared cases) or mean score (exact Wilcoxon signed-rank) went down with a p-value below
   `alpha`, after Holm's correction over every test the gate makes (so that ten scorers do not
   give ten chances of a false alarm), blocks. So does a scorer the base judged on shared cases
   and the candidate on none of them (it errored everywhere, its judge was down, it was not
   run): there is no test, and it cannot be checked (`ignore_regressions` lets it go).
3. **The candidate judged what the base judged.** A case is judged when a scorer gave one of
   its trials a score; a trial that failed as infrastructure (timeout, rate limit, provider or
   connection error) is left out of scoring. Rules 1 and 2 only see cases judged in both runs,
   so a candidate whose every trial timed out, or that ran 2 of the base's 10 cases, would
   pass them with nothing judged: silence is not "no regression". The rule breaks when the
   candidate judged no case the base judged (always, whatever the options), and when it judged
   fewer than `min_coverage` (default 1.0: every one) of the cases the base judged, naming the
   cases it did not run and those none of whose trials it judged, with why. `allow_subset:
   true` (or `agenteval gate --allow-subset`) leaves the cases the candidate did not run at all
   out of the count: for a candidate deliberately run on a subset. A base that judged nothing
   gives nothing to compare against, and breaks the rule too.
4. **Policy thresholds** on the candidate (a policy file, `--policy gate.yaml`): a minimum pass
   rate or pass^k per scorer (or for "the trial passes"), a maximum agent cost per case, a
   maximum p95 latency. A threshold that cannot be checked (a scorer that never scored, a cost
   with unpriced models, too few trials for pass^k) is broken, never passed by default.

The policy file (YAML; every key optional):

```yaml
alpha: 0.05                  # a regression is significant below this p-value
correction: holm             # holm, or none
min_coverage: 1.0            # the share of the cases the base judged the candidate must judge
allow_subset: false          # true: cases the candidate did not run are not counted missing
ignore_regressions: [step_efficiency]   # scorers rule 2 does not block on
trial_passes: [exact_match, tool_selection]  # what "the trial passes" means (default: the
                                             # candidate run's setting, else every scorer)
max_cost_per_case_usd: 0.02  # the agent's mean cost of answering a case once
max_p95_latency_s: 8.0       # total latency (what a user waits), p95 over trials
trial:                       # "the trial passes"
  min_pass_hat_k: {3: 0.6}   # pass^3 at least 0.6
scorers:
  exact_match:
    min_pass_rate: 0.8
    min_pass_hat_k: {3: 0.5}
  avoids_forbidden_text:
    min_pass_rate: 1.0
```
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from rich.console import Console
from rich.text import Text

from agenteval.errors import ConfigError
from agenteval.records import how_to_complete
from agenteval.report.compare import Change, Comparison, ScorerComparison
from agenteval.report.statistics import TRIAL, PassAtK, holm

__all__ = [
    "FORBIDDEN_TEXT",
    "GatePolicy",
    "GateVerdict",
    "RuleOutcome",
    "Thresholds",
    "evaluate_gate",
    "load_policy",
    "print_verdict",
]

FORBIDDEN_TEXT = "avoids_forbidden_text"
"""The scorer whose new failures always block."""


class Thresholds(BaseModel):
    """The minimums one scorer (or "the trial passes") must reach in the candidate run."""

    model_config = ConfigDict(extra="forbid")

    min_pass_rate: float | None = Field(default=None, ge=0.0, le=1.0)
    """The pass rate over the trials the scorer judged, as a share (0.8 for 80%)."""
    min_pass_hat_k: dict[int, float] = Field(default_factory=dict)
    """k → the minimum pass^k (the chance that k trials of a case all pass), e.g. {3: 0.6}."""

    @field_validator("min_pass_hat_k")
    @classmethod
    def _check_k(cls, value: dict[int, float]) -> dict[int, float]:
        for k, minimum in value.items():
            if k < 1:
                raise ValueError(f"k must be 1 or more, got {k}")
            if not 0.0 <= minimum <= 1.0:
                raise ValueError(f"pass^{k} is a share from 0 to 1, got {minimum}")
        return value


class GatePolicy(BaseModel):
    """What `agenteval gate --policy FILE` reads (see the module's docstring for an example)."""

    model_config = ConfigDict(extra="forbid")

    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    """A regression with a (corrected) p-value below this is significant."""
    correction: Literal["holm", "none"] = "holm"
    """How p-values are corrected for testing several scorers at once."""
    ignore_regressions: list[str] = Field(default_factory=list)
    """Scorers whose significant regressions do not block (their thresholds still apply)."""
    min_coverage: float = Field(default=1.0, ge=0.0, le=1.0)
    """The share of the cases the base judged that the candidate must judge too (1.0: every
    one). A case none of whose candidate trials was judged (each an infrastructure failure,
    say) counts as not judged. The candidate must judge at least one case whatever this is."""
    allow_subset: bool = False
    """Cases the candidate did not run at all are left out of `min_coverage`'s count (for a
    candidate run on a subset on purpose); they are still listed."""
    trial_passes: list[str] | None = None
    """The scorers that define "the trial passes"; default: the candidate run's own setting,
    else every scorer that applied."""
    max_cost_per_case_usd: float | None = Field(default=None, ge=0.0)
    """The candidate agent's mean cost in USD of answering one case once."""
    max_p95_latency_s: float | None = Field(default=None, gt=0.0)
    """The candidate's p95 of total latency per trial, in seconds."""
    trial: Thresholds | None = None
    """Thresholds for "the trial passes"."""
    scorers: dict[str, Thresholds] = Field(default_factory=dict)
    """Thresholds per scorer, by name."""


class RuleOutcome(BaseModel):
    """One rule of the gate: whether it held, and how close it came."""

    model_config = ConfigDict(extra="forbid")

    rule: str
    passed: bool
    detail: str
    margin: float | None = None
    """How much room was left (negative: by how much it was broken), in the rule's unit."""


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


# -- reading a policy ------------------------------------------------------------------------


def _node_line(text: str, loc: Sequence[int | str]) -> int | None:
    """The line (1-based) of the YAML node at `loc` (keys and list indexes), or of its
    nearest parent that exists."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line: int | None = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((k for k, _ in node.value if str(k.value) == str(part)), None)
            if match is None:
                break
            line = int(match.start_mark.line) + 1
            node = next(v for k, v in node.value if k is match)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
            line = int(node.start_mark.line) + 1
        else:
            break
    return line


def _fields_at(loc: Sequence[int | str]) -> list[str]:
    """The keys allowed where `loc` points (for a 'did you mean')."""
    if (len(loc) >= 3 and loc[0] == "scorers") or (len(loc) >= 2 and loc[0] == "trial"):
        return list(Thresholds.model_fields)
    return list(GatePolicy.model_fields)


def load_policy(path: str | Path) -> GatePolicy:
    """Read a gate policy file; a mistake raises `ConfigError` naming the file, line and field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            "no such policy file", file=path, hint="check the path given to --policy"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the policy: {exc.strerror}", file=path) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"the policy is not UTF-8 text (byte {exc.start})", file=path, hint="save it as UTF-8"
        ) from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(
            f"invalid YAML: {getattr(exc, 'problem', exc)}",
            file=path,
            line=mark.line + 1 if mark is not None else None,
        ) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            "a gate policy is a mapping of settings",
            file=path,
            hint="see `agenteval gate --help` and the README's gate section",
        )
    try:
        return GatePolicy.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = [part for part in error["loc"] if isinstance(part, int | str)]
        # A failed key of a dict (min_pass_hat_k's k) shows up as '[key]' in pydantic's loc.
        loc = [part for part in loc if part != "[key]"]
        field = ".".join(str(part) for part in loc)
        hint = None
        if error["type"] == "extra_forbidden":
            allowed = _fields_at(loc)
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            message = "unknown setting"
            hint = (
                f"did you mean {close[0]!r}?" if close else "known settings: " + ", ".join(allowed)
            )
        else:
            text_msg = str(error["msg"]).removeprefix("Value error, ")
            message = f"{text_msg} (got {error.get('input')!r})"
        raise ConfigError(
            message, file=path, line=_node_line(text, loc), field=field, hint=hint
        ) from exc


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
    tested: list[tuple[ScorerComparison, str, Change]] = []
    for scorer in comparison.scorers:
        if scorer.name in policy.ignore_regressions:
            continue
        for kind, change in (("pass rate", scorer.pass_rate), ("mean", scorer.mean)):
            if change is not None:
                tested.append((scorer, kind, change))
    raw = [change.p_value for _, _, change in tested]
    adjusted = holm(raw) if policy.correction == "holm" else raw
    by_scorer: dict[str, list[tuple[str, Change, float]]] = {}
    for (scorer, kind, change), p in zip(tested, adjusted, strict=True):
        by_scorer.setdefault(scorer.name, []).append((kind, change, p))
    outcomes: list[RuleOutcome] = []
    corrected = policy.correction == "holm" and len(tested) > 1
    for scorer in comparison.scorers:
        rule = f"no significant regression: {scorer.name}"
        if scorer.name in policy.ignore_regressions:
            continue
        tests = by_scorer.get(scorer.name, [])
        if not tests and scorer.unjudged_in_candidate:
            # The base judged it and the candidate nowhere (it crashed, say, or its judge was
            # down): no test, and silence is not "no regression".
            outcomes.append(
                RuleOutcome(
                    rule=rule,
                    passed=False,
                    detail=f"cannot check: the base judged {scorer.unjudged_in_candidate} "
                    "shared case(s) with it, the candidate none (did it error, or not run?); "
                    "list it under ignore_regressions if it was dropped on purpose",
                )
            )
            continue
        if not tests:
            outcomes.append(
                RuleOutcome(rule=rule, passed=True, detail="no shared case judged in both runs")
            )
            continue
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
        outcomes.append(
            RuleOutcome(
                rule=rule,
                passed=not broken,
                detail=f"{'; '.join(parts)} over {scorer.cases} cases — {verdict}",
                margin=None if worst is None else worst - policy.alpha,
            )
        )
    return outcomes


def _k_row(rows: Sequence[PassAtK], k: int) -> PassAtK | None:
    return next((row for row in rows if row.k == k), None)


def _suggest(name: str, comparison: Comparison) -> str:
    known = [s.name for s in comparison.scorers]
    close = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


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
            stats = candidate.summary.scorers.get(label)
            rate = None if stats is None else stats.pass_rate
            over = 0 if stats is None else stats.scored
            unit = "trials"
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
            margin = rate - minimum
            outcomes.append(
                RuleOutcome(
                    rule=rule,
                    passed=margin >= -1e-12,
                    detail=f"{_pct(rate)} over {over} {unit}: "
                    + (
                        f"{margin * 100:.1f} points to spare"
                        if margin >= -1e-12
                        else f"{-margin * 100:.1f} points short"
                    ),
                    margin=margin,
                )
            )
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
        margin = row.pass_hat_k - minimum
        outcomes.append(
            RuleOutcome(
                rule=rule,
                passed=margin >= -1e-12,
                detail=f"{_pct(row.pass_hat_k)} over {row.cases} cases: "
                + (
                    f"{margin * 100:.1f} points to spare"
                    if margin >= -1e-12
                    else f"{-margin * 100:.1f} points short"
                ),
                margin=margin,
            )
        )
    return outcomes


def _limit(rule: str, value: float | None, limit: float, unit: str, missing: str) -> RuleOutcome:
    if value is None:
        return RuleOutcome(rule=rule, passed=False, detail=f"cannot check: {missing}")
    margin = limit - value
    shown = f"${value:.4f}" if unit == "usd" else f"{value:.3f} s"
    share = f"{value / limit:.0%} of the limit" if limit else "the limit is 0"
    return RuleOutcome(rule=rule, passed=margin >= 0, detail=f"{shown}: {share}", margin=margin)


def evaluate_gate(comparison: Comparison, policy: GatePolicy | None = None) -> GateVerdict:
    """Apply the gate's rules to a comparison. The comparison should have been made with the
    policy's `trial_passes` (as `agenteval gate` does)."""
    policy = policy or GatePolicy()
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
        unpriced = comparison.candidate.summary.cost.unpriced_models
        cost = None if unpriced else comparison.agent_cost_per_case.candidate
        rules.append(
            _limit(
                f"agent cost per case ≤ ${policy.max_cost_per_case_usd:g}",
                cost,
                policy.max_cost_per_case_usd,
                "usd",
                "no price for " + ", ".join(unpriced) + " (add them under `prices:` in "
                "agenteval.yaml)"
                if unpriced
                else "no cost recorded",
            )
        )
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


def print_verdict(verdict: GateVerdict, console: Console | None = None) -> None:
    """Print each rule with how close it came, then the decision."""
    console = console or Console()
    for outcome in verdict.rules:
        mark = ("✓ ", "green") if outcome.passed else ("✗ ", "bold red")
        console.print(
            Text.assemble(mark, (outcome.rule, "bold"), ("  " + outcome.detail, "")),
            highlight=False,
        )
    broken = verdict.broken
    if broken:
        console.print(
            Text.assemble(
                ("gate failed", "bold red"),
                f": {len(broken)} of {len(verdict.rules)} rules broken "
                f"(candidate {verdict.candidate_run} against base {verdict.base_run})",
            ),
            highlight=False,
        )
    else:
        console.print(
            Text.assemble(
                ("gate passed", "bold green"),
                f": all {len(verdict.rules)} rules held "
                f"(candidate {verdict.candidate_run} against base {verdict.base_run})",
            ),
            highlight=False,
        )
