"""The statistics behind reports, `compare` and `gate`: exact where it is cheap, and small.

- `wilson(passed, n)`: the Wilson score interval of a rate (95% by default).
- `pass_at_k(n, c, k)` / `pass_hat_k(n, c, k)`: the unbiased estimators of pass@k (at least one
  of k trials passes) and pass^k (all k trials pass) for a case with `n` judged trials of which
  `c` passed; `reliability(results)` averages them over cases, per scorer and for "the trial
  passes", for k = 1..trials, and lists the flaky cases (trials that disagree).
- `trial_passed(result, passing)`: whether a trial passes, by the scorers that define it.
- `mcnemar(regressed, improved)`: the exact two-sided McNemar test (a sign test) on the
  discordant pairs.
- `wilcoxon_signed_rank(differences)`: the paired test for mean scores, exact.
- `paired_difference(base, candidate)`: the change between paired values in 0..1 with its
  interval (Bonett and Price's adjusted Wald interval for paired data).
- `holm(p_values)`: Holm's step-down adjustment for testing several scorers at once.

Everything here is pure arithmetic over counts and values (stdlib `math`, `statistics`,
exact integers); nothing reads the store.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from agenteval.errors import ConfigError
from agenteval.records import TrialResult
from agenteval.scorers.recorded import is_not_recorded
from agenteval.suggestions import meant

__all__ = [
    "TRIAL",
    "WILCOXON_EXACT_LIMIT",
    "FlakyCase",
    "Interval",
    "PassAtK",
    "Reliability",
    "ReliabilityBuilder",
    "holm",
    "mcnemar",
    "paired_difference",
    "pass_at_k",
    "pass_hat_k",
    "reliability",
    "trial_passed",
    "wilcoxon_signed_rank",
    "wilson",
]

TRIAL = "trial"
"""The name under which `Reliability` reports "the trial passes" (see `trial_passed`)."""

WILCOXON_EXACT_LIMIT = 250
"""Up to this many non-zero differences the Wilcoxon p-value is exact (a quarter of a second at
worst); above, the normal approximation with the exact tie-corrected variance is within a few
percent of it."""


class Interval(BaseModel):
    """An estimate and its confidence interval, `low <= estimate <= high`."""

    model_config = ConfigDict(frozen=True)

    estimate: float
    low: float
    high: float
    confidence: float = 0.95


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    return statistics.NormalDist().inv_cdf(0.5 + confidence / 2.0)


def _wilson_bounds(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson score bounds for a proportion `p` observed over `n` units."""
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denominator
    half = z / denominator * math.sqrt(max(p * (1.0 - p) / n + z2 / (4.0 * n * n), 0.0))
    low = 0.0 if p <= 0.0 else max(0.0, centre - half)
    high = 1.0 if p >= 1.0 else min(1.0, centre + half)
    return low, high


def wilson(passed: int, n: int, confidence: float = 0.95) -> Interval:
    """The pass rate `passed / n` with its Wilson score interval.

    Unlike the textbook `p ± z·sqrt(p(1−p)/n)` it never leaves 0..1, is not zero-width at 0% or
    100%, and keeps close to its nominal coverage for small `n`. `n` must be at least 1 (a rate
    over no trials has no interval: show it as missing).
    """
    if n < 1:
        raise ValueError(f"a rate needs at least one trial, got n={n}")
    if not 0 <= passed <= n:
        raise ValueError(f"passed must be between 0 and n={n}, got {passed}")
    low, high = _wilson_bounds(passed / n, n, _z(confidence))
    return Interval(estimate=passed / n, low=low, high=high, confidence=confidence)


# -- pass@k and pass^k -----------------------------------------------------------------------


def _check_nck(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"passed trials c must be between 0 and n={n}, got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the trials n={n}, got {k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k of one case: the chance that at least one of `k` trials drawn without
    replacement from its `n` trials (`c` of them passed) passes, `1 − C(n−c, k) / C(n, k)`.

    The unbiased estimator of the probability that k fresh trials include a pass."""
    _check_nck(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one case: the chance that all of `k` trials drawn without replacement from
    its `n` trials (`c` of them passed) pass, `C(c, k) / C(n, k)`.

    The unbiased estimator of the probability that k fresh trials all pass: what a user who
    asks k times sees. With n=4, c=3 it is 0.75, 0.5, 0.25, 0 for k = 1..4."""
    _check_nck(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def check_passing(passing: Collection[str] | None, names: Collection[str], *, field: str) -> None:
    """Refuse a name in `passing` that is none of the run's scorers (`names`): `trial_passed`
    skips the scorers not named, so an unknown name leaves no trial a verdict ("Trials passing"
    gone, a gate's trial-pass rule holding vacuously). Names shift when a second scorer of a
    taken name is scored as `NAME_2`, or loses the suffix with the built-ins off."""
    known = list(names)
    for name in sorted(passing or ()):
        if name in known:
            continue
        close = meant(name, known, {})
        raise ConfigError(
            f"no scorer named {name!r} in the run (its scorers: {', '.join(known) or 'none'})",
            field=field,
            hint=f"did you mean {close!r}?" if close else "name one of the run's scorers",
        )


def trial_passed(result: TrialResult, passing: Collection[str] | None = None) -> bool | None:
    """Whether a trial passes: it completed, and every scorer in `passing` that applied to it
    passed (by default, every scorer that applied).

    This is the user's view, so it is stricter than any one scorer: a trial that did not
    complete (`trial.failure`, whatever the cause, a timeout included) did not pass, and
    neither did one on which a defining scorer errored. None (no verdict) when the trial
    completed but none of the defining scorers applied to it, or when nothing failed it but a
    defining scorer that applies could not score it, its trace not recording what the scorer
    reads (`scorers.recorded`): nothing checked that, so it is no pass.
    """
    if result.trial.failure is not None:
        return False
    applied = unknown = False
    for name, score in result.scores.items():
        if passing is not None and name not in passing:
            continue
        if score.error is not None or (score.value is not None and not score.passed):
            return False
        applied = applied or score.value is not None
        unknown = unknown or is_not_recorded(score)
    return True if applied and not unknown else None


class PassAtK(BaseModel):
    """pass@k and pass^k for one k, averaged over the `cases` with at least k judged trials."""

    model_config = ConfigDict(frozen=True)

    k: int
    pass_at_k: float
    pass_hat_k: float
    cases: int


class FlakyCase(BaseModel):
    """A case whose trials disagree: some passed, some failed."""

    model_config = ConfigDict(frozen=True)

    case_id: str
    passed_trials: list[int]
    """The trials that passed (by the definition of "the trial passes")."""
    failed_trials: list[int]
    scorers: list[str]
    """The scorers whose verdicts differ between the case's trials."""


class Reliability(BaseModel):
    """pass@k and pass^k for k = 1..trials, per scorer and for "the trial passes" (`TRIAL`),
    and the flaky cases.

    A case counts towards k only when at least k of its trials were judged (a scorer that did
    not apply, or a trial no scorer judged, is not a judged trial), so `cases` may shrink as k
    grows. A trial a scorer errored on is one of its judged trials that did not pass, as in
    "the trial passes", `compare` and the gate: an error is no pass.
    """

    model_config = ConfigDict(frozen=True)

    trials: int
    """The most trials any case had."""
    passing: list[str] | None
    """The scorers that define "the trial passes"; None: every scorer that applied."""
    trial: list[PassAtK]
    """For "the trial passes", k = 1..trials."""
    scorers: dict[str, list[PassAtK]]
    """Per scorer, k = 1..trials (a k no case reached is left out)."""
    flaky: list[FlakyCase]


def _per_k(counts: Counter[tuple[int, int]], trials: int) -> list[PassAtK]:
    """pass@k and pass^k for k = 1..trials over cases tallied as (judged n, passed c): how
    many cases had each (n, c)."""
    pairs = [(n, c, cases) for (n, c), cases in counts.items() if n > 0]
    out: list[PassAtK] = []
    for k in range(1, trials + 1):
        eligible = [(n, c, cases) for n, c, cases in pairs if n >= k]
        if not eligible:
            break
        total = sum(cases for _, _, cases in eligible)
        out.append(
            PassAtK(
                k=k,
                pass_at_k=math.fsum(pass_at_k(n, c, k) * w for n, c, w in eligible) / total,
                pass_hat_k=math.fsum(pass_hat_k(n, c, k) * w for n, c, w in eligible) / total,
                cases=total,
            )
        )
    return out


@dataclass
class _CaseTally:
    order: int
    """When the case was first seen: flaky cases are listed in that order."""
    trials: int = 0
    passed: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    scorers: dict[str, list[int]] = field(default_factory=dict)
    """Per scorer: [judged, passed]."""


class ReliabilityBuilder:
    """Accumulates `Reliability` one result at a time.

    Given `trials_per_case`, a case is folded into counts as soon as its last trial is in, so
    memory grows with the cases in flight and the distinct (trials, passes) pairs, not with the
    run; without it, with the cases × scorers.
    """

    def __init__(
        self, passing: Collection[str] | None = None, *, trials_per_case: int | None = None
    ) -> None:
        self._passing = None if passing is None else frozenset(passing)
        self._per_case = trials_per_case
        self._open: dict[str, _CaseTally] = {}
        self._seen = 0
        self._most_trials = 0
        self._names: dict[str, None] = {}  # scorer names in order of first appearance
        self._trial_counts: Counter[tuple[int, int]] = Counter()
        self._scorer_counts: dict[str, Counter[tuple[int, int]]] = {}
        # Cases of one trial, per scorer: [judged and failed, judged and passed]. Plain
        # integers on the hot path (a rescore and a run of one trial a case), counted into
        # `_scorer_counts` as (1, 0) and (1, 1) when read (`_scorer_tallies`): 1.1 us for ten
        # scores against 2.8-4.7 for a Counter keyed by a new tuple (timeit), of a W5 trial's
        # ~150 us.
        self._single: dict[str, list[int]] = {}
        self._flaky: list[tuple[int, FlakyCase]] = []

    def add(self, result: TrialResult) -> None:
        """Count one (case, trial) result."""
        self.add_judged(result, trial_passed(result, self._passing))

    def add_judged(self, result: TrialResult, verdict: bool | None) -> None:
        """Count one (case, trial) result whose `trial_passed(result, passing)` the caller has
        worked out already."""
        case_id = result.case.id
        tally = self._open.get(case_id)
        if tally is None and self._per_case == 1:
            self._add_single(result, verdict)
            return
        if tally is None:
            tally = self._open[case_id] = _CaseTally(order=self._seen)
            self._seen += 1
        tally.trials += 1
        if verdict is True:
            tally.passed.append(result.trial.trial)
        elif verdict is False:
            tally.failed.append(result.trial.trial)
        for name, score in result.scores.items():
            # An error is a trial of the scorer that did not pass (as compare and the gate
            # count it): left out, it would make the scorer's pass^k read too good.
            if score.applied or score.error is not None:
                counts = tally.scorers.get(name)
                if counts is None:
                    counts = tally.scorers[name] = [0, 0]
                    self._names.setdefault(name)
                counts[0] += 1
                counts[1] += bool(score.applied and score.passed)
        if self._per_case is not None and tally.trials >= self._per_case:
            del self._open[case_id]
            self._most_trials = max(self._most_trials, tally.trials)
            _fold(case_id, tally, self._trial_counts, self._scorer_counts, self._flaky)

    def merge(self, part: ReliabilityBuilder) -> None:
        """Count `part`'s results after this builder's, as if added here: its cases are not
        this builder's (a rescore's parts never split a case), and come after them in the
        flaky list."""
        offset = self._seen
        for case_id, tally in part._open.items():
            tally.order += offset
            self._open[case_id] = tally
        self._seen += part._seen
        self._most_trials = max(self._most_trials, part._most_trials)
        for name in part._names:
            self._names.setdefault(name)
        self._trial_counts.update(part._trial_counts)
        for name, counts in part._scorer_counts.items():
            self._scorer_counts.setdefault(name, Counter()).update(counts)
        for name, (failed, passed) in part._single.items():
            mine = self._single.setdefault(name, [0, 0])
            mine[0] += failed
            mine[1] += passed
        self._flaky += [(order + offset, case) for order, case in part._flaky]

    def _add_single(self, result: TrialResult, verdict: bool | None) -> None:
        # A case of one trial is whole at once (and never flaky): straight into the counts.
        self._seen += 1
        self._most_trials = max(self._most_trials, 1)
        self._trial_counts[(0, 0) if verdict is None else (1, int(verdict))] += 1
        single = self._single
        for name, score in result.scores.items():
            error = score.error is not None
            if score.value is not None or error:  # `score.applied`, or an error: no pass
                counts = single.get(name)
                if counts is None:
                    counts = single[name] = [0, 0]
                    self._names.setdefault(name)
                counts[not error and bool(score.passed)] += 1

    def _scorer_tallies(self) -> dict[str, Counter[tuple[int, int]]]:
        """Per scorer, how many cases had each (judged, passed): copies of the counts, with the
        cases of one trial counted in (a pair no case had is left out, as `_per_k` needs)."""
        tallies = {name: Counter(counts) for name, counts in self._scorer_counts.items()}
        for name, (failed, passed) in self._single.items():
            tally = tallies.get(name)
            if tally is None:
                tally = tallies[name] = Counter()
            if failed:
                tally[(1, 0)] += failed
            if passed:
                tally[(1, 1)] += passed
        return tallies

    def build(self) -> Reliability:
        """The reliability of everything added so far."""
        # Cases still open (a run cut short, or no `trials_per_case`) count as they stand,
        # folded into copies so that adding more later still works.
        trial_counts = Counter(self._trial_counts)
        scorer_counts = self._scorer_tallies()
        flaky = list(self._flaky)
        trials = max([self._most_trials, *(tally.trials for tally in self._open.values())])
        for case_id, tally in self._open.items():
            _fold(case_id, tally, trial_counts, scorer_counts, flaky)
        return Reliability(
            trials=trials,
            passing=None if self._passing is None else sorted(self._passing),
            trial=_per_k(trial_counts, trials),
            scorers={name: _per_k(scorer_counts[name], trials) for name in self._names},
            flaky=[case for _, case in sorted(flaky, key=lambda item: item[0])],
        )


def _fold(
    case_id: str,
    tally: _CaseTally,
    trial_counts: Counter[tuple[int, int]],
    scorer_counts: dict[str, Counter[tuple[int, int]]],
    flaky: list[tuple[int, FlakyCase]],
) -> None:
    """Count a case's tally into the run's counts (and its flaky cases)."""
    trial_counts[(len(tally.passed) + len(tally.failed), len(tally.passed))] += 1
    for name, (judged, ok) in tally.scorers.items():
        _count(scorer_counts, name, (judged, ok))
    if tally.passed and tally.failed:
        case = FlakyCase(
            case_id=case_id,
            passed_trials=sorted(tally.passed),
            failed_trials=sorted(tally.failed),
            scorers=[name for name, (judged, ok) in tally.scorers.items() if 0 < ok < judged],
        )
        flaky.append((tally.order, case))


def _count(counts: dict[str, Counter[tuple[int, int]]], name: str, pair: tuple[int, int]) -> None:
    tally = counts.get(name)
    if tally is None:
        tally = counts[name] = Counter()
    tally[pair] += 1


def reliability(
    results: Iterable[TrialResult], passing: Collection[str] | None = None
) -> Reliability:
    """pass@k, pass^k and flaky cases of a run's results; `passing` names the scorers that
    define "the trial passes" (default: every scorer that applied)."""
    builder = ReliabilityBuilder(passing)
    for result in results:
        builder.add(result)
    return builder.build()


# -- paired tests ----------------------------------------------------------------------------


def mcnemar(regressed: int, improved: int) -> float:
    """The exact two-sided McNemar p-value for paired pass/fail outcomes.

    Only the discordant pairs carry evidence: `regressed` passed in the base and failed in the
    candidate, `improved` the other way. Under no change each discordant pair goes either way
    with probability ½, so the p-value is the two-sided binomial tail
    `min(1, 2 · Σ_{i ≤ min(b, c)} C(b + c, i) / 2^(b + c))`, computed in exact integers.
    No discordant pair: 1.0. Applied to counts of cases that got better or worse, this is the
    exact sign test.
    """
    if regressed < 0 or improved < 0:
        raise ValueError("counts of discordant pairs cannot be negative")
    n = regressed + improved
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(regressed, improved) + 1))
    return min(1.0, 2 * tail / (1 << n))


def _doubled_midranks(magnitudes: Sequence[float]) -> list[int]:
    """Twice the midranks of `magnitudes` (ties share the mean of their ranks), as integers."""
    order = sorted(range(len(magnitudes)), key=magnitudes.__getitem__)
    ranks = [0] * len(magnitudes)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and magnitudes[order[end + 1]] == magnitudes[order[start]]:
            end += 1
        doubled = (start + 1) + (end + 1)  # 2 × the mean of ranks start+1 .. end+1
        for i in range(start, end + 1):
            ranks[order[i]] = doubled
        start = end + 1
    return ranks


def _exact_lower_tail(ranks: Sequence[int], limit: int) -> int:
    """How many of the 2^m sign assignments give a (doubled) W+ of at most `limit`.

    The null distribution's generating function is Π (1 + x^r); each coefficient is packed in a
    fixed-width field of one big integer, so multiplying by (1 + x^r) is one shift and one add,
    and fields above `limit` are masked off as they appear.
    """
    width = 8 * ((len(ranks) + 8) // 8)  # bits per count: counts reach 2^m
    mask = (1 << ((limit + 1) * width)) - 1
    poly = 1
    for rank in ranks:
        poly = (poly + (poly << (rank * width))) & mask
    data = poly.to_bytes((limit + 1) * width // 8, "little")
    step = width // 8
    return sum(int.from_bytes(data[i : i + step], "little") for i in range(0, len(data), step))


def wilcoxon_signed_rank(differences: Sequence[float]) -> float:
    """The two-sided p-value of the Wilcoxon signed-rank test on paired differences
    (candidate − base).

    Why this test: scores are bounded (0..1), pile up at 0 and 1, and are far from normal, so a
    paired t-test's assumptions fail exactly where regressions hide; the sign test is exact
    but ignores how large each change was. The signed-rank test uses both the direction and the
    size (through ranks) of each change, and needs only that, under no change, base and
    candidate are exchangeable within a pair. Zero differences are dropped (Wilcoxon's
    method), tied magnitudes share their midrank, and the p-value comes from the exact
    conditional null distribution of W+ given those ranks (no normal approximation) up to
    250 non-zero differences; above that, the normal approximation with the exact
    tie-corrected variance. With differences of ±1 only it equals `mcnemar`.
    Values are rounded to 12 decimals first, so that float noise does not break ties.
    """
    rounded = [round(d, 12) for d in differences]
    nonzero = [d for d in rounded if d != 0.0]
    m = len(nonzero)
    if m == 0:
        return 1.0
    ranks = _doubled_midranks([abs(d) for d in nonzero])
    w_plus = sum(r for r, d in zip(ranks, nonzero, strict=True) if d > 0)
    total = sum(ranks)
    if m <= WILCOXON_EXACT_LIMIT:
        # The null distribution is symmetric about total/2: use the smaller tail.
        smaller = min(w_plus, total - w_plus)
        return min(1.0, 2 * _exact_lower_tail(ranks, smaller) / (1 << m))
    mean = total / 2.0
    sd = math.sqrt(sum(r * r for r in ranks) / 4.0)
    z = max(abs(w_plus - mean) - 0.5, 0.0) / sd
    return min(1.0, 2.0 * (1.0 - statistics.NormalDist().cdf(z)))


def paired_difference(
    base: Sequence[float], candidate: Sequence[float], confidence: float = 0.95
) -> Interval:
    """The change `mean(candidate) − mean(base)` over paired values in 0..1, with its interval.

    The interval is Bonett and Price's adjusted Wald interval for paired proportions
    (Statistics in Medicine, 2012), on the per-pair differences d = candidate − base: one pair
    that went up by 1 and one that went down by 1 are added, and the interval is the adjusted
    mean of d ± z · sqrt((mean of d² − (mean of d)²) / (n + 2)), clipped to −1..1. For pass/fail
    pairs that is exactly their interval (among those Fagerland, Lydersen and Laake recommend,
    2014); for values in between (per-case pass rates over several trials, mean scores) it is
    the same interval for a mean of differences bounded by ±1. Unlike intervals built from
    the two sides' own intervals (Newcombe's), it is never zero-width, not even when no pair
    changed: twenty unchanged cases still leave about ±13 points of doubt, two leave ±69.
    The interval is widened to hold the observed change where the adjustment would leave it out.
    """
    if len(base) != len(candidate):
        raise ValueError("base and candidate must be paired: the same number of values")
    n = len(base)
    if n == 0:
        raise ValueError("a difference needs at least one pair")
    if any(not 0.0 <= v <= 1.0 for v in (*base, *candidate)):
        raise ValueError("paired values must lie in 0..1")
    z = _z(confidence)
    differences = [c - b for b, c in zip(base, candidate, strict=True)]
    estimate = math.fsum(differences) / n
    # The two pseudo-pairs (+1 and −1) add nothing to the sum and 2 to the sum of squares.
    adjusted = math.fsum(differences) / (n + 2)
    second = (math.fsum(d * d for d in differences) + 2.0) / (n + 2)
    half = z * math.sqrt(max(second - adjusted * adjusted, 0.0) / (n + 2))
    return Interval(
        estimate=estimate,
        low=max(-1.0, min(adjusted - half, estimate)),
        high=min(1.0, max(adjusted + half, estimate)),
        confidence=confidence,
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    Testing several scorers at once, some p-value falls below 0.05 by chance alone; comparing
    the adjusted values with the level keeps the chance of any false alarm at that level
    (family-wise), with more power than Bonferroni and no assumption about how the tests
    depend on each other.
    """
    m = len(p_values)
    order = sorted(range(m), key=p_values.__getitem__)
    adjusted = [0.0] * m
    running = 0.0
    for position, index in enumerate(order):
        running = max(running, min(1.0, (m - position) * p_values[index]))
        adjusted[index] = running
    return adjusted
