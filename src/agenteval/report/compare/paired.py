"""The statistics of a comparison: per scorer, a pair of values per shared case (its pass rate
and its mean score over the judged trials in each run), the change with its interval, and the
paired test (exact McNemar, or the sign test over cases with several trials, for pass rates;
exact Wilcoxon signed-rank for mean scores)."""

from __future__ import annotations

from collections.abc import Sequence

from agenteval.report.compare.matching import RunTally, Tally
from agenteval.report.compare.model import Change, ScorerComparison
from agenteval.report.statistics import (
    WILCOXON_EXACT_LIMIT,
    mcnemar,
    paired_difference,
    wilcoxon_signed_rank,
)

__all__ = ["compare_scorer", "mean_change", "paired_change", "pass_rate_change"]

Pairs = Sequence[tuple[Tally, Tally]]
"""One scorer's tallies of each shared case judged in both runs: (base, candidate)."""


def paired_change(
    base: Sequence[float], candidate: Sequence[float], *, test: str, p_value: float
) -> Change:
    """The change from `base` to `candidate` (one value per shared case each), with its
    interval, and the p-value of `test`."""
    return Change(
        base=sum(base) / len(base),
        candidate=sum(candidate) / len(candidate),
        change=paired_difference(base, candidate),
        p_value=p_value,
        test=test,
        improved=sum(c > b for b, c in zip(base, candidate, strict=True)),
        regressed=sum(c < b for b, c in zip(base, candidate, strict=True)),
    )


def pass_rate_change(pairs: Pairs) -> Change:
    """The change of the per-case pass rate (over the trials counted: scored, or errored, an
    error being no pass), tested with exact McNemar when every case has one counted trial in
    each run, else with the sign test over cases."""
    base_rates = [b.passed / b.counted for b, _ in pairs]
    cand_rates = [c.passed / c.counted for _, c in pairs]
    single = all(b.counted == 1 and c.counted == 1 for b, c in pairs)
    regressed = sum(c < b for b, c in zip(base_rates, cand_rates, strict=True))
    improved = sum(c > b for b, c in zip(base_rates, cand_rates, strict=True))
    return paired_change(
        base_rates,
        cand_rates,
        test="exact McNemar" if single else "exact sign test over cases",
        p_value=mcnemar(regressed, improved),
    )


def mean_change(pairs: Pairs) -> Change:
    """The change of the per-case mean score (over the scored trials: an error has no value to
    average), tested with the Wilcoxon signed-rank test (exact up to `WILCOXON_EXACT_LIMIT`
    nonzero differences)."""
    base_means = [b.value_sum / b.judged for b, _ in pairs]
    cand_means = [c.value_sum / c.judged for _, c in pairs]
    differences = [c - b for b, c in zip(base_means, cand_means, strict=True)]
    return paired_change(
        base_means,
        cand_means,
        test="exact Wilcoxon signed-rank"
        if sum(round(d, 12) != 0 for d in differences) <= WILCOXON_EXACT_LIMIT
        else "Wilcoxon signed-rank (normal approximation)",
        p_value=wilcoxon_signed_rank(differences),
    )


def compare_scorer(
    name: str, shared: Sequence[str], base: RunTally, cand: RunTally
) -> ScorerComparison:
    """One scorer (or `TRIAL`) over the `shared` cases it counted a trial of in both runs
    (scored, or errored: an error is no pass): the change of its pass rate and, unless every
    value was 0 or 1, of its mean score (over the cases it scored in both)."""
    pairs = [
        (base.cases[c][name], cand.cases[c][name])
        for c in shared
        if name in base.cases[c] and name in cand.cases[c]
    ]
    scored = [(b, c) for b, c in pairs if b.judged and c.judged]
    binary = all(b.binary and c.binary for b, c in scored)
    base_scored = [c for c in shared if name in base.cases[c] and base.cases[c][name].judged]
    return ScorerComparison(
        name=name,
        cases=len(pairs),
        binary=binary,
        pass_rate=pass_rate_change(pairs) if pairs else None,
        mean=None if binary or not scored else mean_change(scored),
        unjudged_in_candidate=sum(
            name not in cand.cases[c] or not cand.cases[c][name].judged for c in base_scored
        ),
        judged_in_candidate=sum(
            name in cand.cases[c] and bool(cand.cases[c][name].judged) for c in base_scored
        ),
    )
