"""The gate's coverage rule: a candidate must judge what the base judged.

The other rules compare cases judged in both runs, so a candidate that judged nothing (every
trial a timeout or a connection failure, left out of scoring) or that ran 2 of the base's 10
cases passed them all on no evidence (exit 0). Real runs, stored in a real SQLite store, read
back by `compare_runs` as `agenteval gate` reads them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import agenteval
from agenteval import EvalCase
from agenteval.report.compare import compare_runs
from agenteval.report.gate import GatePolicy, GateVerdict, evaluate_gate, load_policy
from agenteval.score import Score
from agenteval.store import RunStore
from agenteval.trace import Trial

RULE = "the candidate judged what the base judged"
CASES = [EvalCase(id=f"c{i}", input=f"q{i}", expected_output="right") for i in range(10)]


def right(question: str) -> str:
    return "right"


def backend_down(question: str) -> str:
    raise ConnectionRefusedError("the agent's own backend is gone")


async def hangs(question: str) -> str:
    await asyncio.sleep(30)
    return "right"


def down_on_c3(question: str) -> str:
    if question == "q3":
        raise ConnectionRefusedError("down for this one")
    return "right"


def run(store: Path, agent: object, cases: list[EvalCase] = CASES, **options: object) -> str:
    options.setdefault("retries", 0)
    return agenteval.evaluate(agent, cases, store=store, **options).run_id  # type: ignore[arg-type]


def gate(store: Path, base: str, candidate: str, policy: GatePolicy | None = None) -> GateVerdict:
    with RunStore(store, create=False) as opened:
        # As `agenteval gate` does: the policy says what "the trial passes" means.
        passing = None if policy is None else policy.trial_passes
        comparison = compare_runs(opened, base, candidate, passing=passing)
    return evaluate_gate(comparison, policy)


def rule(verdict: GateVerdict) -> tuple[bool, str]:
    (outcome,) = [r for r in verdict.rules if r.rule == RULE]
    return outcome.passed, outcome.detail


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


@pytest.mark.parametrize(
    ("agent", "cause", "options"),
    [(backend_down, "connection_error", {}), (hangs, "timeout", {"timeout": 0.2})],
    ids=["connection", "timeouts"],
)
def test_a_candidate_whose_every_trial_failed_as_infrastructure_is_refused(
    store: Path, agent: object, cause: str, options: dict[str, object]
) -> None:
    base = run(store, right)
    candidate = run(store, agent, concurrency=10, **options)
    verdict = gate(store, base, candidate)
    assert not verdict.passed
    held, detail = rule(verdict)
    assert not held
    assert "the candidate judged none of the 10 cases the base judged" in detail
    assert f"10 with no judged trial in the candidate: c0 (1 {cause})" in detail
    assert "and 5 more" in detail
    # Even asked to allow a subset: the candidate ran every case and judged none.
    assert not gate(store, base, candidate, GatePolicy(allow_subset=True, min_coverage=0)).passed


def test_a_candidate_run_on_a_subset_is_refused_unless_a_subset_is_meant(store: Path) -> None:
    base = run(store, right)
    candidate = run(store, right, CASES[:2])
    verdict = gate(store, base, candidate)
    assert not verdict.passed
    held, detail = rule(verdict)
    assert not held
    assert detail.startswith("2 of 10 cases the base judged (20.0%); 8 not run in the candidate")
    assert "c2, c3, c4, c5, c6 and 3 more" in detail
    assert "pass --allow-subset if a subset is meant" in detail
    # Said on purpose: the 2 cases it ran were judged, and nothing regressed on them.
    verdict = gate(store, base, candidate, GatePolicy(allow_subset=True))
    assert verdict.passed, verdict.broken
    held, detail = rule(verdict)
    assert held
    assert detail.startswith("2 of 2 cases the base judged and the candidate ran (100.0%)")
    assert "8 not run in the candidate (allowed by --allow-subset)" in detail


def test_a_subset_whose_cases_were_not_judged_is_refused_even_when_allowed(store: Path) -> None:
    base = run(store, right)
    candidate = run(store, backend_down, CASES[:2])
    verdict = gate(store, base, candidate, GatePolicy(allow_subset=True))
    held, detail = rule(verdict)
    assert not held
    assert "judged none of the 10 cases" in detail
    assert "c0 (1 connection_error), c1 (1 connection_error)" in detail


def test_one_unjudged_case_blocks_by_default_and_a_tolerance_can_allow_it(store: Path) -> None:
    base = run(store, right, trials=2)
    candidate = run(store, down_on_c3, trials=2)
    verdict = gate(store, base, candidate)
    held, detail = rule(verdict)
    assert not held
    assert detail.startswith("9 of 10 cases the base judged (90.0%); 1 with no judged trial")
    assert "c3 (2 connection_error)" in detail
    assert "rerun the candidate" in detail
    # Every other rule held: coverage alone decided.
    assert [r.rule for r in verdict.broken] == [RULE]
    verdict = gate(store, base, candidate, GatePolicy(min_coverage=0.9))
    assert verdict.passed, verdict.broken
    assert rule(verdict)[1].startswith("9 of 10 cases the base judged (90.0%, at least 90.0%")
    assert not gate(store, base, candidate, GatePolicy(min_coverage=0.95)).passed


def test_a_case_judged_on_one_of_its_trials_is_judged(store: Path) -> None:
    calls: dict[str, int] = {}

    def flaky_backend(question: str) -> str:
        calls[question] = calls.get(question, 0) + 1
        if calls[question] == 1:
            raise ConnectionRefusedError("first try lost")
        return "right"

    base = run(store, right, trials=2)
    candidate = run(store, flaky_backend, trials=2, concurrency=1)
    verdict = gate(store, base, candidate)
    assert verdict.passed, verdict.broken
    assert rule(verdict) == (True, "10 of 10 cases the base judged (100.0%)")


def test_a_candidate_whose_scorers_all_crashed_judged_nothing(store: Path) -> None:
    def matches(case: EvalCase, trial: Trial) -> Score:
        return Score(name="matches", value=float(trial.output == case.expected_output))

    def crashes(case: EvalCase, trial: Trial) -> Score:
        raise RuntimeError("scorer bug")

    base = run(store, right, scorers=[matches], builtins=False)
    candidate = run(store, right, scorers=[crashes], builtins=False)
    held, detail = rule(gate(store, base, candidate))
    assert not held
    assert "c0 (1 scorer error)" in detail


def test_a_base_that_judged_nothing_gives_nothing_to_compare_against(store: Path) -> None:
    base = run(store, backend_down)
    candidate = run(store, right)
    held, detail = rule(gate(store, base, candidate))
    assert not held
    assert f"the base run {base} judged no case: nothing to compare against" in detail


def test_the_policy_file_reads_the_coverage_settings(tmp_path: Path) -> None:
    path = tmp_path / "gate.yaml"
    path.write_text("min_coverage: 0.95\nallow_subset: true\n")
    assert load_policy(path) == GatePolicy(min_coverage=0.95, allow_subset=True)
    path.write_text("min_coverage: 95\n")
    with pytest.raises(agenteval.AgentEvalError, match="less than or equal to 1"):
        load_policy(path)


def test_a_scorer_the_candidate_judged_nowhere_cannot_pass_as_no_regression(
    store: Path,
) -> None:
    def tone(case: EvalCase, trial: Trial) -> Score:
        return Score(name="tone", value=1.0, passed=True)

    def tone_down(case: EvalCase, trial: Trial) -> Score:  # its judge was down, say
        raise ConnectionError("judge unreachable")

    tone_down.__name__ = "tone"
    base = run(store, right, scorers=[tone])
    candidate = run(store, right, scorers=[tone_down])
    verdict = gate(store, base, candidate)
    # Every case is judged (exact_match), so coverage holds; the scorer's rule does not.
    assert rule(verdict)[0] is True
    broken, trial = verdict.broken
    assert broken.rule == "no significant regression: tone"
    assert broken.detail.startswith(
        "cannot check: the base judged 10 shared case(s) with it, the candidate none"
    )
    # An error is no pass: no candidate trial passes, and "the trial passes" regressed too.
    assert trial.rule == 'no significant regression: "trial passes"'
    assert trial.detail.startswith("pass rate 100.0% → 0.0%")
    ignored = gate(store, base, candidate, GatePolicy(ignore_regressions=["tone"]))
    assert [r.rule for r in ignored.broken] == [trial.rule]
    assert "tone is ignored here, not in what a trial passing means" in ignored.broken[0].detail
    assert gate(store, base, candidate, GatePolicy(ignore_regressions=["tone", "trial"])).passed
    assert gate(
        store,
        base,
        candidate,
        GatePolicy(ignore_regressions=["tone"], trial_passes=["exact_match"]),
    ).passed
    # A scorer the base never judged is no loss: the candidate adding it passes.
    assert gate(store, candidate, base).passed
    assert gate(store, run(store, right), base).passed
