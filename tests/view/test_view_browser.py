"""`agenteval view` in a real headless Chromium (Debian's `chromium`, driven by Playwright), as
the report's browser tests run: the runs list and its filters, opening a run and its traces,
paging through a 100,000-trial run, comparing two runs, a live run updating while another
process writes it, and the XSS corpus through every page. Every page is watched for console
errors, uncaught exceptions, dialogs and any request leaving the viewer."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, Request, sync_playwright
from tests.report.test_html import xss_run
from tests.report.test_html_browser import ARGS, CHROMIUM
from tests.view.bulk import write_bulk_run
from tests.view.server import Viewer, running_viewer, view_env, wait_until
from tests.view.test_app import XSS_RUN, write_runs

from agenteval.case import EvalCase
from agenteval.store import RunStore

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on this machine: `apt-get install chromium` (the browser tests need "
    "Debian's chromium; .ci/run installs it)",
)

BIG = 100_000


@pytest.fixture(scope="module")
def browser(store: tuple[Path, str, str, str]) -> Iterator[Browser]:
    # After the store: Playwright's sync API runs an event loop, inside which evaluate() refuses.
    assert CHROMIUM is not None
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, str]:
    """The XSS run, two runs of four cases (the second failing `q3`) and a 100,000-trial run."""
    path = tmp_path_factory.mktemp("view-browser") / "runs.db"
    base, candidate = write_runs(path)
    big = write_bulk_run(path, trials=BIG)
    return path, base, candidate, big


@pytest.fixture(scope="module")
def viewer(store: tuple[Path, str, str, str]) -> Iterator[Viewer]:
    with running_viewer(store[0]) as running:
        yield running


class Watched:
    """A page with its console errors, uncaught exceptions, dialogs and foreign requests."""

    def __init__(self, page: Page, origin: str) -> None:
        self.page = page
        self.origin = origin
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.on("dialog", self._dialog)
        page.on("request", self._request)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(f"{message.type}: {message.text}")

    def _dialog(self, dialog: Dialog) -> None:
        self.errors.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    def _request(self, request: Request) -> None:
        if not request.url.startswith((self.origin + "/", "data:", "about:")):
            self.errors.append(f"request: {request.url}")

    def trials(self) -> list[str]:
        return list(
            self.page.eval_on_selector_all(
                "#cases tbody.trial td.case-id code", "cells => cells.map(c => c.textContent)"
            )
        )


@pytest.fixture
def page(browser: Browser, viewer: Viewer) -> Iterator[Watched]:
    context = browser.new_context()
    watched = Watched(context.new_page(), viewer.url)
    yield watched
    context.close()
    assert watched.errors == []


def _summarized(viewer: Viewer, run_id: str) -> None:
    wait_until(lambda: viewer.get(f"/api/runs/{run_id}/progress").json()["summarized"])


def test_the_runs_list_filters_and_opens_a_run(
    page: Watched, viewer: Viewer, store: tuple[Path, str, str, str]
) -> None:
    _, _base, _candidate, _big = store
    page.page.goto(viewer.url + "/")
    rows = page.page.locator("tr[data-run]")
    assert rows.count() == 4
    page.page.fill("input[name=q]", "xss0")
    page.page.click("form.filters button[type=submit]")
    page.page.wait_for_url("**/?q=xss0**")
    assert page.page.locator("tr[data-run]").count() == 1
    page.page.click(f"tr[data-run='{XSS_RUN}'] a")
    page.page.wait_for_url(f"**/runs/{XSS_RUN}")
    assert page.page.locator("#cases tbody.trial").count() == 6


def test_a_run_opens_its_traces_and_filters_on_the_server(
    page: Watched, viewer: Viewer, store: tuple[Path, str, str, str]
) -> None:
    _, _, candidate, _ = store
    _summarized(viewer, candidate)
    page.page.goto(f"{viewer.url}/runs/{candidate}")
    assert sorted(page.trials()) == ["q0", "q1", "q2", "q3"]
    trace = page.page.locator("#trace-4")
    assert trace.is_hidden()
    page.page.click("#cases tbody.trial[data-i='4'] button.open-trace")
    assert trace.is_visible()
    assert "window.__xss" in trace.inner_text()  # the answer, shown as text
    page.page.select_option("select[name=status]", "fail")
    page.page.click("#cases form.filters button[type=submit]")
    page.page.wait_for_url("**status=fail**")
    assert page.trials() == ["q3"]
    assert page.page.evaluate("window.__xss") is None


def test_paging_through_a_100000_trial_run(
    page: Watched, viewer: Viewer, store: tuple[Path, str, str, str]
) -> None:
    _, _, _, big = store
    page.page.goto(f"{viewer.url}/runs/{big}")
    # The first page comes straight from the store, before the run is summarized.
    assert page.page.locator("#cases tbody.trial").count() == 50
    assert "trials 1–50 of 100,000" in page.page.inner_text("nav.pager")
    page.page.click("nav.pager a[rel=next]")
    page.page.wait_for_url("**page=2**")
    assert "trials 51–100 of 100,000" in page.page.inner_text("nav.pager")
    page.page.goto(f"{viewer.url}/runs/{big}?page=2000")
    assert "trials 99,951–100,000 of 100,000" in page.page.inner_text("nav.pager")
    numbers = page.page.eval_on_selector_all(
        "#cases td.row-number a", "links => links.map(a => a.textContent)"
    )
    assert numbers[0] == "99951" and numbers[-1] == "100000"
    assert page.page.locator("#cases tbody.trial").count() == 50
    # The summary arrives when every trial is read, without a reload.
    page.page.wait_for_selector("#summary section#overview", timeout=0)
    assert "100000" in page.page.inner_text("#summary").replace(",", "")


def test_comparing_two_runs_from_the_list(
    page: Watched, viewer: Viewer, store: tuple[Path, str, str, str]
) -> None:
    _, base, candidate, _ = store
    page.page.goto(viewer.url + "/")
    page.page.check(f"tr[data-run='{base}'] input[name=base]")
    page.page.check(f"tr[data-run='{candidate}'] input[name=candidate]")
    page.page.click("#compare-form button[type=submit]")
    page.page.wait_for_url(f"**/compare/{base}/{candidate}")
    # Made in the background: the page shows it when it is made.
    page.page.wait_for_selector("#diff", timeout=0)
    assert "1 new failures" in page.page.inner_text("#diff")
    page.page.click("#changed-cases a")
    page.page.wait_for_url("**/cases/q3")
    traces = page.page.locator(".side-by-side tr.trace")
    assert traces.count() == 2 and traces.nth(0).is_visible() and traces.nth(1).is_visible()


_WRITER = """
import sys, time
from agenteval.store import RunStore
from agenteval.records import RunStatus, TrialResult
from agenteval.case import EvalCase
from agenteval.trace import Trial
from agenteval.score import Score
path, run_id, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with RunStore(path) as store:
    for i in range(n):
        sys.stdin.readline()
        case = EvalCase(id=f"live-{i}", input=f"question {i}")
        trial = Trial(case_id=case.id, trial=0, output=f"answer {i}", latency_s=0.1)
        score = Score(name="exact_match", value=1.0 if i % 2 else 0.0, passed=bool(i % 2))
        store.add_result(run_id, TrialResult(case=case, trial=trial, scores={"exact_match": score}))
        print("stored", i, flush=True)
    sys.stdin.readline()
    store.set_status(run_id, RunStatus.FINISHED)
    print("finished", flush=True)
"""


def test_a_live_run_updates_while_another_process_writes_it(
    page: Watched, viewer: Viewer, store: tuple[Path, str, str, str], tmp_path: Path
) -> None:
    from agenteval.records import RunInfo

    path = store[0]
    info = RunInfo(run_id="20991231-000000-live", trials=1, target="live.yaml")
    cases = [EvalCase(id=f"live-{i}", input=f"question {i}") for i in range(3)]
    with RunStore(path) as opened:
        opened.create_run(info, cases)
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), info.run_id, "3"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=view_env(),
    )
    assert writer.stdin is not None and writer.stdout is not None
    try:
        runs = page.page.context.new_page()
        runs.goto(viewer.url + "/")
        assert "0/3" in runs.inner_text(f"tr[data-run='{info.run_id}'] .c-done")
        page.page.goto(f"{viewer.url}/runs/{info.run_id}")
        assert page.trials() == []
        for i in range(3):
            writer.stdin.write("\n")
            writer.stdin.flush()
            assert writer.stdout.readline().startswith("stored")
            wait_until(
                lambda n=i + 1: page.page.locator("#cases tbody.trial").count() == n, tries=3000
            )
        done = runs.locator(f"tr[data-run='{info.run_id}'] .c-done")
        wait_until(lambda: done.inner_text() == "3/3")
        writer.stdin.write("\n")
        writer.stdin.flush()
        assert writer.stdout.readline().startswith("finished")
        status = runs.locator(f"tr[data-run='{info.run_id}'] .c-status")
        wait_until(lambda: status.inner_text().strip() == "finished")
        headline = page.page.locator("#summary p.headline")
        wait_until(lambda: headline.count() and "3 trials" in headline.inner_text())
        assert page.page.locator("#summary .pending").count() == 0
        runs.close()
    finally:
        writer.kill()
        writer.wait()


def test_the_xss_corpus_runs_nowhere(
    page: Watched, viewer: Viewer, store: tuple[Path, str, str, str]
) -> None:
    _summarized(viewer, XSS_RUN)
    _, results = xss_run()
    addresses = ["/", f"/runs/{XSS_RUN}", f"/compare/{XSS_RUN}/{XSS_RUN}"]
    addresses += [
        f"/runs/{XSS_RUN}/trials/{quote(r.case.id, safe='')}/{r.trial.trial}" for r in results
    ]
    addresses += [f"/compare/{XSS_RUN}/{XSS_RUN}/cases/{quote(results[0].case.id, safe='')}"]
    wait_until(lambda: viewer.get(f"/api/compare/{XSS_RUN}/{XSS_RUN}").json()["ready"])
    for address in addresses:
        page.page.goto(viewer.url + address)
        for button in page.page.locator("button.open-trace").all():
            button.click()
        page.page.mouse.move(10, 10)
        for element in page.page.locator("details").all():
            element.evaluate("d => { d.open = true; }")
        assert page.page.evaluate("window.__xss") is None, address
        assert page.page.evaluate("parent.__xss") is None, address
