"""The statistics against hand-computed and published values, and against brute force."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenteval import EvalCase, Score, Trial
from agenteval.report.statistics import (
    TRIAL,
    ReliabilityBuilder,
    holm,
    mcnemar,
    paired_difference,
    pass_at_k,
    pass_hat_k,
    reliability,
    trial_passed,
    wilcoxon_signed_rank,
    wilson,
)
from agenteval.run import TrialResult
from agenteval.scorers.recorded import NOT_RECORDED
from agenteval.trace import Failure, FailureCause

# -- Wilson ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("passed", "n", "low", "high"),
    [
        # Newcombe (1998), "Two-sided confidence intervals for the single proportion", method 3.
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        # By hand: centre (0.8 + 0.19207) / 1.38415 = 0.71681, half 0.22652 (z = 1.95996).
        (8, 10, 0.4902, 0.9433),
    ],
)
def test_wilson_matches_published_bounds(passed: int, n: int, low: float, high: float) -> None:
    interval = wilson(passed, n)
    assert interval.estimate == pytest.approx(passed / n)
    assert interval.low == pytest.approx(low, abs=1e-4)
    assert interval.high == pytest.approx(high, abs=1e-4)


def test_wilson_at_the_edges_and_misuse() -> None:
    assert wilson(0, 5).low == 0.0
    assert wilson(5, 5).high == 1.0
    assert wilson(5, 5).low == pytest.approx(0.5655, abs=1e-4)
    assert wilson(8, 10, confidence=0.99).low < wilson(8, 10).low
    with pytest.raises(ValueError):
        wilson(0, 0)
    with pytest.raises(ValueError):
        wilson(3, 2)


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_is_inside_0_1_and_holds_the_rate(pair: tuple[int, int]) -> None:
    passed, n = pair
    interval = wilson(passed, n)
    assert 0.0 <= interval.low <= interval.estimate <= interval.high <= 1.0
    assert interval.low < interval.high


# -- pass@k and pass^k -----------------------------------------------------------------------


def test_pass_hat_k_by_hand() -> None:
    # n=4 trials, c=3 passed: the one failing trial is in every draw of 4.
    assert pass_hat_k(4, 3, 4) == 0.0
    assert [pass_hat_k(4, 3, k) for k in (1, 2, 3)] == pytest.approx([0.75, 0.5, 0.25])
    assert pass_hat_k(5, 2, 2) == pytest.approx(1 / 10)  # C(2,2)/C(5,2)
    assert pass_hat_k(3, 3, 3) == 1.0


def test_pass_at_k_by_hand() -> None:
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 − C(3,2)/C(5,2)
    assert [pass_at_k(4, 1, k) for k in (1, 2, 3, 4)] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert pass_at_k(4, 0, 4) == 0.0
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError):
        pass_hat_k(3, 4, 1)


@given(st.integers(1, 8).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_estimators_equal_the_average_over_all_k_subsets(nc: tuple[int, int]) -> None:
    n, c = nc
    outcomes = [True] * c + [False] * (n - c)
    for k in range(1, n + 1):
        draws = list(itertools.combinations(outcomes, k))
        assert pass_at_k(n, c, k) == pytest.approx(sum(any(d) for d in draws) / len(draws))
        assert pass_hat_k(n, c, k) == pytest.approx(sum(all(d) for d in draws) / len(draws))
    assert pass_at_k(n, c, 1) == pytest.approx(c / n) == pass_hat_k(n, c, 1)


# -- "the trial passes" and reliability ------------------------------------------------------


def score(name: str, passed: bool | None, *, error: str | None = None) -> Score:
    value = None if passed is None else float(passed)
    return Score(name=name, value=value, passed=passed, error=error)


def result(
    case: str, trial: int, *scores: Score, failure: FailureCause | None = None
) -> TrialResult:
    return TrialResult(
        case=EvalCase(id=case, input="q"),
        trial=Trial(
            case_id=case,
            trial=trial,
            failure=None if failure is None else Failure(cause=failure),
        ),
        scores={s.name: s for s in scores},
    )


def test_trial_passed_rules() -> None:
    ok, bad, skipped = score("a", True), score("b", False), score("c", None)
    crashed = score("d", None, error="boom")
    assert trial_passed(result("x", 0, ok, skipped)) is True
    assert trial_passed(result("x", 0, ok, bad)) is False
    assert trial_passed(result("x", 0, ok, bad), passing={"a"}) is True
    assert trial_passed(result("x", 0, ok, crashed)) is False  # a crashed scorer is no pass
    assert trial_passed(result("x", 0, ok, crashed), passing=["a"]) is True
    assert trial_passed(result("x", 0, skipped)) is None  # nothing applied: no verdict
    assert trial_passed(result("x", 0, ok), passing={"b"}) is None
    # A scorer its trace could not feed: no verdict, unless another failed the trial.
    gap = Score(name="e", reason="not scored", details={NOT_RECORDED: ["tool_calls"]})
    assert trial_passed(result("x", 0, ok, gap)) is None
    assert trial_passed(result("x", 0, bad, gap)) is False
    assert trial_passed(result("x", 0, ok, gap), passing={"a"}) is True
    # A trial that did not complete did not pass, whatever the cause.
    timed_out = result("x", 0, skipped, failure=FailureCause.TIMEOUT)
    assert trial_passed(timed_out) is False


def test_reliability_over_cases_and_flaky_cases() -> None:
    results = [
        # "steady": 4 trials, all pass.
        *(result("steady", t, score("exact", True), score("tools", True)) for t in range(4)),
        # "shaky": 3 of 4 pass exact; tools always pass.
        *(
            result("shaky", t, score("exact", t != 2), score("tools", True), score("skip", None))
            for t in range(4)
        ),
    ]
    rel = reliability(results)
    assert rel.trials == 4
    hat = {row.k: row.pass_hat_k for row in rel.trial}
    # Mean over cases of C(c,k)/C(4,k): steady 1, shaky 0.75 / 0.5 / 0.25 / 0.
    assert hat == pytest.approx({1: 0.875, 2: 0.75, 3: 0.625, 4: 0.5})
    at = {row.k: row.pass_at_k for row in rel.scorers["exact"]}
    assert at == pytest.approx({1: 0.875, 2: 1.0, 3: 1.0, 4: 1.0})
    assert [row.pass_hat_k for row in rel.scorers["tools"]] == [1.0] * 4
    assert "skip" not in rel.scorers  # never applied: no rates at all
    assert [f.case_id for f in rel.flaky] == ["shaky"]
    assert rel.flaky[0].failed_trials == [2]
    assert rel.flaky[0].passed_trials == [0, 1, 3]
    assert rel.flaky[0].scorers == ["exact"]
    assert TRIAL == "trial"


def test_reliability_uses_the_configured_definition() -> None:
    results = [
        result("a", 0, score("exact", True), score("style", False)),
        result("a", 1, score("exact", True), score("style", True)),
        result("a", 2, score("exact", True), score("style", None)),
        # Nothing applied: no verdict, so not one of the case's judged trials.
        result("a", 3, score("exact", None), score("style", None)),
    ]
    default = reliability(results)
    assert [row.pass_hat_k for row in default.trial] == pytest.approx([2 / 3, 1 / 3, 0.0])
    assert [row.cases for row in default.trial] == [1, 1, 1]
    assert len(default.flaky) == 1
    only_exact = reliability(results, passing=["exact"])
    assert only_exact.passing == ["exact"]
    assert [row.pass_hat_k for row in only_exact.trial] == [1.0, 1.0, 1.0]
    assert only_exact.flaky == []
    # Per scorer, a trial counts where the scorer applied.
    assert [row.cases for row in default.scorers["style"]] == [1, 1]


def test_a_trial_that_did_not_complete_counts_as_failed_for_the_trial() -> None:
    results = [
        result("a", 0, score("exact", True)),
        result("a", 1, score("exact", None), failure=FailureCause.TIMEOUT),
    ]
    rel = reliability(results)
    assert [row.pass_hat_k for row in rel.trial] == [0.5, 0.0]
    # ... while the scorer itself did not judge it.
    assert [row.pass_hat_k for row in rel.scorers["exact"]] == [1.0]


def test_cases_count_only_for_the_k_their_judged_trials_reach() -> None:
    results = [
        result("three", 0, score("s", True)),
        result("three", 1, score("s", True)),
        result("three", 2, score("s", False)),
        result("one", 0, score("s", False)),
    ]
    rows = reliability(results).scorers["s"]
    assert [(r.k, r.cases) for r in rows] == [(1, 2), (2, 1), (3, 1)]
    assert rows[0].pass_hat_k == pytest.approx((2 / 3 + 0) / 2)
    assert rows[2].pass_hat_k == 0.0


def test_an_error_is_a_trial_of_the_scorer_that_did_not_pass() -> None:
    # As compare and gate count it: before, the errored trials were left out, and a scorer that
    # errored on case "b" read pass^2 = 1.0 over "a" alone.
    results = [
        result("a", 0, score("json", True)),
        result("a", 1, score("json", True)),
        result("b", 0, score("json", None, error="JSONDecodeError: x")),
        result("b", 1, score("json", True)),
    ]
    rows = reliability(results).scorers["json"]
    assert [(r.k, r.cases) for r in rows] == [(1, 2), (2, 2)]
    assert [r.pass_hat_k for r in rows] == pytest.approx([0.75, 0.5])
    # Cases of one trial (counted apart, `ReliabilityBuilder._add_single`) the same way.
    single = ReliabilityBuilder(trials_per_case=1)
    for item in (
        result("c", 0, score("json", True)),
        result("d", 0, score("json", None, error="JSONDecodeError: x")),
    ):
        single.add(item)
    assert [r.pass_hat_k for r in single.build().scorers["json"]] == [0.5]
    # A scorer that only ever errored has rows too: 0, not missing.
    only = reliability([result("e", 0, score("x", None, error="boom"))])
    assert [r.pass_hat_k for r in only.scorers["x"]] == [0.0]


# -- McNemar and Wilcoxon --------------------------------------------------------------------


def test_mcnemar_on_known_tables() -> None:
    # b = 1 regressed, c = 9 improved: 2 · (C(10,0) + C(10,1)) / 2^10 = 22/1024.
    assert mcnemar(1, 9) == 22 / 1024
    assert mcnemar(9, 1) == 22 / 1024
    # b = 2, c = 8: 2 · (1 + 10 + 45) / 1024.
    assert mcnemar(2, 8) == 112 / 1024
    assert mcnemar(3, 0) == 0.25  # 2 · 1/8
    assert mcnemar(6, 0) == 2 / 64
    assert mcnemar(4, 4) == 1.0
    assert mcnemar(0, 0) == 1.0
    with pytest.raises(ValueError):
        mcnemar(-1, 2)


def brute_force_wilcoxon(differences: list[float]) -> float:
    """Enumerate every sign assignment of the non-zero differences' midranks."""
    nonzero = [d for d in differences if d != 0]
    if not nonzero:
        return 1.0
    magnitudes = sorted(abs(d) for d in nonzero)
    rank = {
        value: sum(i + 1 for i, m in enumerate(magnitudes) if m == value) / magnitudes.count(value)
        for value in magnitudes
    }
    ranks = [rank[abs(d)] for d in nonzero]
    observed = sum(r for r, d in zip(ranks, nonzero, strict=True) if d > 0)
    total = sum(ranks)
    low = high = 0
    for signs in itertools.product((0, 1), repeat=len(ranks)):
        w = sum(r for r, s in zip(ranks, signs, strict=True) if s)
        low += w <= observed + 1e-9
        high += w >= observed - 1e-9
    del total
    return min(1.0, 2 * min(low, high) / 2 ** len(ranks))


def test_wilcoxon_by_hand() -> None:
    # Five improvements, none worse: only 1 of 32 sign patterns is as extreme, each side.
    assert wilcoxon_signed_rank([0.1, 0.2, 0.3, 0.4, 0.5]) == pytest.approx(2 / 32)
    assert wilcoxon_signed_rank([0.0, 0.0]) == 1.0
    assert wilcoxon_signed_rank([]) == 1.0
    # Differences of ±1 only: the sign test, which is McNemar.
    assert wilcoxon_signed_rank([1.0] * 9 + [-1.0] + [0.0] * 5) == mcnemar(1, 9)


@given(
    st.lists(
        st.sampled_from([-1.0, -0.5, -1 / 3, -0.25, 0.0, 0.25, 1 / 3, 0.5, 0.75, 1.0]),
        max_size=11,
    )
)
def test_wilcoxon_exact_equals_brute_force_with_ties(differences: list[float]) -> None:
    assert wilcoxon_signed_rank(differences) == pytest.approx(brute_force_wilcoxon(differences))


def test_wilcoxon_large_samples_use_the_normal_approximation() -> None:
    differences = [0.1 * ((i % 7) - 2) for i in range(600)]
    p = wilcoxon_signed_rank(differences)
    assert 0.0 <= p < 1e-6  # clearly shifted up
    assert wilcoxon_signed_rank([(-1) ** i * (i + 1) / 600 for i in range(600)]) > 0.5


# -- intervals for differences, and Holm -----------------------------------------------------


def table(a: int, b: int, c: int, d: int) -> tuple[list[float], list[float]]:
    """A paired 2×2 table as (first, second) values: a both pass, b only first, c only second."""
    first = [1.0] * a + [1.0] * b + [0.0] * c + [0.0] * d
    second = [1.0] * a + [0.0] * b + [1.0] * c + [0.0] * d
    return first, second


def test_paired_difference_is_bonett_price_by_hand() -> None:
    # 50 pairs: 36 pass in both, 12 pass only in the candidate, 2 only in the base.
    # Adjusted: up (12+1)/52 = 0.25, down (2+1)/52 = 0.05769; centre 0.19231;
    # variance 0.25 + 0.05769 − 0.19231² = 0.27071; half 1.95996 · sqrt(0.27071/52) = 0.14142.
    candidate, base = table(36, 12, 2, 0)
    interval = paired_difference(base=base, candidate=candidate)
    assert interval.estimate == pytest.approx(0.2)
    assert interval.low == pytest.approx(0.0509, abs=1e-4)
    assert interval.high == pytest.approx(0.3337, abs=1e-4)


def test_no_change_is_never_a_zero_width_interval() -> None:
    # Two unchanged pairs: centre 0, variance 2/4, half 1.95996 · sqrt(0.5/4) = 0.693.
    two = paired_difference([1.0, 0.0], [1.0, 0.0])
    assert (two.low, two.estimate, two.high) == pytest.approx((-0.693, 0.0, 0.693), abs=1e-3)
    twenty = paired_difference([1.0] * 10 + [0.0] * 10, [1.0] * 10 + [0.0] * 10)
    assert twenty.high == pytest.approx(1.95996 * 2**0.5 / 22, abs=1e-4)
    # Everything lost: the interval still holds the observed −1.
    lost = paired_difference([1.0] * 10, [0.0] * 10)
    assert lost.low == -1.0 and lost.estimate == -1.0 and lost.high < -0.5


def test_pairing_narrows_the_interval() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.5, 0.0, 1.0, 1.0] * 5
    same = paired_difference(values, values)
    assert same.estimate == 0.0
    assert same.low < 0.0 < same.high
    # The same two means, paired so the sides hardly move together: a much wider interval.
    unpaired = paired_difference(values, sorted(values))
    assert unpaired.estimate == 0.0
    assert unpaired.high - unpaired.low > 2 * (same.high - same.low)


@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=40),
)
def test_paired_difference_holds_its_estimate(pairs: list[tuple[float, float]]) -> None:
    base = [b for b, _ in pairs]
    candidate = [c for _, c in pairs]
    interval = paired_difference(base, candidate)
    assert -1.0 <= interval.low <= interval.estimate + 1e-12
    assert interval.estimate - 1e-12 <= interval.high <= 1.0
    assert interval.estimate == pytest.approx(
        math.fsum(candidate) / len(pairs) - math.fsum(base) / len(pairs)
    )


def test_paired_difference_misuse() -> None:
    with pytest.raises(ValueError):
        paired_difference([1.0], [1.0, 0.0])
    with pytest.raises(ValueError):
        paired_difference([], [])
    with pytest.raises(ValueError):
        paired_difference([2.0], [1.0])


def test_holm() -> None:
    # Sorted 0.005, 0.01, 0.03, 0.04 × 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 → running max.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([]) == []
    assert holm([0.5]) == [0.5]
    assert holm([0.6, 0.7]) == [1.0, 1.0]


def test_folding_finished_cases_gives_the_same_reliability_as_keeping_them() -> None:
    # Trials of different cases interleave, as they finish under concurrency.
    results = [
        result(case, t, score("exact", (t + len(case)) % 3 != 0), score("tools", t != 1))
        for t in range(3)
        for case in ("alpha", "beta", "gamma", "delta")
    ]
    kept = reliability(results)
    folding = ReliabilityBuilder(trials_per_case=3)
    for item in results:
        folding.add(item)
    assert folding.build() == kept
    assert [f.case_id for f in kept.flaky] == ["alpha", "beta", "gamma", "delta"]
    # A run cut short: the open cases count as they stand, and adding more still works.
    partial = ReliabilityBuilder(trials_per_case=3)
    for item in results[:6]:
        partial.add(item)
    assert partial.build() == reliability(results[:6])
    for item in results[6:]:
        partial.add(item)
    assert partial.build() == kept


def test_single_trial_cases_fold_at_once_to_the_same_reliability() -> None:
    results = [
        result(f"case-{i}", 0, score("exact", i % 3 != 0), score("skip", None)) for i in range(12)
    ] + [result("failed", 0, score("exact", None), failure=FailureCause.AGENT_ERROR)]
    folding = ReliabilityBuilder(trials_per_case=1)
    for item in results:
        folding.add(item)
    assert folding.build() == reliability(results)
