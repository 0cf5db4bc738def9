"""`compare` on two real stored runs: per-scorer changes, tests, case changes, cost, latency."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agenteval
from agenteval import EvalCase
from agenteval.report.compare import (
    Comparison,
    compare_runs,
    comparison_markdown,
    print_comparison,
    write_comparison_json,
)
from agenteval.report.statistics import TRIAL, mcnemar, paired_difference
from agenteval.store import RunStore

CAPITALS = {
    "France": "Paris",
    "Spain": "Madrid",
    "Italy": "Rome",
    "Peru": "Lima",
    "Chad": "N'Djamena",
    "Cuba": "Havana",
    "Fiji": "Suva",
    "Laos": "Vientiane",
}
KNOWN_BY_BASE = {"France", "Spain", "Italy", "Peru"}
KNOWN_BY_CANDIDATE = {"Spain", "Italy", "Peru", "Chad", "Cuba", "Fiji", "Laos"}  # France lost


@agenteval.tool
def capital_of(country: str) -> dict[str, str]:
    """The capital of a country."""
    return {"country": country, "capital": CAPITALS[country]}


def country(question: str) -> str:
    return question.removeprefix("Capital of ").rstrip("?")


def base_agent(question: str) -> str:
    name = country(question)
    capital = str(capital_of(name)["capital"])
    return capital if name in KNOWN_BY_BASE else "I don't know"


def candidate_agent(question: str) -> str:
    name = country(question)
    capital = str(capital_of(name)["capital"])
    if name in ("Fiji", "Laos"):
        capital_of(name)  # a wasted call: step_efficiency 0.5
    if name == "Cuba":
        return f"{capital}, and the booking is free"  # wrong, and says forbidden text
    return capital if name in KNOWN_BY_CANDIDATE else "I don't know"


def cases(extra: bool = False) -> list[EvalCase]:
    out = [
        EvalCase(
            id=name.lower(),
            input=f"Capital of {name}?",
            expected_output=capital,
            expected_tools=["capital_of"],
            max_tool_calls=1,
            must_not_contain=["booking is free"],
        )
        for name, capital in CAPITALS.items()
    ]
    if extra:
        out.append(EvalCase(id="new-one", input="Capital of Peru?", expected_output="Lima"))
    return out


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


def two_runs(store: Path, *, trials: int = 1, extra: bool = False) -> Comparison:
    base = agenteval.evaluate(base_agent, cases(), trials=trials, store=store)
    candidate = agenteval.evaluate(candidate_agent, cases(extra), trials=trials, store=store)
    with RunStore(store) as opened:
        return compare_runs(opened, base.run_id, candidate.run_id)


def test_exact_match_change_with_mcnemar_and_its_interval(store: Path) -> None:
    comparison = two_runs(store)
    assert comparison.shared_cases == 8
    exact = comparison.scorer("exact_match")
    assert exact is not None and exact.pass_rate is not None
    assert exact.binary and exact.mean is None
    change = exact.pass_rate
    assert (change.base, change.candidate) == (0.5, 0.75)
    assert (change.regressed, change.improved) == (1, 3)  # France lost; Chad, Fiji, Laos won
    assert change.test == "exact McNemar"
    assert change.p_value == mcnemar(1, 3) == 2 * (1 + 4) / 16
    assert not change.significant
    base = [1.0 if c in KNOWN_BY_BASE else 0.0 for c in CAPITALS]
    candidate = [1.0 if c in KNOWN_BY_CANDIDATE - {"Cuba"} else 0.0 for c in CAPITALS]
    assert change.change == paired_difference(base, candidate)
    assert change.change.estimate == pytest.approx(0.25)


def test_a_non_binary_scorer_gets_a_mean_test(store: Path) -> None:
    comparison = two_runs(store)
    efficiency = comparison.scorer("step_efficiency")
    assert efficiency is not None and not efficiency.binary
    assert efficiency.cases == 8
    assert efficiency.mean is not None
    assert efficiency.mean.test == "exact Wilcoxon signed-rank"
    assert efficiency.mean.regressed == 2  # Fiji and Laos took two calls for one
    assert efficiency.mean.candidate < efficiency.mean.base
    assert efficiency.mean.p_value == pytest.approx(0.5)  # 2 of 2 down: 2 · 1/4


def test_new_failures_and_fixes_case_by_case(store: Path) -> None:
    comparison = two_runs(store)
    failures = {(c.case_id, c.scorer) for c in comparison.new_failures}
    fixes = {(c.case_id, c.scorer) for c in comparison.new_fixes}
    assert ("france", "exact_match") in failures
    assert ("cuba", "avoids_forbidden_text") in failures
    assert {("chad", "exact_match"), ("fiji", "exact_match")} <= fixes
    assert not any(scorer == "tool_selection" for _, scorer in failures)
    cuba = next(c for c in comparison.new_failures if c.scorer == "avoids_forbidden_text")
    assert (cuba.base_failed, cuba.base_judged) == (0, 1)
    assert (cuba.candidate_failed, cuba.candidate_judged) == (1, 1)
    assert "booking is free" in (cuba.reason or "")
    france = next(c for c in comparison.new_failures if c.case_id == "france")
    assert "I don't know" in (france.reason or "")


def test_several_trials_compare_per_case_rates_with_the_sign_test(store: Path) -> None:
    comparison = two_runs(store, trials=3)
    exact = comparison.scorer("exact_match")
    assert exact is not None and exact.pass_rate is not None
    assert exact.cases == 8
    assert exact.pass_rate.test == "exact sign test over cases"
    assert exact.pass_rate.p_value == mcnemar(1, 3)
    assert comparison.candidate.reliability.trials == 3
    assert comparison.trial.name == TRIAL


def test_cases_in_one_run_only_and_changed_cases(store: Path) -> None:
    comparison = two_runs(store, extra=True)
    assert comparison.only_in_candidate == ["new-one"]
    assert comparison.only_in_base == []
    assert comparison.shared_cases == 8
    exact = comparison.scorer("exact_match")
    assert exact is not None and exact.cases == 8
    # The same ids with other content: listed, so nobody reads a changed case as a regression.
    base = agenteval.evaluate(base_agent, cases(), store=store)
    changed = cases()
    changed[0] = changed[0].model_copy(update={"expected_output": "Lyon"})
    candidate = agenteval.evaluate(base_agent, changed, store=store)
    with RunStore(store) as opened:
        again = compare_runs(opened, base.run_id, candidate.run_id)
    assert again.changed_cases == ["france"]


def test_cost_and_latency_changes(store: Path) -> None:
    comparison = two_runs(store)
    assert comparison.agent_cost_per_case.base == 0.0  # no model call: nothing to pay
    assert comparison.latency_p95.base is not None
    assert comparison.latency_p95.candidate is not None
    assert comparison.latency_p95.change == pytest.approx(
        comparison.latency_p95.candidate - comparison.latency_p95.base
    )
    assert comparison.working_latency_p50.base is not None


def test_markdown_terminal_and_json(store: Path, tmp_path: Path) -> None:
    from rich.console import Console

    comparison = two_runs(store)
    markdown = comparison_markdown(comparison)
    assert "| scorer | cases | base | candidate | change [95% CI] | p | |" in markdown
    assert "| `exact_match` | 8 | 50.0% | 75.0% | +25.0 pts [" in markdown
    assert "`step_efficiency` (mean)" in markdown
    assert "<details><summary>New failures (" in markdown
    assert "cuba · avoids_forbidden_text: 1/1 passed → 0/1 passed" in markdown
    console = Console(record=True, width=120)
    print_comparison(comparison, console)
    text = console.export_text()
    assert "exact_match" in text and "New fixes:" in text and "latency p95" in text
    path = tmp_path / "compare.json"
    write_comparison_json(path, comparison)
    document = json.loads(path.read_text())
    assert document["schema"] == "agenteval.compare/1"
    assert document["base"]["run_id"] == comparison.base.run_id
    assert Comparison.model_validate({k: v for k, v in document.items() if k != "schema"})


def test_the_trial_definition_follows_the_candidate_or_the_caller(store: Path) -> None:
    base = agenteval.evaluate(base_agent, cases(), store=store)
    candidate = agenteval.evaluate(candidate_agent, cases(), store=store)
    with RunStore(store) as opened:
        default = compare_runs(opened, base.run_id, candidate.run_id)
        only_exact = compare_runs(opened, base.run_id, candidate.run_id, passing=["exact_match"])
    assert default.passing is None
    assert only_exact.passing == ["exact_match"]
    assert only_exact.trial.pass_rate is not None
    assert only_exact.trial.pass_rate.candidate == 0.75
    assert default.trial.pass_rate is not None
    assert default.trial.pass_rate.candidate < 0.75  # every scorer, step_efficiency too


def test_a_case_the_base_did_not_have_fails_as_new(store: Path) -> None:
    base = agenteval.evaluate(base_agent, cases(), store=store)
    extra = EvalCase(
        id="cuba-again", input="Capital of Cuba?", must_not_contain=["booking is free"]
    )
    candidate = agenteval.evaluate(candidate_agent, [*cases(), extra], store=store)
    with RunStore(store) as opened:
        comparison = compare_runs(opened, base.run_id, candidate.run_id)
    new = {c.scorer: c for c in comparison.new_failures if c.case_id == "cuba-again"}
    forbidden = new["avoids_forbidden_text"]
    assert (forbidden.in_base, forbidden.base_judged, forbidden.candidate_failed) == (False, 0, 1)
    assert "not in the base" in comparison_markdown(comparison)
