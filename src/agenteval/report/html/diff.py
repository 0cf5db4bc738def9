"""The page's "Baseline diff" section: `agenteval compare`'s `Comparison` as tables
(`diff_from_comparison`), a `BaselineDiff` laid out by the caller, or any other model or
JSON-like mapping shown as nested tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import to_jsonable_python

from agenteval.report.compare.render import side_notes, unjudged_note
from agenteval.report.formats import usage_missing_note
from agenteval.report.statistics import Interval
from agenteval.report.terminal import format_seconds, format_usd

if TYPE_CHECKING:
    from agenteval.report.compare import CaseChange, Comparison

__all__ = ["BaselineDiff", "DiffTable", "cell_class", "diff_from_comparison", "diff_view"]


class DiffTable(BaseModel):
    """One table of a baseline comparison: a title, column names and rows of cells."""

    model_config = ConfigDict(extra="forbid")

    title: str
    columns: list[str]
    rows: list[list[Any]] = Field(default_factory=list)
    """Cells are shown as text; in a column named `verdict` or `status`, a cell that starts with
    `improved`, `better` or `fixed` is coloured as good, `regressed`, `worse` or `new failure`
    as bad."""


class BaselineDiff(BaseModel):
    """What the report shows of a comparison with a baseline run (`agenteval compare`).

    `render_html(..., diff=...)` also takes any other pydantic model or JSON-like mapping and
    shows it as nested tables; this class gives control over the layout.
    """

    model_config = ConfigDict(extra="forbid")

    base_run_id: str
    candidate_run_id: str | None = None
    headline: str = ""
    tables: list[DiffTable] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def _points(change: Interval) -> str:
    return f"{change.estimate * 100:+.1f} pts [{change.low * 100:+.1f}, {change.high * 100:+.1f}]"


def _score_delta(change: Interval) -> str:
    return f"{change.estimate:+.3f} [{change.low:+.3f}, {change.high:+.3f}]"


def _p_value(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}" if p < 0.1 else f"{p:.2f}"


def diff_from_comparison(comparison: Comparison) -> BaselineDiff:
    """What the report shows of `agenteval compare`'s `Comparison`: per scorer the change with
    its interval and paired test, the new failures and fixes case by case, cost and latency."""
    rows: list[list[Any]] = []
    for label, scorer in [("a trial passes", comparison.trial)] + [
        (s.name, s) for s in comparison.scorers
    ]:
        change = scorer.pass_rate if scorer.binary or scorer.mean is None else scorer.mean
        if change is None:
            rows.append([label, scorer.cases, None, None, None, None, "not judged in both"])
            continue
        rate = change is scorer.pass_rate
        verdict = (
            ("improved" if change.change.estimate > 0 else "regressed")
            if change.significant
            else "no significant change"
        )
        rows.append(
            [
                label,
                scorer.cases,
                f"{change.base:.0%}" if rate else f"{change.base:.3f}",
                f"{change.candidate:.0%}" if rate else f"{change.candidate:.3f}",
                _points(change.change) if rate else _score_delta(change.change),
                f"{_p_value(change.p_value)} ({change.test})",
                verdict,
            ]
        )

    def cases(changes: Sequence[CaseChange]) -> list[list[Any]]:
        return [
            [
                c.case_id,
                c.scorer,
                f"{c.base_failed} of {c.base_judged}" if c.in_base else "not in base",
                f"{c.candidate_failed} of {c.candidate_judged}",
                c.reason,
            ]
            for c in changes
        ]

    case_columns = ["case", "scorer", "base failed", "candidate failed", "reason"]
    metrics = [
        ("agent cost per case", comparison.agent_cost_per_case, format_usd),
        ("judge cost per case", comparison.judge_cost_per_case, format_usd),
        ("latency p50", comparison.latency_p50, format_seconds),
        ("latency p95", comparison.latency_p95, format_seconds),
        ("latency p50 excluding waits", comparison.working_latency_p50, format_seconds),
        ("latency p95 excluding waits", comparison.working_latency_p95, format_seconds),
    ]
    # What `agenteval compare` notes of what could not be tested, in the same words.
    notes = side_notes(comparison)
    unjudged = unjudged_note(comparison)
    if unjudged:
        notes.append(unjudged)
    if comparison.only_in_base:
        notes.append("only in the base run: " + ", ".join(comparison.only_in_base))
    if comparison.only_in_candidate:
        notes.append("only in this run: " + ", ".join(comparison.only_in_candidate))
    if comparison.changed_cases:
        notes.append("cases whose content changed: " + ", ".join(comparison.changed_cases))
    if comparison.unpriced_models:
        notes.append("no price for " + ", ".join(comparison.unpriced_models))
    if comparison.models_without_usage:
        notes.append(usage_missing_note(comparison.models_without_usage))
    return BaselineDiff(
        base_run_id=comparison.base.run_id,
        candidate_run_id=comparison.candidate.run_id,
        headline=(
            f"{len(comparison.new_failures)} new failures, {len(comparison.new_fixes)} new "
            f"fixes over {comparison.shared_cases} shared cases"
        ),
        tables=[
            DiffTable(
                title="Per scorer (paired over the shared cases)",
                columns=["scorer", "cases", "base", "this run", "change", "p (test)", "verdict"],
                rows=rows,
            ),
            DiffTable(
                title="New failures", columns=case_columns, rows=cases(comparison.new_failures)
            ),
            DiffTable(title="New fixes", columns=case_columns, rows=cases(comparison.new_fixes)),
            DiffTable(
                title="Cost and latency",
                columns=["", "base", "this run", "change"],
                rows=[
                    [
                        label,
                        show(metric.base),
                        show(metric.candidate),
                        "—"
                        if metric.change is None
                        else ("+" if metric.change >= 0 else "−") + show(abs(metric.change)),
                    ]
                    for label, metric, show in metrics
                ],
            ),
        ],
        notes=notes,
    )


def diff_view(diff: BaselineDiff | BaseModel | Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What the template shows of `render_html`'s `diff`: its tables (`structured`) or a
    plain JSON value shown as nested tables (`generic`)."""
    if diff is None:
        return None
    from agenteval.report.compare import Comparison

    if isinstance(diff, Comparison):
        diff = diff_from_comparison(diff)
    if isinstance(diff, BaselineDiff):
        return {"structured": diff, "generic": None}
    plain = diff.model_dump(mode="json") if isinstance(diff, BaseModel) else diff
    return {"structured": None, "generic": to_jsonable_python(plain, fallback=repr)}


def cell_class(column: str, value: Any) -> str:
    """`good`, `bad` or nothing: the colour of a diff table's cell."""
    text = str(value).strip().lower()
    # Only verdicts are coloured: whether a change of sign is good depends on the number
    # (a pass rate up is good, a latency up is not).
    if column.lower() not in ("status", "verdict"):
        return ""
    if text.startswith(("improved", "fixed", "better")):
        return "good"
    if text.startswith(("regressed", "new failure", "worse")):
        return "bad"
    return ""
