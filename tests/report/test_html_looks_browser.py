"""How the HTML report reads, checked in a real headless Chromium: the overview's bars are
coloured by verdict exactly as the score tables are, the latency axis speaks one unit, and
`#trace-N` opens the row numbered N."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page
from tests.report.test_html_browser import (  # noqa: F401  (browser is a fixture)
    CHROMIUM,
    Watched,
    browser,
)
from tests.report.test_summary_sections import PRICES, result, score

from agenteval.report.html import render_html
from agenteval.report.summary import summarize
from agenteval.run import RunInfo

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on this machine: `apt-get install chromium` (the browser tests need "
    "Debian's chromium; .ci/run installs it)",
)

# Pass rates 100%, 60% and 20%: one scorer per verdict, as the tables colour them.
RATES = {"always_right": 5, "mostly_right": 3, "rarely_right": 1}


def scored_run(latencies: list[float]) -> list:
    results = []
    for i, latency in enumerate(latencies):
        scores = [score(name, 1.0 if i % 5 < passed else 0.0) for name, passed in RATES.items()]
        results.append(result(f"case-{i:02d}", scores=scores, latency=latency))
    return results


def page_of(launched: Browser, tmp_path: Path, results: list, anchor: str = "") -> Iterator[Page]:
    """The report of `results` open in a new page (at `anchor`); no console error by its end."""
    html = render_html(
        RunInfo(run_id="20261201-000000-look"),
        summarize(results, prices=PRICES),
        results,
        prices=PRICES,
    )
    out = tmp_path / "report.html"
    out.write_text(html, encoding="utf-8")
    context = launched.new_context(viewport={"width": 1280, "height": 900})
    seen = Watched(context.new_page())
    seen.page.goto(out.as_uri() + anchor)
    seen.page.wait_for_selector("#case-table")
    yield seen.page
    assert seen.errors == []
    context.close()


@pytest.fixture
def bars_page(browser: Browser, tmp_path: Path) -> Iterator[Page]:  # noqa: F811
    yield from page_of(browser, tmp_path, scored_run([0.1 + i / 10 for i in range(10)]))


def test_overview_bars_take_the_colour_of_their_verdict(bars_page: Page) -> None:
    bars = bars_page.eval_on_selector_all(
        "svg.bars g.bar-row",
        """rows => rows.map(row => ({
            label: row.querySelector('text.bar-label').textContent,
            fill: getComputedStyle(row.querySelector('rect.bar')).fill,
        }))""",
    )
    rates = bars_page.eval_on_selector_all(
        "table.scores tr",
        """rows => rows.filter(r => r.querySelector('td.name code'))
            .map(r => ({
                name: r.querySelector('td.name code').textContent,
                color: getComputedStyle(r.querySelector('span.rate')).color,
            }))""",
    )
    fills = {bar["label"]: bar["fill"] for bar in bars}
    colours = {row["name"]: row["color"] for row in rates}
    assert set(RATES) <= set(fills) and set(RATES) <= set(colours)
    # Three verdicts, three colours, each bar as its table's rate.
    assert len({fills[name] for name in RATES}) == 3, fills
    for name in RATES:
        assert fills[name] == colours[name], (name, fills[name], colours[name])
    # Each bar's numbers are inside the chart, not cut at its edge.
    overflow = bars_page.eval_on_selector_all(
        "svg.bars text.value",
        """texts => texts.map(t => {
            const svg = t.ownerSVGElement.getBoundingClientRect();
            return t.getBoundingClientRect().right - svg.right;
        })""",
    )
    assert overflow and max(overflow) <= 0, overflow


def tick_labels(page: Page) -> list[str]:
    return list(
        page.eval_on_selector_all(
            "svg.histogram text.tick:not(.legend)", "ticks => ticks.map(t => t.textContent)"
        )
    )


@pytest.mark.parametrize(
    ("latencies", "unit"),
    [
        ([0.4 + i * 0.3 for i in range(10)], "s"),  # 0.4 s to 3.1 s, a linear axis
        ([0.004 * 2.2**i for i in range(10)], "s"),  # 4 ms to 4.7 s, a log axis
        ([0.002 + i * 0.01 for i in range(10)], "ms"),  # all under a second
    ],
)
def test_the_latency_axis_speaks_one_unit(
    browser: Browser,  # noqa: F811
    tmp_path: Path,
    latencies: list[float],
    unit: str,
) -> None:
    for page in page_of(browser, tmp_path, scored_run(latencies)):
        ticks = tick_labels(page)
        assert len(ticks) >= 2, ticks
        units = {tick.rsplit(" ", 1)[-1] for tick in ticks}
        assert units == {unit}, ticks
        numbers = [tick.rsplit(" ", 1)[0] for tick in ticks]
        assert len(set(numbers)) == len(numbers), ticks
        if "log scale" not in str(page.text_content("#latency h3")):
            # A linear axis: every tick with the same number of decimals.
            decimals = {len(n.partition(".")[2]) for n in numbers}
            assert len(decimals) == 1, ticks
        markers = page.eval_on_selector_all(
            "svg.histogram text.marker-label", "labels => labels.map(t => t.textContent)"
        )
        assert markers and all(m.endswith(f" {unit}") for m in markers), markers


@pytest.fixture
def rows_page(browser: Browser, tmp_path: Path) -> Iterator[Page]:  # noqa: F811
    yield from page_of(browser, tmp_path, scored_run([0.1] * 12), anchor="#trace-7")


def row_number(page: Page, selector: str) -> str:
    return str(page.text_content(f"{selector} td.row-number")).strip()


def test_an_anchor_opens_the_row_with_that_number(rows_page: Page) -> None:
    page = rows_page
    rows = page.query_selector_all("tbody.trial")
    # The rows are numbered from 1, as a reader counts them, and #trace-7 opens the 7th.
    numbers = [str(row.query_selector("td.row-number").text_content()).strip() for row in rows]
    assert numbers == [str(n) for n in range(1, 13)]
    open_rows = page.eval_on_selector_all(
        "tbody.trial:has(tr.trace:not([hidden]))",
        "bodies => bodies.map(b => b.querySelector('td.row-number').textContent.trim())",
    )
    assert open_rows == ["7"]
    assert "case-06" in str(page.text_content("tbody.trial:has(tr.trace:not([hidden]))"))
    # The row's number links to its own anchor, and following it opens that row.
    link = page.get_attribute("tbody.trial:nth-of-type(3) td.row-number a", "href")
    assert link == "#trace-3"
    page.click("tbody.trial:nth-of-type(3) td.row-number a")
    assert re.search(r"#trace-3$", page.url)
    assert page.is_visible("#trace-3")
    assert "case-02" in str(page.text_content("#trace-3"))


def test_numbers_stay_with_their_rows_when_sorted(rows_page: Page) -> None:
    page = rows_page
    page.click("button.sort[data-sort=case]")
    page.click("button.sort[data-sort=case]")  # descending: case-11 first
    first = page.query_selector("tbody.trial")
    assert first is not None
    assert "case-11" in str(first.text_content())
    assert str(first.query_selector("td.row-number").text_content()).strip() == "12"
    assert first.get_attribute("data-i") == "12"
    assert first.query_selector("tr.trace").get_attribute("id") == "trace-12"
