"""The run summary in the terminal (rich): what each number is, and what went wrong."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agenteval.report.summary import LatencyStats, ScorerStats, Summary
from agenteval.run import RunInfo, TrialResult

__all__ = ["SCORER_MEANINGS", "print_failing", "print_summary"]

SCORER_MEANINGS = {
    "exact_match": "answer equals the expected one (case, accents, final period forgiven)",
    "tool_selection": "called every needed tool, as often as needed",
    "tool_arguments_valid": "every call named a real tool with valid arguments",
    "tool_execution": "every call with valid arguments ran without error",
    "trajectory_order": "expected tools called in the expected order",
    "step_efficiency": "calls needed / calls made (at most 1)",
    "redundant_calls": "no repeat of a call that already worked",
    "tool_faithfulness": "numbers and text in the answer come from tool results",
    "retrieval_recall": "share of relevant documents that a search returned",
    "avoids_forbidden_text": "the answer says none of the forbidden phrases",
}

RUBRIC_MEANINGS = {
    "correctness": "judge: same answer as expected, whatever the wording?",
    "groundedness": "judge: every claim supported by the tool results?",
    "answer_relevance": "judge: does it address the question asked?",
    "context_relevance": "judge: do the retrieved sources contain what's needed?",
}


def _usd(value: float | None) -> str:
    if value is None:
        return "—"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def _scorer_table(title: str, scorers: dict[str, ScorerStats], explain: bool) -> Table:
    table = Table(title=title, title_justify="left", expand=False)
    table.add_column("scorer", no_wrap=True)
    table.add_column("mean", justify="right")
    table.add_column("pass rate", justify="right")
    table.add_column("scored", justify="right")
    table.add_column("skipped", justify="right")
    table.add_column("errors", justify="right")
    if explain:
        table.add_column("what it measures", style="dim", no_wrap=True)
    for name, stats in scorers.items():
        rate = stats.pass_rate
        style = "" if rate is None else "green" if rate == 1 else "yellow" if rate >= 0.5 else "red"
        cells: list[str | Text] = [
            name,
            _num(stats.mean),
            Text(_pct(rate), style=style),
            str(stats.scored),
            str(stats.skipped),
            Text(str(stats.errors), style="red" if stats.errors else ""),
        ]
        if explain:
            cells.append(SCORER_MEANINGS.get(name, "your own scorer"))
        table.add_row(*cells)
    return table


def _latency_table(summary: Summary) -> Table:
    table = Table(title="Latency per trial", title_justify="left")
    table.add_column("")
    table.add_column("p50", justify="right")
    table.add_column("p95", justify="right")
    table.add_column("max", justify="right")
    rows: list[tuple[str, LatencyStats]] = [
        ("total (what a user waits)", summary.latency),
        ("excluding waits (retries, backoff)", summary.working_latency),
    ]
    for label, stats in rows:
        table.add_row(label, _seconds(stats.p50), _seconds(stats.p95), _seconds(stats.max))
    return table


def _counts(title: str, counts: dict[str, int], empty: str) -> Text:
    text = Text(f"{title}: ", style="bold")
    if not counts:
        return text.append(empty, style="dim")
    return text.append(", ".join(f"{name} {n}" for name, n in counts.items()))


def print_summary(summary: Summary, info: RunInfo, console: Console | None = None) -> None:
    """Print the run's summary: scores, failures by cause, retries by reason, latency, tokens."""
    console = console or Console()
    completed = summary.trials - summary.failed_trials
    console.print(
        Text.assemble(
            ("run ", "dim"),
            (info.run_id, "bold cyan"),
            f"  ·  {summary.trials} trials, {completed} completed, ",
            (f"{summary.failed_trials} failed", "red" if summary.failed_trials else ""),
        )
    )
    # The meaning of each scorer fits beside it on a wide terminal, else goes below the table.
    explain = console.width >= 130
    builtin = {n: s for n, s in summary.scorers.items() if n in SCORER_MEANINGS}
    rubrics = {n: s for n, s in summary.scorers.items() if n in RUBRIC_MEANINGS}
    other = {
        n: s
        for n, s in summary.scorers.items()
        if n not in SCORER_MEANINGS and n not in RUBRIC_MEANINGS
    }
    if builtin:
        console.print(_scorer_table("Scores", builtin, explain))
    if rubrics:
        console.print(_scorer_table("LLM judge rubrics", rubrics, explain))
    if other:
        console.print(_scorer_table("Other scores", other, explain=False))
    console.print(
        Text(
            "mean and pass rate are over the trials a scorer applied to; skipped = did not apply "
            "(no score, never a misleading 0); errors = the scorer itself failed",
            style="dim",
        )
    )
    if not explain:
        meanings = {**SCORER_MEANINGS, **RUBRIC_MEANINGS}
        for name in [*builtin, *rubrics]:
            console.print(Text.assemble((f"  {name}", "bold"), (f": {meanings[name]}", "dim")))
    usage = summary.usage
    console.print()
    console.print(_counts("Failures by cause", summary.failures, "none"))
    console.print(_counts("Retries by reason", summary.retries, "none"))
    console.print(
        Text.assemble(
            ("Agent tokens: ", "bold"), f"{usage.input_tokens:,} in, {usage.output_tokens:,} out"
        )
    )
    judged = summary.judge_usage
    if rubrics or judged.total_tokens:
        console.print(
            Text.assemble(
                ("Judge tokens: ", "bold"),
                f"{judged.input_tokens:,} in, {judged.output_tokens:,} out",
            )
        )
        console.print(_counts("Judge retries by reason", summary.judge_retries, "none"))
    cost = summary.cost
    console.print(
        Text.assemble(
            ("Cost: ", "bold"), f"agent {_usd(cost.agent_usd)}, judge {_usd(cost.judge_usd)}"
        )
    )
    if cost.unpriced_models:
        console.print(
            Text(
                "no price for " + ", ".join(cost.unpriced_models) + ": add them under `prices:` "
                "in agenteval.yaml",
                style="yellow",
            )
        )
    console.print(_latency_table(summary))


def print_failing(results: Iterable[TrialResult], console: Console | None = None) -> None:
    """Print each trial that failed or has a failing score, with the reasons."""
    console = console or Console()
    for result in results:
        trial = result.trial
        failing = {
            name: score
            for name, score in result.scores.items()
            if score.passed is False or score.error is not None
        }
        if trial.failure is None and not failing:
            continue
        line = Text.assemble((result.case.id, "bold"), (f" #{trial.trial}", "dim"))
        if trial.failure is not None:
            line.append(f"  {trial.failure.cause.value}: {trial.failure.message}", style="red")
        console.print(line)
        for name, score in failing.items():
            why = score.error or score.reason or ""
            console.print(Text.assemble(("   ✗ ", "red"), (name, ""), (f"  {why}", "dim")))
