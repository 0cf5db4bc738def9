"""A `Comparison` for people: the terminal view of `agenteval compare` (`print_comparison`) and
the Markdown of a pull-request comment (`comparison_markdown`)."""

from __future__ import annotations

from rich import box
from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

from agenteval.report.compare.model import (
    CaseChange,
    Change,
    Comparison,
    MetricChange,
    ScorerComparison,
)
from agenteval.report.formats import usage_missing_note
from agenteval.report.statistics import TRIAL, Interval

__all__ = ["comparison_markdown", "print_comparison", "side_notes", "unjudged_note"]


def _pct(value: float) -> str:
    return f"{value:.0%}" if value in (0.0, 1.0) else f"{value:.1%}"


def _points(interval: Interval, unit: str = " pts") -> str:
    """A change of rates in percentage points, with its interval."""
    return (
        f"{interval.estimate * 100:+.1f}{unit} "
        f"[{interval.low * 100:+.1f}, {interval.high * 100:+.1f}]"
    )


def _score_change(interval: Interval) -> str:
    return f"{interval.estimate:+.3f} [{interval.low:+.3f}, {interval.high:+.3f}]"


def _p(value: float) -> str:
    if value < 0.001:
        return "<0.001"
    return f"{value:.3f}" if value < 0.1 else f"{value:.2f}"


def _verdict(change: Change) -> str:
    if not change.significant:
        return ""
    return "better" if change.change.estimate > 0 else "worse"


def _usd(value: float | None) -> str:
    if value is None:
        return "—"
    return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 1000:.0f} ms" if abs(value) < 1 else f"{value:.2f} s"


def _relative(metric: MetricChange) -> str:
    relative = metric.relative
    if relative is None:
        return ""
    return f"{relative:+.0%}"


def _rows(comparison: Comparison) -> list[tuple[str, ScorerComparison]]:
    rows = [(f"{TRIAL} passes", comparison.trial)]
    rows += [(s.name, s) for s in comparison.scorers]
    return rows


def _cost_rows(comparison: Comparison) -> list[tuple[str, MetricChange, str]]:
    """(label, metric, unit) for the cost and latency lines."""
    return [
        ("agent cost per case", comparison.agent_cost_per_case, "usd"),
        ("judge cost per case", comparison.judge_cost_per_case, "usd"),
        ("latency p50", comparison.latency_p50, "s"),
        ("latency p95", comparison.latency_p95, "s"),
        ("latency p50 excluding waits", comparison.working_latency_p50, "s"),
        ("latency p95 excluding waits", comparison.working_latency_p95, "s"),
    ]


def _format(value: float | None, unit: str) -> str:
    return _usd(value) if unit == "usd" else _seconds(value)


def _case_line(change: CaseChange, *, fix: bool) -> str:
    before = (
        "not in the base"
        if not change.in_base
        else f"{change.base_judged - change.base_failed}/{change.base_judged} passed"
    )
    after = f"{change.candidate_judged - change.candidate_failed}/{change.candidate_judged} passed"
    why = f" — {change.reason}" if change.reason else ""
    where = "base" if fix else "candidate"
    trial = f" ({where} trial {change.trial})" if change.trial is not None and why else ""
    return f"{change.case_id} · {change.scorer}: {before} → {after}{why}{trial}"


def side_notes(comparison: Comparison) -> list[str]:
    """A note per run that is not finished (partial, missing trials, unfinished): only its
    stored trials are compared. `agenteval compare` prints them; the report's baseline diff
    and the viewer's comparison show them too."""
    return [
        f"the {which} run {side.run_id} is partial (its session ran only some of its cases); "
        "only its stored trials are compared"
        if side.partial
        else f"the {which} run {side.run_id}: {side.missing}; only its stored trials are compared"
        if side.missing
        else f"the {which} run {side.run_id} is unfinished: only its stored trials are compared"
        for which, side in (("base", comparison.base), ("candidate", comparison.candidate))
        if not side.finished
    ]


def unjudged_note(comparison: Comparison) -> str | None:
    """The note on the cases the base judged and the candidate judged no trial of (in no
    test), None when there are none; shown where `side_notes` are."""
    unjudged = comparison.coverage.unjudged
    if not unjudged:
        return None
    shown = ", ".join(case.describe() for case in unjudged[:5])
    more = len(unjudged) - 5
    return (
        f"the candidate judged no trial of {len(unjudged)} case(s) the base judged "
        f"({shown}{f' and {more} more' if more > 0 else ''}): they are in no test"
    )


def _notes(comparison: Comparison) -> list[str]:
    notes = side_notes(comparison)
    if comparison.only_in_base or comparison.only_in_candidate:
        notes.append(
            f"the runs differ in cases: {len(comparison.only_in_base)} only in the base, "
            f"{len(comparison.only_in_candidate)} only in the candidate; tests are over the "
            f"{comparison.shared_cases} shared cases"
        )
    unjudged = unjudged_note(comparison)
    if unjudged:
        notes.append(unjudged)
    if comparison.changed_cases:
        shown = ", ".join(comparison.changed_cases[:5])
        more = len(comparison.changed_cases) - 5
        notes.append(
            f"{len(comparison.changed_cases)} shared case(s) changed content between the runs "
            f"({shown}{f' and {more} more' if more > 0 else ''})"
        )
    if comparison.unpriced_models:
        notes.append(
            "no price for " + ", ".join(comparison.unpriced_models) + ": their cost is missing"
        )
    if comparison.models_without_usage:
        notes.append(usage_missing_note(comparison.models_without_usage))
    return notes


def print_comparison(comparison: Comparison, console: Console | None = None) -> None:
    """Print the comparison: per scorer the change, its interval and test; the cases that
    newly fail or pass; cost and latency."""
    console = console or Console()
    console.print(
        Text.assemble(
            ("base ", "dim"),
            (comparison.base.run_id, "bold cyan"),
            ("  →  candidate ", "dim"),
            (comparison.candidate.run_id, "bold cyan"),
            f"  ·  {comparison.shared_cases} shared cases",
        )
    )
    table = Table(
        title="Scores over the shared cases",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    columns: list[tuple[str, JustifyMethod]] = [
        ("scorer", "left"),
        ("cases", "right"),
        ("base", "right"),
        ("cand.", "right"),
        ("change [95% CI]", "right"),
        ("p", "left"),
    ]
    for column, justify in columns:
        # A scorer's name is an id: it wraps inside its cell on a narrow terminal, never cut.
        table.add_column(column, justify=justify, no_wrap=column != "scorer", overflow="fold")
    for label, row in _rows(comparison):
        for kind, change in (("pass rate", row.pass_rate), ("mean", row.mean)):
            if change is None:
                continue
            verdict = _verdict(change)
            style = "green" if verdict == "better" else "red" if verdict == "worse" else ""
            if kind == "pass rate":
                values = (
                    _pct(change.base),
                    _pct(change.candidate),
                    _points(change.change, unit=""),
                )
            else:
                values = (
                    f"{change.base:.3f}",
                    f"{change.candidate:.3f}",
                    _score_change(change.change),
                )
            table.add_row(
                # Text, not markup: a name like `x[require_order]` is printed as it is.
                Text(label) if kind == "pass rate" else "  └ mean score",
                str(row.cases),
                *values,
                Text.assemble(_p(change.p_value), (f" {verdict}" if verdict else "", style)),
            )
    console.print(table)
    console.print(
        Text(
            "change in percentage points (mean: in score); per case: pass rate over its judged "
            "trials, and mean score; p: exact McNemar "
            "(sign test over cases with several trials) for pass rates, exact Wilcoxon "
            "signed-rank for mean scores; better/worse: p < 0.05",
            style="dim",
        )
    )
    costs = Table(title="Cost and latency", title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("", "base", "candidate", "change"):
        costs.add_column(column, justify="left" if not column else "right", no_wrap=bool(column))
    for label, metric, unit in _cost_rows(comparison):
        costs.add_row(
            label,
            _format(metric.base, unit),
            _format(metric.candidate, unit),
            _relative(metric),
        )
    console.print(costs)
    for title, cases, style, fix in (
        ("New failures", comparison.new_failures, "red", False),
        ("New fixes", comparison.new_fixes, "green", True),
    ):
        console.print(Text(f"{title}: {len(cases)}", style=f"bold {style}"))
        for case in cases:
            console.print(Text("  " + _case_line(case, fix=fix)), highlight=False)
    for note in _notes(comparison):
        console.print(Text(f"note: {note}", style="yellow"))


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def comparison_markdown(comparison: Comparison) -> str:
    """The comparison as Markdown for a pull-request comment: a table of scores, cost and
    latency, and the new failures and fixes (folded)."""
    lines = [
        f"### agenteval: `{comparison.candidate.run_id}` against `{comparison.base.run_id}`",
        "",
        f"{comparison.shared_cases} shared cases · "
        f"{len(comparison.new_failures)} new failures · {len(comparison.new_fixes)} new fixes",
        "",
        "| scorer | cases | base | candidate | change [95% CI] | p | |",
        "|---|--:|--:|--:|--:|--:|---|",
    ]
    for label, row in _rows(comparison):
        for kind, change in (("pass rate", row.pass_rate), ("mean", row.mean)):
            if change is None:
                continue
            verdict = _verdict(change)
            mark = {"better": "✅ better", "worse": "❌ worse"}.get(verdict, "")
            if kind == "pass rate":
                name = f"`{_md(label)}`"
                values = [_pct(change.base), _pct(change.candidate), _points(change.change)]
            else:
                name = f"`{_md(label)}` (mean)"
                values = [
                    f"{change.base:.3f}",
                    f"{change.candidate:.3f}",
                    _score_change(change.change),
                ]
            lines.append(
                f"| {name} | {row.cases} | "
                + " | ".join(values)
                + f" | {_p(change.p_value)} | {mark} |"
            )
    lines += ["", "| | base | candidate | change |", "|---|--:|--:|--:|"]
    for label, metric, unit in _cost_rows(comparison):
        lines.append(
            f"| {label} | {_format(metric.base, unit)} | {_format(metric.candidate, unit)} "
            f"| {_relative(metric)} |"
        )
    for title, changes, fix in (
        ("New failures", comparison.new_failures, False),
        ("New fixes", comparison.new_fixes, True),
    ):
        if not changes:
            continue
        lines += ["", f"<details><summary>{title} ({len(changes)})</summary>", ""]
        lines += [f"- {_md(_case_line(change, fix=fix))}" for change in changes]
        lines += ["", "</details>"]
    notes = _notes(comparison)
    if notes:
        lines.append("")
        lines += [f"> {_md(note)}" for note in notes]
    lines += [
        "",
        "<sub>Per case: pass rate over its judged trials. p: exact McNemar (sign test over cases "
        "with several trials) for pass rates, exact Wilcoxon signed-rank for mean scores; "
        "better/worse at p &lt; 0.05.</sub>",
    ]
    return "\n".join(lines) + "\n"
