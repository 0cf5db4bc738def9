"""The terminal summary: the sections in order, every rate with its trials and interval, and
`--verbose`'s failing trials."""

from __future__ import annotations

from rich.console import Console
from tests.report.test_summary_sections import (
    PRICES,
    judge_score,
    reliability_results,
    result,
    score,
)

from agenteval.report.failing import print_failing
from agenteval.report.summary import summarize
from agenteval.report.terminal import print_summary
from agenteval.run import RunInfo
from agenteval.trace import FailureCause


def render(results: list, width: int = 200, **kwargs: object) -> str:
    console = Console(record=True, width=width, color_system=None)
    print_summary(summarize(results, prices=PRICES, **kwargs), RunInfo(run_id="r-1"), console)  # type: ignore[arg-type]
    return console.export_text()


def full_run() -> list:
    return [
        result(
            "a",
            scores=[
                score("exact_match", 0.0),
                score("tool_selection", 1.0),
                score("tool_arguments_valid", 1.0),
                score("tool_execution", 0.0),
                score("trajectory_order", 1.0),
                score("retrieval_recall", 0.5, passed=False),
                score("avoids_forbidden_text", 1.0),
                judge_score("groundedness", 1.0, 0.002),
                score("concise", 1.0),
            ],
            retries={"rate_limited": 2},
            tokens=(1000, 50),
        ),
        result(
            "b",
            scores=[score("exact_match", 1.0), score("retrieval_recall", 1.0)],
            tokens=(800, 40),
        ),
        result("c", failure=FailureCause.TIMEOUT, latency=2.5),
    ]


def test_sections_print_in_the_seed_order() -> None:
    text = render(full_run())
    titles = [
        "Correctness",
        "Tool use, step by step",
        "Faithfulness and retrieval",
        "Safety",
        "Latency per trial",
        "Cost",
        "Retries by reason",
        "Failures by cause",
        "LLM judge rubrics",
        "Other scores",
    ]
    positions = [text.index(title) for title in titles]
    assert positions == sorted(positions)
    # The rungs of tool use, numbered and in order.
    assert text.index("1. tool_selection") < text.index("2. tool_arguments_valid")
    assert text.index("2. tool_arguments_valid") < text.index("3. tool_execution")
    assert text.index("3. tool_execution") < text.index("trajectory_order")


def test_rates_show_their_trials_and_interval() -> None:
    text = render(full_run())
    assert "95% CI" in text
    assert "Trials passing: 1 of 3 (33% [6%–79%])" in text
    assert "timeout" in text and "1 of 3" in text


def test_wrong_answers_are_split_by_retrieval() -> None:
    text = render(full_run())
    assert "the search missed a relevant document: 1 of 1 (100%" in text
    assert "the model had every document:" in text


def test_cost_agent_and_judge_apart_with_per_correct_answer() -> None:
    text = render(full_run())
    assert "agent $0.0020 · judge $0.0020 · total $0.0040" in text
    assert "Agent tokens: 1,800 in, 90 out" in text
    assert "Judge tokens: 100 in, 10 out" in text
    assert "per correct answer: $0.0040 (agent $0.0020, judge $0.0020)" in text
    assert "over 1 trials passing exact_match" in text


def test_retries_by_reason() -> None:
    text = render(full_run())
    assert "agent: rate_limited 2 · trials retried: 1 of 3" in text


def test_sections_that_do_not_apply_are_not_printed() -> None:
    text = render([result("a", scores=[score("exact_match", 1.0)])])
    assert "Correctness" in text
    for title in ("Tool use", "Safety", "Failures by cause", "Retries", "LLM judge", "Reliability"):
        assert title not in text


def test_reliability_lists_pass_at_k_and_flaky_cases() -> None:
    text = render(reliability_results())
    assert "Reliability over 4 trials per case: pass@k / pass^k" in text
    assert "a trial passes" in text
    assert "k=4" in text
    assert "flaky  3 of 4 trials passed; differing: exact_match" in text


def test_a_custom_trial_pass_definition_is_named() -> None:
    text = render(reliability_results(), passing=["concise"])
    assert "a trial passes when it did not fail and concise passed" in text
    assert "Flaky cases: none" in text


def test_verbose_lists_failing_trials_with_reasons() -> None:
    console = Console(record=True, width=200, color_system=None)
    results = [
        result("ok", scores=[score("exact_match", 1.0)]),
        result("wrong", scores=[score("exact_match", 0.0, reason="said 8 kg, expected 32 kg")]),
        result("crashed", failure=FailureCause.AGENT_ERROR),
    ]
    print_failing(results, console)
    text = console.export_text()
    assert "Failing trials" in text
    assert "wrong #0" in text and "said 8 kg, expected 32 kg" in text
    assert "crashed #0  agent_error: boom" in text
    assert "ok #0" not in text


def test_markup_in_run_data_is_printed_as_text() -> None:
    console = Console(record=True, width=200, color_system=None)
    print_failing(
        [result("[bold]x[/bold]", scores=[score("exact_match", 0.0, reason="[red]")])], console
    )
    text = console.export_text()
    assert "[bold]x[/bold]" in text and "[red]" in text
