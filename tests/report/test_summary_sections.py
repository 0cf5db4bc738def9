"""The summary's sections as seed 000 lays them out: order, presence, intervals, the retrieval
split, cost per correct answer, and reliability over trials."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agenteval import EvalCase, Score, Trial, evaluate, rescore
from agenteval.pricing import PriceTable
from agenteval.report.json_document import run_document
from agenteval.report.statistics import wilson
from agenteval.report.summary import SECTION_TITLES, summarize
from agenteval.run import RunInfo, TrialResult
from agenteval.score import JudgeRecord
from agenteval.trace import Failure, FailureCause, ModelCall, Usage

PRICES = PriceTable.default().with_overrides({"sim-1": {"input": 1.0, "output": 2.0}})


def score(name: str, value: float | None, passed: bool | None = None, **extra: Any) -> Score:
    if value is not None and passed is None:
        passed = value >= 0.5
    return Score(name=name, value=value, passed=passed, **extra)


def result(
    case_id: str,
    trial: int = 0,
    scores: list[Score] | None = None,
    *,
    failure: FailureCause | None = None,
    latency: float | None = 0.1,
    retries: dict[str, int] | None = None,
    tokens: tuple[int, int] = (0, 0),
) -> TrialResult:
    calls = (
        [ModelCall(model="sim-1", usage=Usage(input_tokens=tokens[0], output_tokens=tokens[1]))]
        if any(tokens)
        else []
    )
    return TrialResult(
        case=EvalCase(id=case_id, input=f"question {case_id}"),
        trial=Trial(
            case_id=case_id,
            trial=trial,
            output=None if failure else "answer",
            failure=Failure(cause=failure, message="boom") if failure else None,
            latency_s=latency,
            working_latency_s=None if latency is None else latency * 0.8,
            retries=retries or {},
            model_calls=calls,
        ),
        scores={s.name: s for s in scores or []},
    )


def judge_score(name: str, value: float, cost: float) -> Score:
    return score(
        name,
        value,
        judge=JudgeRecord(
            judge="openai:gpt-4o-mini", template=name, template_version=1, cost_usd=cost
        ),
        usage=Usage(input_tokens=100, output_tokens=10),
    )


def test_sections_come_in_the_seed_order_each_only_where_it_applies() -> None:
    results = [
        result(
            "a",
            scores=[
                score("exact_match", 1.0),
                score("tool_execution", 1.0),
                score("tool_selection", 0.0),
                score("redundant_calls", 1.0),
                score("retrieval_recall", 1.0),
                score("avoids_forbidden_text", 1.0),
                judge_score("groundedness", 1.0, 0.001),
                judge_score("correctness", 0.0, 0.001),
                score("concise", 1.0),
            ],
            retries={"timeout": 1},
            tokens=(1000, 100),
        ),
        result("b", failure=FailureCause.TIMEOUT, scores=[score("exact_match", None)]),
    ]
    summary = summarize(results, prices=PRICES)
    keys = [section.key for section in summary.sections]
    assert keys == [
        "correctness",
        "tool_use",
        "faithfulness",
        "safety",
        "latency",
        "cost",
        "retries",
        "failures",
        "judge",
        "other",
    ]
    assert list(SECTION_TITLES)[: len(keys)] == keys
    tool_use = summary.section("tool_use")
    assert tool_use is not None
    # The three rungs first, in rung order, then how the agent got there.
    assert tool_use.scorers == ["tool_selection", "tool_execution", "redundant_calls"]
    judge = summary.section("judge")
    assert judge is not None and judge.scorers == ["correctness", "groundedness"]
    other = summary.section("other")
    assert other is not None and other.scorers == ["concise"]


def test_sections_without_data_are_left_out() -> None:
    summary = summarize([result("a", scores=[score("concise", 1.0)], latency=None)])
    assert [s.key for s in summary.sections] == ["other"]
    assert summary.section("latency") is None
    assert summary.reliability is None
    # A scorer that applied to no trial is in `scorers` but in no section.
    summary = summarize([result("a", scores=[score("exact_match", None), score("x", 1.0)])])
    assert "exact_match" in summary.scorers
    assert summary.section("correctness") is None


def test_every_rate_has_its_trials_and_wilson_interval() -> None:
    results = [
        result(f"c{i}", scores=[score("exact_match", 1.0 if i < 7 else 0.0)]) for i in range(10)
    ]
    results.append(result("f", failure=FailureCause.AGENT_ERROR, scores=[score("exact_match", 0)]))
    summary = summarize(results)
    stats = summary.scorers["exact_match"]
    assert (stats.passed, stats.scored) == (7, 11)
    expected = wilson(7, 11)
    assert stats.interval is not None
    assert (stats.interval.low, stats.interval.high) == pytest.approx((expected.low, expected.high))
    assert summary.failed.count == 1 and summary.failed.total == 11
    rate = summary.failure_rates["agent_error"]
    assert (rate.count, rate.total) == (1, 11)
    assert rate.interval is not None and rate.interval.low < 1 / 11 < rate.interval.high
    assert summary.passed.total == 11 and summary.passed.count == 7


def test_wrong_answers_are_split_by_whether_the_search_missed_a_document() -> None:
    def trial(case: str, right: bool, recall: float | None) -> TrialResult:
        scores = [score("exact_match", 1.0 if right else 0.0)]
        if recall is not None:
            scores.append(score("retrieval_recall", recall, passed=recall == 1.0))
        return result(case, scores=scores)

    summary = summarize(
        [
            trial("missed-1", False, 0.5),
            trial("missed-2", False, 0.0),
            trial("had-all", False, 1.0),
            trial("right", True, 1.0),
            trial("right-missed", True, 0.5),
            trial("no-docs", False, None),
        ]
    )
    split = summary.attribution
    assert split is not None
    assert split.trials == 5
    assert (split.wrong_missed, split.wrong_all_found) == (2, 1)
    assert (split.correct_all_found, split.correct_missed) == (1, 1)
    assert (split.search_missed.count, split.search_missed.total) == (2, 3)
    assert (split.model_had_all.count, split.model_had_all.total) == (1, 3)
    assert split.search_missed.interval is not None
    assert split.wrong_unchecked == 1
    # No trial with both scores: no split at all.
    assert summarize([trial("x", False, None)]).attribution is None


def test_cost_total_and_per_correct_answer_agent_and_judge_apart() -> None:
    results = [
        result(
            "a",
            scores=[score("exact_match", 1.0), judge_score("correctness", 1.0, 0.01)],
            tokens=(1_000_000, 0),
        ),
        result(
            "b",
            scores=[score("exact_match", 0.0), judge_score("correctness", 0.0, 0.01)],
            tokens=(0, 500_000),
        ),
    ]
    cost = summarize(results, prices=PRICES).cost
    assert cost.agent_usd == pytest.approx(2.0)
    assert cost.judge_usd == pytest.approx(0.02)
    assert cost.total_usd == pytest.approx(2.02)
    assert cost.correct_by == "exact_match"
    assert cost.correct_answers == 1
    assert cost.total_per_correct_usd == pytest.approx(2.02)
    assert cost.agent_per_correct_usd == pytest.approx(2.0)
    assert cost.judge_per_correct_usd == pytest.approx(0.02)


def test_per_correct_answer_falls_back_to_the_correctness_rubric() -> None:
    results = [
        result("a", scores=[judge_score("correctness", 1.0, 0.5)]),
        result("b", scores=[judge_score("correctness", 1.0, 0.5)]),
        result("c", scores=[judge_score("correctness", 0.0, 0.5)]),
    ]
    cost = summarize(results).cost
    assert cost.correct_by == "correctness"
    assert cost.correct_answers == 2
    assert cost.judge_per_correct_usd == pytest.approx(0.75)
    assert cost.agent_usd is None and cost.agent_per_correct_usd is None


def test_no_correct_answer_gives_no_cost_per_correct_answer() -> None:
    cost = summarize([result("a", scores=[score("exact_match", 0.0)], tokens=(10, 10))]).cost
    assert cost.correct_by == "exact_match"
    assert cost.correct_answers == 0
    assert cost.total_per_correct_usd is None


def reliability_results() -> list[TrialResult]:
    """Case `steady` passes 4 of 4; `flaky` passes 3 of 4 (trial 2 fails exact_match)."""
    out = []
    for trial in range(4):
        out.append(result("steady", trial, [score("exact_match", 1.0), score("concise", 1.0)]))
        ok = trial != 2
        out.append(
            result("flaky", trial, [score("exact_match", 1.0 if ok else 0.0), score("concise", 1)])
        )
    return out


def test_pass_at_k_and_pass_hat_k_per_scorer_and_flaky_cases() -> None:
    summary = summarize(reliability_results())
    reliability = summary.reliability
    assert reliability is not None
    assert reliability.trials == 4
    exact = {row.k: row for row in reliability.scorers["exact_match"]}
    assert sorted(exact) == [1, 2, 3, 4]
    # The flaky case: n=4, c=3 gives pass^4 = 0 and pass@4 = 1; the steady one 1 and 1.
    assert exact[4].pass_hat_k == pytest.approx(0.5)
    assert exact[4].pass_at_k == pytest.approx(1.0)
    assert exact[1].pass_hat_k == pytest.approx((1 + 0.75) / 2)
    trial = {row.k: row for row in reliability.trial}
    assert trial[4].pass_hat_k == pytest.approx(0.5)
    assert [case.case_id for case in reliability.flaky] == ["flaky"]
    assert reliability.flaky[0].failed_trials == [2]
    assert reliability.flaky[0].scorers == ["exact_match"]
    assert summary.section("reliability") is not None
    assert [s.key for s in summary.sections][-1] == "reliability"


def test_which_scorers_define_a_passing_trial_is_configurable() -> None:
    results = reliability_results()
    by_default = summarize(results)
    assert by_default.passed.count == 7
    assert by_default.passing is None
    only_concise = summarize(results, passing=["concise"])
    assert only_concise.passing == ["concise"]
    assert only_concise.passed.count == 8
    assert only_concise.reliability is not None
    assert only_concise.reliability.flaky == []


def test_the_json_document_carries_the_sections() -> None:
    summary = summarize(reliability_results())
    document = run_document(RunInfo(trials=4), summary, [])
    sections = document["summary"]["sections"]
    assert [s["key"] for s in sections] == ["correctness", "latency", "other", "reliability"]
    exact = document["summary"]["scorers"]["exact_match"]
    assert set(exact["interval"]) >= {"low", "high"}
    assert document["summary"]["reliability"]["flaky"][0]["case_id"] == "flaky"
    assert "total_per_correct_usd" in document["summary"]["cost"]


def test_evaluate_keeps_the_passing_definition_with_the_run(tmp_path: Path) -> None:
    cases = [EvalCase(id="q", input="2+2?", expected_output="4")]

    def agent(question: str) -> str:
        return "4"

    def always_fails(case: EvalCase, trial: Trial) -> bool:
        return False

    store = tmp_path / "runs.db"
    run = evaluate(agent, cases, [always_fails], trials=2, store=store, passing=["exact_match"])
    assert run.summary.passing == ["exact_match"]
    assert run.summary.passed.count == 2
    assert run.info.settings["passing"] == ["exact_match"]
    again = rescore(run.run_id, store=store)
    assert again.summary.passing == ["exact_match"]
    assert again.summary.passed.count == 2
    by_default = evaluate(agent, cases, [always_fails], trials=2, store=store)
    assert by_default.summary.passing is None
    assert by_default.summary.passed.count == 0
