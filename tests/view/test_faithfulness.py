"""The viewer shows what the one-file report shows: a real run (`agenteval run` in its own
process: flaky cases over several trials, failures, errors, unscored trials, tags, case ids in
mixed case) read through a real `agenteval view` over HTTP, against `agenteval report --html` of
the same stored run. The report's case table is judged from the JSON its own script reads
(`#trials-data`) with report.js's rules (`_report_search`, `_report_sort`)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
import yaml
from playwright.sync_api import sync_playwright
from tests.view.bulk import write_bulk_run
from tests.view.server import Viewer, running_viewer, view_env, wait_until

from agenteval.score import Score
from agenteval.store import RunStore
from agenteval.view.pages import Pages
from agenteval.view.reader import StoreReader

_AGENT = """
import random

def answer(question: str) -> str:
    if "boom" in question:
        raise RuntimeError("agent exploded")
    if "flip" in question:
        return "yes" if random.random() < 0.5 else "no"
    return "yes"
"""
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
_KINDS = ("ok", "flip", "boom", "none", "wrong")
_TAGS: tuple[list[str], ...] = (["alpha"], ["beta"], ["alpha", "gamma"], [], ["beta"])


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[dict[str, Any]]]:
    """A store with one real run of 24 cases x 3 trials, and the rows of its report.html."""
    folder = tmp_path_factory.mktemp("revtruth")
    (folder / "agent.py").write_text(_AGENT, encoding="utf-8")
    cases = []
    for i in range(24):
        kind = _KINDS[i % 5]
        case: dict[str, Any] = {
            # Mixed case and punctuation: a plain order and a locale's differ on these.
            "id": f"Case-{i:02d}" if i % 2 else f"case_{i:02d}",
            "input": f"question {i} {kind}",
            "tags": _TAGS[i % 5],
        }
        if kind != "none":
            case["expected_output"] = "no" if kind == "wrong" else "yes"
        cases.append(case)
    (folder / "cases.yaml").write_text(yaml.safe_dump(cases), encoding="utf-8")
    (folder / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: agent.py:answer\ntrials: 3\nretries: 0\n", encoding="utf-8"
    )
    store = folder / "runs.db"
    command = [sys.executable, "-m", "agenteval"]
    env = {**view_env(), "AGENTEVAL_STORE": str(store)}
    subprocess.run([*command, "run", "."], cwd=folder, env=env, capture_output=True, check=False)
    listed = subprocess.run(
        [*command, "runs"], cwd=folder, env=env, capture_output=True, text=True, check=True
    )
    run_id = re.findall(r"\d{8}-\d{6}-[0-9a-f]{4}", listed.stdout)[0]
    report = folder / "report.html"
    subprocess.run(
        [*command, "report", run_id, "--html", str(report)], cwd=folder, env=env, check=True
    )
    text = report.read_text(encoding="utf-8")
    found = re.search(r'<script[^>]*id="trials-data"[^>]*>(.*?)</script>', text, re.S)
    assert found is not None
    return store, run_id, json.loads(found.group(1))


@pytest.fixture(scope="module")
def viewer(stored: tuple[Path, str, list[dict[str, Any]]]) -> Iterator[Viewer]:
    with running_viewer(stored[0]) as running:
        run_id = stored[1]
        wait_until(lambda: running.get(f"/runs/{run_id}/summary").status_code == 200)
        yield running


def _numbers(page: str) -> list[int]:
    """The # of every trial row on a page of the viewer's table, in the page's order."""
    return [int(n) for n in re.findall(r'<tbody class="trial" data-i="(\d+)">', page)]


def _count(page: str) -> str:
    found = re.search(r'id="f-count"[^>]*>([^<]*)<', page)
    assert found is not None
    return unescape(found.group(1))


def _report_search(rows: list[dict[str, Any]], query: str) -> list[int]:
    """report.js's `matches` on its search box alone."""
    q = query.strip().lower()
    return [r["i"] for r in rows if q in r["text"] or q in r["case"].lower()]


def test_search_finds_what_the_reports_search_finds_and_not_the_stored_json(
    viewer: Viewer, stored: tuple[Path, str, list[dict[str, Any]]]
) -> None:
    # Before the fix the viewer searched the stored JSON whole: `latency_s` or `trial` (its
    # keys) found every trial, `yes` every case expecting it, `agent exploded` the errors;
    # the report finds none of these but `yes` in the answers.
    _, run_id, rows = stored
    for query in (
        "latency_s",
        "trial",
        "expected_output",
        "agent exploded",
        "yes",
        "NO",
        "alpha",
        "gamma",
        "case-0",
        "CASE_1",
        "question 1",
        " flip ",
        "zzz",
    ):
        page = viewer.get(f"/runs/{run_id}", params={"q": query}).text
        expected = _report_search(rows, query)
        assert _count(page) == f"{len(expected)} of {len(rows)} trials", query
        assert _numbers(page) == expected[:50], query


def _pager(page: str) -> str:
    found = re.search(r"<span>(trials [^<]*)</span>", page)
    assert found is not None
    return unescape(found.group(1))


def test_a_page_past_the_end_shows_the_last_page_its_pager_names(
    viewer: Viewer, stored: tuple[Path, str, list[dict[str, Any]]]
) -> None:
    # Before the fix, ?page=9 said "trials 51–72 of 72 · page 2 of 2" over an empty table
    # and "No trial matches these filters."
    _, run_id, rows = stored
    numbers = [r["i"] for r in rows]
    page = viewer.get(f"/runs/{run_id}", params={"page": 9}).text
    assert _pager(page) == "trials 51–72 of 72 · page 2 of 2"
    assert _numbers(page) == numbers[50:] and "No trial matches" not in page
    failed = [r["i"] for r in rows if r["status"] == "fail"]
    assert 0 < len(failed) <= 50
    page = viewer.get(f"/runs/{run_id}", params={"status": "fail", "page": 3}).text
    assert _pager(page) == f"trials 1–{len(failed)} of {len(failed)} · page 1 of 1"
    assert _numbers(page) == failed
    empty = viewer.get(f"/runs/{run_id}", params={"q": "zzz", "page": 2}).text
    assert _numbers(empty) == [] and "No trial matches these filters." in empty


_SORTS = ("index", "case", "trial", "status", "failing", "score", "latency", "tokens", "cost")


def _viewer_order(viewer: Viewer, run_id: str, params: dict[str, str]) -> list[int]:
    order: list[int] = []
    for page in (1, 2):
        order += _numbers(viewer.get(f"/runs/{run_id}", params={**params, "page": page}).text)
    return order


def test_the_runs_order_reversed_by_its_hash_column_is_reversed(
    viewer: Viewer, stored: tuple[Path, str, list[dict[str, Any]]]
) -> None:
    # Before the fix, clicking '#' (the column's link: sort=index&dir=desc) drew the run in
    # its own order, 1 first, under a header saying "descending".
    _, run_id, rows = stored
    first = viewer.get(f"/runs/{run_id}").text
    link = re.search(r'<a class="sort" href="([^"]*)">#</a>', first)
    assert link is not None
    reversed_page = viewer.get(unescape(link.group(1)).split("#")[0]).text
    assert _numbers(reversed_page) == [r["i"] for r in rows][::-1][:50]
    assert 'aria-sort="descending"><a class="sort"' in reversed_page


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
def test_every_sort_orders_the_trials_as_the_reports_table_does(
    viewer: Viewer, stored: tuple[Path, str, list[dict[str, Any]]]
) -> None:
    # Before the fix the report sorted case ids with localeCompare ("case_00" before
    # "Case-01", and whatever the browser's locale says) and the viewer by code point
    # ("Case-01" first): the two tables listed the same run in different orders.
    store, run_id, _ = stored
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto((store.parent / "report.html").as_uri())
            for field in _SORTS:
                for direction in ("asc", "desc"):
                    button = "i" if field == "index" else field  # report.js calls '#' i
                    page.click(f"button.sort[data-sort={button}]")
                    shown = page.eval_on_selector_all(
                        "tbody.trial", "els => els.map(e => Number(e.dataset.i))"
                    )
                    params = {"sort": field, "dir": direction}
                    assert _viewer_order(viewer, run_id, params) == shown, (field, direction)
        finally:
            browser.close()


def test_the_viewer_sees_runs_stored_after_a_writer_has_closed_the_file(tmp_path: Path) -> None:
    # Before the fix: the viewer opens a second read-only connection, whose opening read the
    # file's header with Python's open() and closed it, which (POSIX) dropped every lock the
    # viewer's process held on the file. The next writer to close (`agenteval run`, `rescore`)
    # saw itself alone, folded and deleted the WAL, and the viewer read its old picture for
    # good: a run stored, rescored or started afterwards never showed until a restart.
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "agent.py").write_text("def answer(question: str) -> str:\n    return 'yes'\n")
    (folder / "cases.yaml").write_text(
        yaml.safe_dump(
            [{"id": f"c{i}", "input": f"q{i}", "expected_output": "yes"} for i in range(3)]
        )
    )
    (folder / "agenteval.yaml").write_text("dataset: cases.yaml\nagent: agent.py:answer\n")
    store = tmp_path / "runs.db"
    env = {**view_env(), "AGENTEVAL_STORE": str(store)}
    command = [sys.executable, "-m", "agenteval", "run", "."]
    subprocess.run(command, cwd=folder, env=env, capture_output=True, check=True)
    with running_viewer(store) as viewer:
        # Every page's reads: more than one connection of the viewer's open at once.
        first = viewer.get("/api/runs").json()[0]["run_id"]
        assert viewer.get(f"/runs/{first}").status_code == 200
        wait_until(lambda: viewer.get(f"/runs/{first}/summary").status_code == 200)
        for _ in range(2):  # the first writer's close deleted the WAL; the second is unseen
            subprocess.run(command, cwd=folder, env=env, capture_output=True, check=True)
        answer = viewer.get("/api/runs")
        assert answer.status_code == 200, answer.text
        wait_until(lambda: len(viewer.get("/api/runs").json()) == 3, tries=100)


def test_the_runs_list_keeps_polling_while_a_changed_runs_pass_rate_is_redone(
    tmp_path: Path,
) -> None:
    # Before the fix, a run just finished (or rescored) was listed with its older index's
    # pass rate and `pending: false`, so the runs list stopped polling and kept, say,
    # "34 of 93" where `agenteval show` says "34 of 96" until the page was reloaded.
    path = tmp_path / "runs.db"
    run_id = write_bulk_run(path, trials=20)
    pages = Pages(StoreReader(path, refresh_s=0), store_label="test")
    try:
        pages.runs_rows()
        assert pages.cache.wait(run_id, 60).index is not None
        before = pages.runs_rows()[0]
        assert not before["pending"]
        with RunStore(path) as store:
            first = next(
                r
                for r in store.iter_results(run_id)
                if r.trial.failure is None and r.scores["exact_match"].passed
            )
            failed = Score(name="exact_match", value=0.0, passed=False, reason="rescored")
            store.replace_scores(
                run_id, first.case.id, first.trial.trial, {"exact_match": failed}, merge=True
            )
        changed = pages.runs_rows()[0]
        assert changed["pending"]  # the list polls on: its rate is being redone
        pages.cache.wait(run_id, 60)
        after = pages.runs_rows()[0]
        assert not after["pending"] and after["rate"] != before["rate"]
    finally:
        pages.close()


def test_a_comparison_notes_what_agenteval_compare_notes_of_an_unfinished_run(
    tmp_path: Path,
) -> None:
    # Before the fix the viewer's comparison (and the report's baseline diff) left out
    # `agenteval compare`'s notes that a run is unfinished, partial or missing trials ("only
    # its stored trials are compared") and that cases went unjudged: a comparison against a
    # run still being written read as a whole one.
    path = tmp_path / "runs.db"
    base = write_bulk_run(path, trials=20)
    candidate = write_bulk_run(path, trials=20, finished=False)
    printed = subprocess.run(
        [sys.executable, "-m", "agenteval", "compare", base, candidate, "--store", str(path)],
        env=view_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    notes = [
        " ".join(line.removeprefix("note: ").split())
        for line in re.split(r"\n(?=\S)", printed.stdout + printed.stderr)
        if line.startswith("note: ") and "only its stored trials" in line
    ]
    assert notes, printed.stdout + printed.stderr
    with running_viewer(path) as viewer:
        wait_until(lambda: viewer.get(f"/api/compare/{base}/{candidate}").json()["ready"])
        page = unescape(re.sub(r"\s+", " ", viewer.get(f"/compare/{base}/{candidate}").text))
    for note in notes:
        assert note in page


def test_a_trace_is_numbered_as_in_the_report_before_the_runs_index_is_built(
    stored: tuple[Path, str, list[dict[str, Any]]],
) -> None:
    # Before the fix a trial's own page, opened before its run's index was built (a fresh
    # viewer, a large run), numbered it 1 ('#1', '#trace-1'), and the side-by-side page its
    # trials 1, 2, 3, whatever their place in the run.
    store, run_id, rows = stored
    last = rows[-1]
    with running_viewer(store) as fresh:
        page = fresh.get(f"/runs/{run_id}/trials/{last['case']}/{last['trial']}").text
    assert _numbers(page) == [last["i"]]
    with running_viewer(store) as fresh:
        page = fresh.get(f"/compare/{run_id}/{run_id}/cases/{last['case']}").text
    same_case = [r["i"] for r in rows if r["case"] == last["case"]]
    assert _numbers(page) == same_case * 2


def test_the_runs_list_shows_every_runs_pass_rate_with_more_runs_than_indexes_kept(
    tmp_path: Path,
) -> None:
    # Before the fix, with more runs than the 8 indexes kept, each poll of the list asked for
    # every run's index, dropping one built to make room and rebuilding it at the next poll:
    # the smallest runs were rebuilt over and over, the others showed '…' for good.
    path = tmp_path / "runs.db"
    runs = [write_bulk_run(path, trials=2 * (n + 1)) for n in range(10)]
    with running_viewer(path) as viewer:

        def settled() -> bool:
            listed = viewer.get("/api/runs").json()
            return len(listed) == 10 and not any(row["pending"] for row in listed)

        wait_until(settled, tries=300)
        listed = {row["run_id"]: row for row in viewer.get("/api/runs").json()}
    assert sorted(listed) == sorted(runs)
    assert all(row["rate"] not in ("…", "") for row in listed.values())
