"""The run as one self-contained HTML page: the summary with charts, a case table that filters
and sorts, every trial's trace, and room for a baseline diff.

The page works offline: its CSS and JavaScript are inlined from the package's `static/` folder,
and its charts are inline SVG drawn here (no chart library, no CDN). Everything that comes from
agents, tools or datasets reaches the page only through Jinja's autoescaping, or inside the one
JSON block, escaped by `json_for_script`; the JavaScript writes text with `textContent` only.
A Content-Security-Policy allows nothing but the page's own (nonce-marked) script and inline
styles, as a second line of defence.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup
from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import to_jsonable_python

from agenteval.catalog import scorer_references
from agenteval.pricing import PriceTable
from agenteval.records import MissingTrials, RunInfo, TrialResult
from agenteval.redaction import Redactor
from agenteval.report.json_document import completeness
from agenteval.report.statistics import Interval, trial_passed
from agenteval.report.summary import SECTION_SCORERS, Summary
from agenteval.report.terminal import (
    RUBRIC_MEANINGS,
    SCORER_MEANINGS,
    format_interval,
    format_rate,
    format_seconds,
    format_usd,
    rate_verdict,
)
from agenteval.trace import ToolCall, Trial

if TYPE_CHECKING:
    from agenteval.report.compare import CaseChange, Comparison

__all__ = [
    "BaselineDiff",
    "DiffTable",
    "diff_from_comparison",
    "json_for_script",
    "render_html",
    "write_html",
]

MAX_TEXT = 20_000
"""Characters kept of any one text shown in a trace (tool results can be huge)."""

_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def json_for_script(value: Any) -> Markup:
    """`value` as JSON safe to place inside a `<script type="application/json">` element:
    `<`, `>` and `&` are written as `\\u` escapes (so no `</script>` or `<!--` can appear), and
    so are U+2028 and U+2029. `JSON.parse` reads it back unchanged."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
    for raw, escaped in _JSON_ESCAPES.items():
        text = text.replace(raw, escaped)
    return Markup(text)


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


# --- trial views -----------------------------------------------------------------------------


def _clip(text: str, limit: int = MAX_TEXT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters not shown)"


def _shown(value: Any) -> str:
    """A value as the page shows it: strings as they are, anything else as indented JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return _clip(value)
    plain = to_jsonable_python(value, fallback=repr)
    return _clip(json.dumps(plain, indent=2, ensure_ascii=False, default=repr))


def _call_view(call: ToolCall) -> dict[str, Any]:
    return {
        "name": call.name,
        "arguments": _shown(call.arguments) if call.arguments else "",
        "result": _shown(call.result),
        "has_result": call.result is not None,
        "error": call.error,
        "duration": format_seconds(call.duration_s) if call.duration_s is not None else "",
    }


def _steps(trial: Trial) -> list[dict[str, Any]]:
    """The trial's steps; without recorded steps, one step per tool call, then the answer."""
    if trial.steps:
        return [
            {
                "thought": step.thought,
                "calls": [_call_view(call) for call in step.tool_calls],
                "output": step.output,
            }
            for step in trial.steps
        ]
    return [
        {"thought": None, "calls": [_call_view(call)], "output": None} for call in trial.tool_calls
    ]


def _input_text(result: TrialResult) -> str:
    value = result.case.input
    if isinstance(value, str):
        return value
    if value:
        return "\n".join(f"{m.role}: {m.content}" for m in value)
    return "\n".join(f"user: {turn}" for turn in result.case.turns)


def _score_views(result: TrialResult) -> list[dict[str, Any]]:
    views = []
    for name, score in result.scores.items():
        state = (
            "error"
            if score.error is not None
            else "skip"
            if score.value is None
            else "pass"
            if score.passed
            else "fail"
        )
        samples = [
            {"score": s.get("score"), "reasoning": _clip(str(s.get("reasoning") or ""))}
            for s in score.details.get("samples", [])
            if isinstance(s, Mapping)
        ]
        details = {k: v for k, v in score.details.items() if k != "samples"}
        judge = score.judge
        views.append(
            {
                "name": name,
                "state": state,
                "value": "—" if score.value is None else f"{score.value:.2f}",
                "reason": _clip(score.error or score.reason or ""),
                "details": _shown(details) if details else "",
                "judge": (
                    f"{judge.judge} · template {judge.template} v{judge.template_version} · "
                    f"{judge.samples} sample(s), {judge.cached_samples} cached"
                    if judge is not None
                    else ""
                ),
                "samples": samples if len(samples) > 1 or judge is not None else [],
            }
        )
    return views


@dataclass
class _TrialView:
    index: int
    """The row's number as the page shows it, from 1 in the run's order: `#trace-N` in the
    address, the row's link and its `data-i` all use it."""
    result: TrialResult
    status: str
    failing: list[str]
    mean: float | None
    cost: float | None
    flaky: bool
    extra: dict[str, Any] = field(default_factory=dict)


def _trial_cost(trial: Trial, result: TrialResult, prices: PriceTable) -> float | None:
    total: float | None = None
    for call in trial.model_calls:
        cost = prices.cost(call.model, call.usage)
        if cost is not None:
            total = (total or 0.0) + cost
    for score in result.scores.values():
        if score.judge is not None and score.judge.cost_usd is not None:
            total = (total or 0.0) + score.judge.cost_usd
    return total


def _trial_view(
    index: int,
    result: TrialResult,
    prices: PriceTable,
    passing: Collection[str] | None,
    flaky: set[str],
) -> _TrialView:
    trial = result.trial
    failing = [
        name
        for name, score in result.scores.items()
        if score.error is not None or (score.value is not None and score.passed is False)
    ]
    values = [s.value for s in result.scores.values() if s.value is not None and s.error is None]
    verdict = trial_passed(result, passing)
    status = (
        "error"
        if trial.failure is not None
        else "unscored"
        if verdict is None
        else "pass"
        if verdict
        else "fail"
    )
    return _TrialView(
        index=index,
        result=result,
        status=status,
        failing=failing,
        mean=sum(values) / len(values) if values else None,
        cost=_trial_cost(trial, result, prices),
        flaky=result.case.id in flaky,
    )


def _row_data(view: _TrialView) -> dict[str, Any]:
    """What the table's JavaScript filters and sorts on, per trial."""
    result, trial = view.result, view.result.trial
    search = " ".join(
        [result.case.id, _input_text(result)[:2000], (trial.output or "")[:2000], *result.case.tags]
    ).casefold()
    return {
        "i": view.index,
        "case": result.case.id,
        "trial": trial.trial,
        "status": view.status,
        "failing": view.failing,
        "score": view.mean,
        "latency": trial.latency_s,
        "tokens": trial.usage.total_tokens,
        "cost": view.cost,
        "tags": result.case.tags,
        "flaky": view.flaky,
        "text": search,
    }


def _trace(view: _TrialView) -> dict[str, Any]:
    result, trial = view.result, view.result.trial
    case = result.case
    expected: list[tuple[str, str]] = []
    if case.expected_output is not None:
        expected.append(("expected answer", case.expected_output))
    if case.expected_tools is not None:
        expected.append(("expected tools", ", ".join(case.expected_tools) or "none"))
    if case.expected_trajectory is not None:
        expected.append(
            ("expected order", " → ".join(call.name for call in case.expected_trajectory))
        )
    if case.max_tool_calls is not None:
        expected.append(("max tool calls", str(case.max_tool_calls)))
    if case.relevant_docs is not None:
        expected.append(("relevant documents", ", ".join(case.relevant_docs)))
    if case.must_not_contain is not None:
        expected.append(("must not contain", " · ".join(case.must_not_contain)))
    return {
        "input": _clip(_input_text(result)),
        "expected": expected,
        "output": _clip(trial.output) if trial.output is not None else None,
        "failure": trial.failure,
        "steps": _steps(trial),
        "model_calls": [
            {
                "model": call.model,
                "tokens": f"{call.usage.input_tokens:,} in, {call.usage.output_tokens:,} out",
                "duration": format_seconds(call.duration_s),
            }
            for call in trial.model_calls
        ],
        "scores": _score_views(result),
        "retries": ", ".join(f"{reason} {n}" for reason, n in trial.retries.items()),
        "attempts": trial.attempts,
        "metadata": _shown(trial.metadata) if trial.metadata else "",
    }


# --- charts ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Bar:
    label: str
    rate: float
    low: float
    high: float
    text: str
    verdict: str
    """`good`, `warn` or `bad`: the class the score tables give the same rate."""


def _score_bars(summary: Summary) -> list[_Bar]:
    bars = []
    for section in summary.sections:
        for name in section.scorers:
            stats = summary.scorers[name]
            if stats.pass_rate is None or stats.interval is None:
                continue
            bars.append(
                _Bar(
                    label=name,
                    rate=stats.pass_rate,
                    low=stats.interval.low,
                    high=stats.interval.high,
                    text=f"{stats.pass_rate:.0%} {format_interval(stats.interval)} n={stats.scored}",
                    verdict=rate_verdict(stats.pass_rate),
                )
            )
    return bars


@dataclass(frozen=True)
class _Histogram:
    bins: list[tuple[float, float, int, int]]
    """(x0, x1, total count, excluding-waits count) in chart units 0..1."""
    ticks: list[tuple[float, str]]
    peak: int
    markers: list[tuple[float, str]]
    log: bool


def _decimals_for(value: float, digits: int = 1) -> int:
    """Decimals that show `digits` significant digits of `value` (none for a whole number)."""
    if value <= 0:
        return 0
    return max(0, digits - 1 - math.floor(math.log10(value)))


@dataclass(frozen=True)
class _Axis:
    """How the latency axis writes seconds: in one unit for the whole axis (ms when every value
    is under a second, else s), so a reader never compares `900 ms` with `1.00 s`. On a linear
    axis every tick has the same decimals, the fewest that tell neighbouring ticks apart; a
    log axis's ticks (1, 2 or 5 times a power of ten) are written exactly."""

    unit: str
    scale: float

    @classmethod
    def for_range(cls, top: float) -> _Axis:
        return cls("ms", 1000.0) if top < 1 else cls("s", 1.0)

    def labels(self, ticks: list[float], log: bool) -> list[str]:
        values = [t * self.scale for t in ticks]
        if log:
            return [f"{v:,.{_decimals_for(v)}f} {self.unit}" for v in values]
        step = (values[-1] - values[0]) / max(1, len(values) - 1)
        decimals = _decimals_for(step)
        while len({f"{v:.{decimals}f}" for v in values}) < len(values) and decimals < 6:
            decimals += 1
        return [f"{v:,.{decimals}f} {self.unit}" for v in values]

    def value(self, seconds: float) -> str:
        """A marked value (p50, p95): three significant digits in the axis's unit."""
        v = seconds * self.scale
        return f"{v:,.{_decimals_for(v, 3)}f} {self.unit}"


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Powers of ten within the range, or 1, 2 and 5 times them when fewer than three fit."""
    exponents = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    for steps in ((1.0,), (1.0, 2.0, 5.0)):
        ticks = [m * 10.0**e for e in exponents for m in steps]
        ticks = [t for t in ticks if lo <= t <= hi]
        if len(ticks) >= 3:
            return ticks
    return ticks if len(ticks) >= 2 else [lo, hi]


def _histogram(total: list[float], working: list[float], summary: Summary) -> _Histogram | None:
    values = [v for v in [*total, *working] if v > 0]
    if not values:
        return None
    lo, hi = min(values), max(values)
    log = hi / lo > 20
    if hi == lo:
        lo, hi = lo * 0.5, hi * 1.5
    count = 24

    def position(v: float) -> float:
        v = min(max(v, lo), hi)
        if log:
            return (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo))
        return (v - lo) / (hi - lo)

    def slot(v: float) -> int:
        return min(count - 1, int(position(v) * count))

    totals, works = [0] * count, [0] * count
    for v in total:
        if v > 0:
            totals[slot(v)] += 1
    for v in working:
        if v > 0:
            works[slot(v)] += 1
    bins = [(i / count, (i + 1) / count, totals[i], works[i]) for i in range(count)]
    tick_values = _log_ticks(lo, hi) if log else [lo + (hi - lo) * i / 4 for i in range(5)]
    axis = _Axis.for_range(hi)
    markers = [
        (position(value), f"{label} {axis.value(value)}")
        for label, value in (("p50", summary.latency.p50), ("p95", summary.latency.p95))
        if value is not None
    ]
    return _Histogram(
        bins=bins,
        ticks=[
            (position(t), text)
            for t, text in zip(tick_values, axis.labels(tick_values, log), strict=True)
        ],
        peak=max(max(totals), max(works), 1),
        markers=markers,
        log=log,
    )


def _cost_bars(summary: Summary) -> list[tuple[str, float, str]]:
    cost = summary.cost
    items = [
        ("agent", cost.agent_usd),
        ("judge", cost.judge_usd),
        ("total", cost.total_usd),
    ]
    top = max((v for _, v in items if v is not None), default=0.0)
    if top <= 0:
        return []
    return [(label, (v or 0.0) / top, format_usd(v)) for label, v in items]


# --- the diff --------------------------------------------------------------------------------


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
    notes = []
    if comparison.only_in_base:
        notes.append("only in the base run: " + ", ".join(comparison.only_in_base))
    if comparison.only_in_candidate:
        notes.append("only in this run: " + ", ".join(comparison.only_in_candidate))
    if comparison.changed_cases:
        notes.append("cases whose content changed: " + ", ".join(comparison.changed_cases))
    if comparison.unpriced_models:
        notes.append("no price for " + ", ".join(comparison.unpriced_models))
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


def _as_diff(diff: BaselineDiff | BaseModel | Mapping[str, Any] | None) -> dict[str, Any] | None:
    if diff is None:
        return None
    from agenteval.report.compare import Comparison

    if isinstance(diff, Comparison):
        diff = diff_from_comparison(diff)
    if isinstance(diff, BaselineDiff):
        return {"structured": diff, "generic": None}
    plain = diff.model_dump(mode="json") if isinstance(diff, BaseModel) else diff
    return {"structured": None, "generic": to_jsonable_python(plain, fallback=repr)}


def _cell_class(column: str, value: Any) -> str:
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


# --- rendering -------------------------------------------------------------------------------


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("agenteval.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = lambda v: "—" if v is None else f"{v:.0%}"
    env.filters["num"] = lambda v: "—" if v is None else f"{v:.2f}"
    env.filters["seconds"] = format_seconds
    env.filters["usd"] = format_usd
    env.filters["interval"] = format_interval
    env.filters["rate"] = format_rate
    env.filters["cell_class"] = _cell_class
    env.filters["verdict"] = rate_verdict
    env.filters["is_mapping"] = lambda v: isinstance(v, Mapping)
    env.filters["is_list"] = lambda v: isinstance(v, list)
    env.filters["is_table"] = lambda v: (
        isinstance(v, list) and bool(v) and all(isinstance(item, Mapping) for item in v)
    )
    return env


def _asset(name: str) -> Markup:
    text = (resources.files("agenteval.report") / "static" / name).read_text(encoding="utf-8")
    # Our own files, but a closing tag inside them would end the element early.
    if "</" + "script" in text.lower() or "</" + "style" in text.lower():
        raise ValueError(f"static/{name} must not contain a closing script or style tag")
    return Markup(text)


def render_html(
    info: RunInfo,
    summary: Summary,
    results: Iterable[TrialResult],
    *,
    prices: PriceTable | None = None,
    diff: BaselineDiff | BaseModel | Mapping[str, Any] | None = None,
    missing: MissingTrials | None = None,
) -> str:
    """The run as one self-contained HTML page.

    `missing` (`RunStore.missing_trials`), when some are, puts a notice at the top that the
    run is incomplete, naming them, and its status reads as the JSON document's does.

    `diff`, when given, is shown in a "Baseline diff" section: `agenteval compare`'s
    `Comparison` (through `diff_from_comparison`), a `BaselineDiff` as its tables, or any other
    pydantic model or JSON-like mapping as nested tables.
    """
    # The run's settings may be the ones in memory (the results come from the store, and the
    # summary is redacted when it is built): redacted as the store would.
    info = Redactor.from_environment().redact_model(info)
    table = prices if prices is not None else PriceTable.default()
    flaky = {case.case_id for case in summary.reliability.flaky} if summary.reliability else set()
    views: list[_TrialView] = []
    total_latency: list[float] = []
    working_latency: list[float] = []
    for index, result in enumerate(results, start=1):
        view = _trial_view(index, result, table, summary.passing, flaky)
        view.extra = _trace(view)
        views.append(view)
        if result.trial.latency_s is not None:
            total_latency.append(result.trial.latency_s)
        if result.trial.working_latency_s is not None:
            working_latency.append(result.trial.working_latency_s)
    scorer_names = list(summary.scorers)
    tags = sorted({tag for view in views for tag in view.result.case.tags})
    template = _environment().get_template("report.html.j2")
    return template.render(
        info=info,
        status=completeness(info, missing)["status"],
        missing=missing.describe() if missing is not None and missing.count else None,
        summary=summary,
        views=views,
        rows_json=json_for_script([_row_data(view) for view in views]),
        scorer_names=scorer_names,
        references=scorer_references(info),
        tags=tags,
        meanings={**SCORER_MEANINGS, **RUBRIC_MEANINGS},
        rungs={"tool_selection": 1, "tool_arguments_valid": 2, "tool_execution": 3},
        scoring_keys=[*SECTION_SCORERS, "judge", "other"],
        bars=_score_bars(summary),
        histogram=_histogram(total_latency, working_latency, summary),
        cost_bars=_cost_bars(summary),
        diff=_as_diff(diff),
        css=_asset("report.css"),
        js=_asset("report.js"),
        nonce=secrets.token_urlsafe(16),
    )


def write_html(
    path: Path,
    info: RunInfo,
    summary: Summary,
    results: Iterable[TrialResult],
    *,
    prices: PriceTable | None = None,
    diff: BaselineDiff | BaseModel | Mapping[str, Any] | None = None,
    missing: MissingTrials | None = None,
) -> None:
    """Write the page of `render_html` to `path` (UTF-8), making its folder if needed."""
    page = render_html(info, summary, results, prices=prices, diff=diff, missing=missing)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
