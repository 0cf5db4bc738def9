"""Assembling the page: the run's info, summary, charts, trials and diff rendered through the
package's Jinja template, with its CSS and JavaScript inlined."""

from __future__ import annotations

import json
import secrets
from collections.abc import Collection, Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, TypedDict, Unpack

from jinja2 import BaseLoader, ChoiceLoader, Environment, PackageLoader, StrictUndefined
from markupsafe import Markup
from pydantic import BaseModel

from agenteval.catalog import scorer_references
from agenteval.pricing import PriceTable
from agenteval.records import MissingTrials, RunInfo, TrialResult
from agenteval.redaction import Redactor
from agenteval.report.html.charts import cost_bars, histogram, score_bars
from agenteval.report.html.diff import BaselineDiff, cell_class, diff_view
from agenteval.report.html.trials import TrialView, row_data, trace, trial_view
from agenteval.report.json_document import completeness
from agenteval.report.simulation import END_REASON_WORDS
from agenteval.report.summary import Summary
from agenteval.report.terminal import (
    RUBRIC_MEANINGS,
    SCORER_MEANINGS,
    format_interval,
    format_rate,
    format_seconds,
    format_usd,
    rate_verdict,
    replay_line,
)

__all__ = [
    "PageOptions",
    "asset",
    "json_for_script",
    "render_html",
    "report_environment",
    "run_context",
    "trial_views",
    "write_html",
]

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


def report_environment(*loaders: BaseLoader) -> Environment:
    """The Jinja environment of the report's templates and filters, autoescaping everything.

    `loaders` (the viewer's own pages) are searched before the report's templates, so a page
    can include the report's parts (`parts/summary.html.j2`, `parts/trial.html.j2`, ...): the
    report and the viewer render a run through the same templates.
    """
    env = Environment(
        loader=ChoiceLoader([*loaders, PackageLoader("agenteval.report", "templates")]),
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
    env.filters["cell_class"] = cell_class
    env.filters["verdict"] = rate_verdict
    env.filters["is_mapping"] = lambda v: isinstance(v, Mapping)
    env.filters["is_list"] = lambda v: isinstance(v, list)
    env.filters["is_table"] = lambda v: (
        isinstance(v, list) and bool(v) and all(isinstance(item, Mapping) for item in v)
    )
    return env


def asset(name: str) -> Markup:
    """One of the report's static files (`report.css`, `trace.js`, ...), to inline or serve."""
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
    info = Redactor.from_environment().redact_model(info)
    table = prices if prices is not None else PriceTable.default()
    views = trial_views(results, table, summary)
    total_latency = [
        v.result.trial.latency_s for v in views if v.result.trial.latency_s is not None
    ]
    working_latency = [
        v.result.trial.working_latency_s
        for v in views
        if v.result.trial.working_latency_s is not None
    ]
    context = run_context(
        info, summary, (total_latency, working_latency), diff=diff, missing=missing
    )
    template = report_environment().get_template("report.html.j2")
    return template.render(
        **context,
        views=views,
        rows_json=json_for_script([row_data(view) for view in views]),
        tags=sorted({tag for view in views for tag in view.result.case.tags}),
        css=asset("report.css"),
        js=Markup("\n").join([asset("trace.js"), asset("report.js")]),
        nonce=secrets.token_urlsafe(16),
    )


def trial_views(
    results: Iterable[TrialResult],
    prices: PriceTable,
    summary: Summary | None,
    *,
    start: int = 1,
    passing: Collection[str] | None = None,
) -> list[TrialView]:
    """One view per result, numbered from `start` (the rows' # column), each with its trace:
    what `parts/trial.html.j2` draws. Without the run's `summary` (the viewer before it has
    read every trial), `passing` decides a trial's status and no case is marked flaky."""
    flaky: set[str] = set()
    if summary is not None:
        passing = summary.passing
        if summary.reliability:
            flaky = {case.case_id for case in summary.reliability.flaky}
    views: list[TrialView] = []
    for index, result in enumerate(results, start=start):
        view = trial_view(index, result, prices, passing, flaky)
        view.extra = trace(view)
        views.append(view)
    return views


def run_context(
    info: RunInfo,
    summary: Summary,
    latencies: tuple[Sequence[float], Sequence[float]],
    *,
    diff: BaselineDiff | BaseModel | Mapping[str, Any] | None = None,
    missing: MissingTrials | None = None,
    flaky_shown: int | None = None,
) -> dict[str, Any]:
    """What the shared parts (`run_head`, `diff`, `summary`, `trial`) read of a run: `info`
    (redacted by the caller), its summary, the trials' total and working latencies for the
    histogram, the baseline diff and the trials it lacks; `flaky_shown` caps the flaky cases
    listed (the viewer's pages; the one-file report lists them all)."""
    return {
        "info": info,
        "status": completeness(info, missing)["status"],
        "missing": missing.describe() if missing is not None and missing.count else None,
        "replay": replay_line(info),
        "summary": summary,
        "scorer_names": list(summary.scorers),
        "references": scorer_references(info),
        "meanings": {**SCORER_MEANINGS, **RUBRIC_MEANINGS},
        "end_words": END_REASON_WORDS,
        "rungs": {"tool_selection": 1, "tool_arguments_valid": 2, "tool_execution": 3},
        "bars": score_bars(summary),
        "histogram": histogram(list(latencies[0]), list(latencies[1]), summary),
        "cost_bars": cost_bars(summary),
        "diff": diff_view(diff),
        "flaky_shown": flaky_shown,
    }


class PageOptions(TypedDict, total=False):
    """The keyword arguments of `render_html` that `write_html` passes on."""

    prices: PriceTable | None
    diff: BaselineDiff | BaseModel | Mapping[str, Any] | None
    missing: MissingTrials | None


def write_html(
    path: Path,
    info: RunInfo,
    summary: Summary,
    results: Iterable[TrialResult],
    **options: Unpack[PageOptions],
) -> None:
    """Write the page of `render_html` to `path` (UTF-8), making its folder if needed."""
    page = render_html(info, summary, results, **options)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
