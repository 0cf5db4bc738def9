"""The run summary in the terminal (rich), section by section (the failing trials under it:
`report/failing.py`)."""

from __future__ import annotations

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from agenteval.records import RunInfo
from agenteval.report.conversations import simulation_lines
from agenteval.report.formats import format_usd, usage_missing_note
from agenteval.report.statistics import Interval, PassAtK, Reliability
from agenteval.report.summary import (
    LatencyStats,
    Rate,
    RetrievalAttribution,
    ScorerStats,
    Section,
    Summary,
)
from agenteval.scorers.recorded import FIELD_WORDS

__all__ = [
    "RUBRIC_MEANINGS",
    "SCORER_MEANINGS",
    "format_interval",
    "format_rate",
    "format_seconds",
    "format_usd",
    "print_summary",
    "rate_verdict",
]

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
    "state_match": "the final environment state holds the expected_state",
}

RUBRIC_MEANINGS = {
    "correctness": "judge: same answer as expected, whatever the wording?",
    "groundedness": "judge: every claim supported by the tool results?",
    "answer_relevance": "judge: does it address the question asked?",
    "context_relevance": "judge: do the retrieved sources contain what's needed?",
}

_RUNGS = {"tool_selection": "1. ", "tool_arguments_valid": "2. ", "tool_execution": "3. "}


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def format_seconds(value: float | None) -> str:
    """Milliseconds under a second, else seconds; a dash for none."""
    if value is None:
        return "—"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def format_interval(interval: Interval | None) -> str:
    """A 95% interval as `[lo–hi%]`."""
    if interval is None:
        return "—"
    return f"[{interval.low:.0%}–{interval.high:.0%}]"


def format_rate(rate: Rate) -> str:
    """`count of total (share [interval])`."""
    if not rate.total:
        return "none"
    return f"{rate.count} of {rate.total} ({_pct(rate.rate)} {format_interval(rate.interval)})"


def rate_verdict(rate: float | None) -> str:
    """A pass rate's verdict: `good` when every trial passed, `warn` from half, `bad` below;
    empty without a rate. The terminal's colours and the HTML report's classes (tables and
    bars alike) both come from here, so they never disagree."""
    if rate is None:
        return ""
    return "good" if rate == 1 else "warn" if rate >= 0.5 else "bad"


_VERDICT_STYLES = {"good": "green", "warn": "yellow", "bad": "red", "": ""}


def _rate_style(rate: float | None) -> str:
    return _VERDICT_STYLES[rate_verdict(rate)]


def _table(title: str) -> Table:
    """A summary table in the light frame `compare` uses: no side borders, so the text columns
    keep room at 80 columns (a terminal's default, and what rich assumes when piped)."""
    return Table(
        title=title,
        title_justify="left",
        title_style="bold",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )


def _number_columns(table: Table, *headers: str, style: str = "") -> None:
    # Numbers never wrap or shrink: a narrow terminal wraps the text columns instead.
    for header in headers:
        table.add_column(header, justify="right", no_wrap=True, style=style)


def _width(console: Console, table: Table) -> int:
    """The width the table takes with nothing wrapped (a measure on the console itself would
    stop at its width)."""
    return Measurement.get(console, console.options.update_width(100_000), table).maximum


_ROOM_TO_EXPLAIN = 30
"""Columns the meaning of a scorer needs beside it; with less, it goes below the table."""


def _scorer_rows(
    title: str, names: list[str], scorers: dict[str, ScorerStats], explain: bool
) -> Table:
    table = _table(title)
    # A scorer's name is an id: on a narrow terminal it wraps inside its cell, never cut. Beside
    # the meanings it stays on one line and only the meaning wraps.
    table.add_column("scorer", overflow="fold", no_wrap=explain)
    _number_columns(table, "mean", "pass rate")
    _number_columns(table, "95% CI", style="dim")
    _number_columns(table, "trials", "skipped", "errors")
    if explain:
        table.add_column("what it measures", style="dim")
    meanings = {**SCORER_MEANINGS, **RUBRIC_MEANINGS}
    for name in names:
        stats = scorers[name]
        measured = bool(stats.reported and not stats.scored)
        cells: list[str | Text] = [
            Text(_RUNGS.get(name, "") + name),  # a name like `x[require_order]` is not markup
            _num(stats.reported_mean if measured else stats.mean),
            Text("reported", style="dim")
            if measured
            else Text(_pct(stats.pass_rate), style=_rate_style(stats.pass_rate)),
            format_interval(stats.interval),
            str(stats.reported if measured else stats.scored),
            str(stats.skipped),
            Text(str(stats.errors), style="red" if stats.errors else ""),
        ]
        if explain:
            cells.append(meanings.get(name, "your own scorer"))
        table.add_row(*cells)
    return table


def _scorer_table(
    console: Console, title: str, names: list[str], scorers: dict[str, ScorerStats], explain: bool
) -> tuple[Table, bool]:
    """The table, and whether it explains each scorer beside it: only where the names stay on
    one line and the meaning still has room."""
    table = _scorer_rows(title, names, scorers, explain=False)
    if explain and _width(console, table) + 2 + _ROOM_TO_EXPLAIN <= console.width:
        return _scorer_rows(title, names, scorers, explain=True), True
    return table, False


def _attribution_lines(attribution: RetrievalAttribution) -> list[Text]:
    wrong = attribution.wrong_all_found + attribution.wrong_missed
    lines = [
        Text.assemble(
            ("Wrong answers, by retrieval: ", "bold"),
            f"{wrong} of {attribution.trials} trials with both exact_match and retrieval_recall",
        )
    ]
    if wrong:
        lines.append(
            Text(
                f"  the search missed a relevant document: {format_rate(attribution.search_missed)}"
            )
        )
        lines.append(
            Text(
                f"  the model had every document:         {format_rate(attribution.model_had_all)}"
            )
        )
    if attribution.wrong_unchecked:
        lines.append(
            Text(
                f"  {attribution.wrong_unchecked} more wrong answers on cases without "
                "relevant_docs (not split)",
                style="dim",
            )
        )
    return lines


def _latency_table(summary: Summary) -> Table:
    table = _table("Latency per trial")
    table.add_column("")
    _number_columns(table, "p50", "p95", "max", "trials")
    rows: list[tuple[str, LatencyStats]] = [
        ("total (what a user waits)", summary.latency),
        ("excluding waits (retries, backoff)", summary.working_latency),
    ]
    for label, stats in rows:
        table.add_row(
            label,
            format_seconds(stats.p50),
            format_seconds(stats.p95),
            format_seconds(stats.max),
            str(stats.count),
        )
    return table


def _cost_lines(summary: Summary) -> list[Text]:
    cost = summary.cost
    usage, judged, simulated = summary.usage, summary.judge_usage, summary.simulation
    # The simulator is named only in a run that had one, and then the total says it holds it.
    user = "" if simulated is None else f" · simulator {format_usd(cost.simulator_usd)}"
    per_user = (
        "" if simulated is None else f", simulator {format_usd(cost.simulator_per_correct_usd)}"
    )
    lines = [
        Text("Cost", style="bold"),
        Text(
            f"  agent {format_usd(cost.agent_usd)} · judge {format_usd(cost.judge_usd)}{user} · "
            f"total {format_usd(cost.total_usd)}"
            + ("" if simulated is None else " (the total includes the simulator)")
        ),
    ]
    if cost.correct_by is None:
        lines.append(Text("  per correct answer: — (no exact_match or correctness score)", "dim"))
    else:
        lines.append(
            Text(
                f"  per correct answer: {format_usd(cost.total_per_correct_usd)} "
                f"(agent {format_usd(cost.agent_per_correct_usd)}, judge "
                f"{format_usd(cost.judge_per_correct_usd)}{per_user}), over {cost.correct_answers} trials "
                f"passing {cost.correct_by}"
            )
        )
    lines.append(Text(f"  Agent tokens: {usage.input_tokens:,} in, {usage.output_tokens:,} out"))
    if judged.total_tokens:
        lines.append(
            Text(f"  Judge tokens: {judged.input_tokens:,} in, {judged.output_tokens:,} out")
        )
    if simulated is not None and simulated.usage.total_tokens:
        tokens = simulated.usage
        lines.append(
            Text(f"  Simulator tokens: {tokens.input_tokens:,} in, {tokens.output_tokens:,} out")
        )
    if cost.unpriced_models:
        lines.append(
            Text(
                "  no price for " + ", ".join(cost.unpriced_models) + ": add them under "
                "`prices:` in agenteval.yaml",
                style="yellow",
            )
        )
    if cost.models_without_usage:
        lines.append(Text("  " + usage_missing_note(cost.models_without_usage), style="yellow"))
    if cost.judge_models_without_usage:
        note = usage_missing_note(cost.judge_models_without_usage, who="judge ")
        lines.append(Text("  " + note, style="yellow"))
    if simulated is not None and simulated.models_without_usage:
        note = usage_missing_note(simulated.models_without_usage, who="simulator ")
        lines.append(Text("  " + note, style="yellow"))
    return lines


def _counts_line(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items())


def _retry_lines(summary: Summary) -> list[Text]:
    lines = [Text("Retries by reason", style="bold")]
    if summary.retries:
        lines.append(
            Text(
                f"  agent: {_counts_line(summary.retries)} · trials retried: "
                f"{format_rate(summary.retried_trials)}"
            )
        )
    if summary.judge_retries:
        lines.append(Text(f"  judge: {_counts_line(summary.judge_retries)}"))
    return lines


def _failure_table(summary: Summary) -> Table:
    table = _table("Failures by cause")
    table.add_column("cause", overflow="fold")
    _number_columns(table, "trials", "share")
    _number_columns(table, "95% CI", style="dim")
    for cause, rate in summary.failure_rates.items():
        table.add_row(
            Text(cause, style="red"),
            f"{rate.count} of {rate.total}",
            _pct(rate.rate),
            format_interval(rate.interval),
        )
    return table


def _pass_k_cell(rows: list[PassAtK], k: int) -> str:
    row = next((r for r in rows if r.k == k), None)
    if row is None:
        return "—"
    return f"{row.pass_at_k:.0%} / {row.pass_hat_k:.0%}"


def _reliability_table(reliability: Reliability, order: list[str], ks: list[int]) -> Table:
    table = _table(f"Reliability over {reliability.trials} trials per case: pass@k / pass^k")
    table.add_column("scorer", overflow="fold")
    _number_columns(table, *(f"k={k}" for k in ks))
    table.add_row(
        Text("a trial passes", style="bold"), *(_pass_k_cell(reliability.trial, k) for k in ks)
    )
    for name in order:
        if name in reliability.scorers:
            table.add_row(Text(name), *(_pass_k_cell(reliability.scorers[name], k) for k in ks))
    return table


_NAMES_MIN = 20
"""Columns the scorer names keep beside the k columns (longer names wrap)."""


def _shown_ks(trials: int, room: int, per_k: int) -> list[int]:
    """The k columns that fit in `room`: all of them, else k=1, k=trials and evenly spread ones
    between."""
    fit = max(2, room // per_k)
    if trials <= fit:
        return list(range(1, trials + 1))
    return sorted({round(1 + i * (trials - 1) / (fit - 1)) for i in range(fit)})


def _print_reliability(console: Console, reliability: Reliability, order: list[str]) -> None:
    every = list(range(1, reliability.trials + 1))
    full = _reliability_table(reliability, order, every)
    if _width(console, full) <= console.width:
        console.print(full)
        return
    # Too many trials for the terminal: the names keep some room (wrapping beyond it) and as
    # many k columns as fit are shown, named below when some are left out.
    rows = [reliability.trial, *(reliability.scorers[n] for n in order if n in reliability.scorers)]
    per_k = 2 + max(
        cell_len(text)
        for k in every
        for text in [f"k={k}", *(_pass_k_cell(row, k) for row in rows)]
    )
    names = [n for n in order if n in reliability.scorers]
    name_room = min(max(map(cell_len, ["a trial passes", *names])), _NAMES_MIN)
    ks = _shown_ks(reliability.trials, console.width - name_room, per_k)
    console.print(_reliability_table(reliability, order, ks))
    left_out = ", ".join(str(k) for k in every if k not in ks)
    if left_out:
        console.print(
            Text(
                f"not shown at this width: k={left_out} (the JSON and HTML reports have every k)",
                style="dim",
            )
        )


def _flaky_lines(reliability: Reliability) -> list[Text]:
    if not reliability.flaky:
        return [Text("Flaky cases: none (every case's trials agree)", style="dim")]
    lines = [Text(f"Flaky cases ({len(reliability.flaky)}):", style="bold")]
    for case in reliability.flaky:
        passed, failed = len(case.passed_trials), len(case.failed_trials)
        varying = f"; differing: {', '.join(case.scorers)}" if case.scorers else ""
        lines.append(
            Text.assemble(
                ("  ", ""),
                (case.case_id, "yellow"),
                f"  {passed} of {passed + failed} trials passed{varying}",
            )
        )
    return lines


def _passes_by(summary: Summary) -> str:
    if summary.passing is not None:
        return ", ".join(summary.passing) + " passed"
    return "every scorer that applied passed"


def _print_matching(console: Console, info: RunInfo) -> None:
    """How `agenteval score` matched recorded traces to cases, when it is worth a line: by
    order (no trace named its case), or with traces left out."""
    matching = info.settings.get("matching")
    if not isinstance(matching, dict):
        return
    said = []
    if matching.get("by") == "order":
        said.append("matched to cases by order (--match-by-order): no trace named its case")
    if matching.get("left_out"):
        said.append(f"{matching['left_out']} of {matching.get('recorded')} traces left out")
    if said:
        console.print(Text("  " + "; ".join(said), style="yellow"))


def replay_line(info: RunInfo) -> str | None:
    """The line saying which stored run's tool results a run replayed, and how; None when it
    replayed none."""
    replay = info.settings.get("replay")
    if not isinstance(replay, dict):
        return None
    order = "any order" if replay.get("match") == "any-order" else "in order"
    missed = "run for real" if replay.get("fallthrough") else "fail the trial (replay_miss)"
    return f"tool calls replayed from run {replay.get('run_id')} ({order}; calls it never made {missed})"


def print_summary(summary: Summary, info: RunInfo, console: Console | None = None) -> None:
    """Print the run's summary, section by section (only the sections that apply)."""
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
    _print_matching(console, info)
    if (replayed := replay_line(info)) is not None:
        console.print(Text("  " + replayed, style="cyan"))
    if summary.passed.total:
        console.print(
            Text.assemble(
                ("Trials passing: ", "bold"),
                format_rate(summary.passed),
                (f"  (a trial passes when it did not fail and {_passes_by(summary)})", "dim"),
            )
        )
    # The meaning of each scorer fits beside it on a wide terminal, else goes below the table.
    explain = console.width >= 150
    explained: list[str] = []
    for section in summary.sections:
        beside = _print_section(console, section, summary, explain)
        if not beside and section.key in (
            "correctness",
            "tool_use",
            "faithfulness",
            "safety",
            "judge",
        ):
            explained += section.scorers
    meanings = {**SCORER_MEANINGS, **RUBRIC_MEANINGS}
    if any(s.scorers for s in summary.sections):
        console.print(
            Text(
                "pass rates are over the trials a scorer applied to, with their 95% Wilson "
                "interval; skipped = did not apply (no score, never a misleading 0); errors = "
                "the scorer itself failed",
                style="dim",
            )
        )
    for name in explained:
        if name in meanings:
            console.print(Text.assemble((f"  {name}", "bold"), (f": {meanings[name]}", "dim")))
    reported = [n for n, s in summary.scorers.items() if s.reported and not s.scored]
    if reported:
        console.print(
            Text(
                "reported = measured, never a pass or a fail (mean per trial: "
                + "; ".join(f"{n} in {summary.scorers[n].unit or 'its unit'}" for n in reported)
                + ")",
                style="dim",
            )
        )
    idle = [
        n for n, s in summary.scorers.items() if not s.scored and not s.errors and not s.reported
    ]
    if idle:
        console.print(Text("applied to no trial: " + ", ".join(idle), style="dim"))
    for field, rate in summary.not_recorded.items():
        why = summary.not_recorded_why.get(field)
        console.print(
            Text(
                f"not scored: the traces of {rate.count} of {rate.total} trials do not record "
                f"{FIELD_WORDS.get(field, field)}{f' ({why})' if why else ''}; the scorers that "
                "read it gave those trials no score (counted as skipped; such a trial is no pass: "
                "it is left out of Trials passing unless a scorer failed it)",
                style="yellow",
            )
        )


def _print_section(console: Console, section: Section, summary: Summary, explain: bool) -> bool:
    """Print one section; whether its table explained each scorer beside it."""
    key = section.key
    beside = False
    console.print()  # the light frame has no top border: a blank line sets sections apart
    if section.scorers:
        table, beside = _scorer_table(
            console, section.title, section.scorers, summary.scorers, explain
        )
        console.print(table)
        if key == "faithfulness" and summary.attribution is not None:
            for line in _attribution_lines(summary.attribution):
                console.print(line)
    elif key == "latency":
        console.print(_latency_table(summary))
    elif key == "cost":
        for line in _cost_lines(summary):
            console.print(line)
    elif key == "simulation":
        for line in simulation_lines(summary):
            console.print(line)
    elif key == "retries":
        for line in _retry_lines(summary):
            console.print(line)
    elif key == "failures":
        console.print(_failure_table(summary))
    elif key == "reliability" and summary.reliability is not None:
        _print_reliability(console, summary.reliability, list(summary.scorers))
        for line in _flaky_lines(summary.reliability):
            console.print(line)
    return beside
