"""The HTML report in a real headless Chromium (Debian's `chromium`, driven by Playwright): it
loads with no console error, filters and sorting work, traces open, and the XSS corpus never
runs. Skipped, saying why, only where no chromium is installed (`.ci/run` installs it)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, sync_playwright
from tests.report.test_html import (  # noqa: F401  (quickstart_report is a fixture)
    XSS,
    quickstart_report,
    xss_run,
)
from tests.report.test_summary_sections import PRICES

from agenteval.report.html import render_html
from agenteval.report.summary import summarize

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on this machine: `apt-get install chromium` (the browser tests need "
    "Debian's chromium; .ci/run installs it)",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM is not None
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


class Watched:
    """A page with its console errors, uncaught exceptions and dialogs recorded."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.on("dialog", self._dialog)
        # Any request leaving the page (a CDN, an injected image) is an error too.
        page.on("request", self._request)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(f"{message.type}: {message.text}")

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _request(self, request: object) -> None:
        url = getattr(request, "url", "")
        if not url.startswith(("file:", "data:", "about:")):
            self.errors.append(f"request: {url}")

    def visible_cases(self) -> list[str]:
        return list(
            self.page.eval_on_selector_all(
                "tbody.trial:not([hidden]) td.case-id code",
                "cells => cells.map(c => c.textContent)",
            )
        )

    def count(self) -> str:
        return str(self.page.text_content("#f-count"))

    def xss_flag(self) -> object:
        return self.page.evaluate("() => window.__xss ?? null")


def xss_page(tmp_path: Path, strip_csp: bool = False) -> Path:
    info, results = xss_run()
    page = render_html(info, summarize(results, prices=PRICES), results, prices=PRICES)
    if strip_csp:
        start = page.index('<meta http-equiv="Content-Security-Policy"')
        page = page[:start] + page[page.index(">", start) + 1 :]
        assert "Content-Security-Policy" not in page
    out = tmp_path / "report.html"
    out.write_text(page, encoding="utf-8")
    return out


@pytest.fixture
def watched(browser: Browser, tmp_path: Path) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    seen = Watched(page)
    page.goto(xss_page(tmp_path).as_uri())
    page.wait_for_selector("#case-table")
    yield seen
    context.close()


def test_the_page_loads_with_no_console_error(watched: Watched) -> None:
    assert watched.count() == "6 of 6 trials"
    assert watched.errors == []
    assert watched.page.title().startswith("agenteval · run ")


def test_filters_narrow_the_table(watched: Watched) -> None:
    page = watched.page
    page.select_option("#f-status", "error")
    assert watched.count() == "1 of 6 trials"
    assert len(watched.visible_cases()) == 1
    page.select_option("#f-status", "")
    page.select_option("#f-scorer", "exact_match")
    assert watched.count() == "2 of 6 trials"
    page.select_option("#f-scorer", "")
    page.select_option("#f-tag", "tag-1")
    assert watched.count() == "2 of 6 trials"
    assert all(case.startswith("case-1-") for case in watched.visible_cases())
    page.click("#f-reset")
    page.fill("#f-text", "case-2")
    assert watched.count() == "2 of 6 trials"
    page.fill("#f-text", "no such case anywhere")
    assert watched.count() == "0 of 6 trials"
    assert page.is_visible("#no-match")
    page.click("#f-reset")
    assert watched.count() == "6 of 6 trials"
    page.check("#f-flaky")
    flaky = watched.visible_cases()
    assert len(flaky) == 2 and all(case.startswith("case-0-") for case in flaky)
    assert watched.errors == []


def test_sorting_reorders_the_table(watched: Watched) -> None:
    page = watched.page

    def latencies() -> list[float]:
        cells = page.eval_on_selector_all(
            "tbody.trial td:nth-child(7)", "cells => cells.map(c => c.textContent)"
        )
        return [float(cell.split()[0]) for cell in cells]

    page.click("button.sort[data-sort=latency]")
    assert latencies() == sorted(latencies())
    assert page.get_attribute("button.sort[data-sort=latency]", "data-dir") == "asc"
    page.click("button.sort[data-sort=latency]")
    assert latencies() == sorted(latencies(), reverse=True)
    page.click("button.sort[data-sort=status]")
    first = page.text_content("tbody.trial span.badge")
    assert first == "error"
    page.click("button.sort[data-sort=case]")
    cases = page.eval_on_selector_all(
        "tbody.trial td.case-id code", "cells => cells.map(c => c.textContent)"
    )
    assert cases == sorted(cases)
    assert watched.errors == []


def test_a_trace_opens_and_closes(watched: Watched) -> None:
    page = watched.page
    assert not page.is_visible("#trace-1")
    page.click("tbody.trial[data-i='1'] button.open-trace")
    assert page.is_visible("#trace-1")
    assert (
        page.get_attribute("tbody.trial[data-i='1'] button.open-trace", "aria-expanded") == "true"
    )
    trace = str(page.text_content("#trace-1"))
    assert "calculator" in trace and "Steps" in trace and "Scores" in trace
    assert XSS[1] in trace  # shown as text
    page.click("tbody.trial[data-i='1'] button.open-trace")
    assert not page.is_visible("#trace-1")
    assert watched.errors == []


def test_a_trace_opens_from_the_address(browser: Browser, tmp_path: Path) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(xss_page(tmp_path).as_uri() + "#trace-4")
    page.wait_for_selector("#case-table")
    assert page.is_visible("#trace-4")
    assert not page.is_visible("#trace-3")
    context.close()


def exercise(seen: Watched) -> None:
    """Open every trace and every details element, hover everything: whatever could fire."""
    page = seen.page
    for button in page.query_selector_all("button.open-trace"):
        button.click()
    page.eval_on_selector_all("details", "els => els.forEach(e => { e.open = true; })")
    for cell in page.query_selector_all("tbody.trial td")[:40]:
        cell.hover()
    page.select_option("#f-scorer", index=len(page.query_selector_all("#f-scorer option")) - 1)
    page.click("#f-reset")
    page.wait_for_timeout(200)


def test_the_xss_corpus_never_runs(watched: Watched) -> None:
    exercise(watched)
    assert watched.xss_flag() is None
    assert watched.dialogs == []
    assert watched.errors == []
    # Every payload is on the page as text.
    body = str(watched.page.text_content("body"))
    for payload in XSS[:9]:
        assert payload.strip() in body


def test_the_xss_corpus_never_runs_even_without_the_csp(browser: Browser, tmp_path: Path) -> None:
    """Escaping alone holds: the Content-Security-Policy is only a second line of defence."""
    context = browser.new_context()
    seen = Watched(context.new_page())
    seen.page.goto(xss_page(tmp_path, strip_csp=True).as_uri())
    seen.page.wait_for_selector("#case-table")
    exercise(seen)
    assert seen.xss_flag() is None
    assert seen.dialogs == []
    assert seen.errors == []
    context.close()


def test_the_quickstart_report_in_the_browser(
    browser: Browser,
    quickstart_report: tuple[Path, str],  # noqa: F811
) -> None:
    folder, _ = quickstart_report
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    seen = Watched(context.new_page())
    seen.page.goto((folder / "report.html").as_uri())
    seen.page.wait_for_selector("#case-table")
    assert seen.count() == "20 of 20 trials"
    seen.page.select_option("#f-scorer", "tool_execution")
    assert seen.visible_cases() == ["tokyo-fare-unknown"]
    seen.page.click("tbody.trial:not([hidden]) button.open-trace")
    trace = str(seen.page.text_content("tbody.trial:not([hidden]) tr.trace"))
    assert "lookup" in trace and "KeyError" in trace
    assert seen.errors == []
    context.close()
