"""`agenteval view` over HTTP, as a user starts it (tests/view/server.py): the addresses, what
each page shows of a stored run, the answers to unknown runs and bad addresses, the security
headers, the XSS corpus through every page, and the command's mistakes as one message."""

from __future__ import annotations

import hashlib
import re
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from html import unescape
from pathlib import Path
from urllib.parse import quote

import pytest
from tests.report.test_html import XSS, Elements, xss_run
from tests.view.bulk import write_bulk_run
from tests.view.server import ROOT, Viewer, running_viewer, view_env, wait_until

from agenteval import evaluate
from agenteval.case import EvalCase
from agenteval.records import RunStatus
from agenteval.store import RunStore

XSS_RUN = "20261130-000000-xss0"


def _right(question: str) -> str:
    i = int(question.split("+")[0])
    return str(2 * i)


def _wrong_on_q3(question: str) -> str:
    return "<script>window.__xss = 1</script>" if question.startswith("3") else _right(question)


def write_runs(path: Path) -> tuple[str, str]:
    """Store the XSS run and two runs of four cases, the second failing `q3`; the two ids."""
    info, results = xss_run()
    with RunStore(path) as opened:
        opened.create_run(info, [r.case for r in results[::2]])
        opened.add_results(info.run_id, results)
        opened.set_status(info.run_id, RunStatus.FINISHED)
    cases = [EvalCase(id=f"q{i}", input=f"{i}+{i}?", expected_output=str(2 * i)) for i in range(4)]
    base = evaluate(_right, cases, store=path)
    candidate = evaluate(_wrong_on_q3, cases, store=path)
    return base.run_id, candidate.run_id


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A store holding the XSS run and two runs of four cases, the second failing `q3`."""
    path = tmp_path_factory.mktemp("view") / "runs.db"
    return (path, *write_runs(path))


@pytest.fixture(scope="module")
def viewer(store: tuple[Path, str, str]) -> Iterator[Viewer]:
    with running_viewer(store[0]) as running:
        yield running


def _summarized(viewer: Viewer, run_id: str) -> None:
    wait_until(lambda: viewer.get(f"/api/runs/{run_id}/progress").json()["summarized"])


def test_the_runs_list_shows_every_run_newest_first(
    viewer: Viewer, store: tuple[Path, str, str]
) -> None:
    _, base, candidate = store
    for run_id in (XSS_RUN, base, candidate):
        _summarized(viewer, run_id)
    page = viewer.get("/")
    assert page.status_code == 200
    text = page.text
    assert text.index(candidate) < text.index(base) < text.index(XSS_RUN)
    assert f'href="/runs/{candidate}"' in text
    assert "4/4" in text and "6/6" in text
    # The candidate failed q3 of its four cases: 3 of 4 trials passing, with its interval.
    assert "3 of 4" in text
    api = {run["run_id"]: run for run in viewer.get("/api/runs").json()}
    assert api[candidate]["status"] == "finished" and api[candidate]["done"] == "4/4"


def test_the_runs_list_filters(viewer: Viewer, store: tuple[Path, str, str]) -> None:
    _, base, _candidate = store
    only_xss = viewer.get("/", params={"q": "xss0"}).text
    assert XSS_RUN in only_xss and base not in only_xss
    none = viewer.get("/", params={"status": "running"}).text
    assert "No run matches these filters." in none
    dated = viewer.get("/", params={"since": "2000-01-01", "until": "2000-01-02"}).text
    assert "No run matches these filters." in dated
    bad = viewer.get("/", params={"since": "yesterday"})
    assert bad.status_code == 400 and "since='yesterday' is not a date" in unescape(bad.text)


def test_a_run_shows_its_summary_cases_and_traces(
    viewer: Viewer, store: tuple[Path, str, str]
) -> None:
    _, _base, candidate = store
    _summarized(viewer, candidate)
    page = viewer.get(f"/runs/{candidate}")
    assert page.status_code == 200
    text = page.text
    for section in ('id="summary"', 'id="cases"', "trials passing", "exact_match"):
        assert section in text
    # Every trial's row and its trace, as the report draws them.
    assert text.count('<tbody class="trial"') == 4
    assert text.count('class="trace"') == 4
    failing = viewer.get(f"/runs/{candidate}", params={"status": "fail"}).text
    assert failing.count('<tbody class="trial"') == 1 and "q3" in failing
    assert "1 of 4 trials" in failing


def test_one_trace_has_its_own_address(viewer: Viewer, store: tuple[Path, str, str]) -> None:
    _, _, candidate = store
    page = viewer.get(f"/runs/{candidate}/trials/q3/0")
    assert page.status_code == 200
    assert "data-open-traces" in page.text and "q3" in page.text
    assert viewer.get(f"/runs/{candidate}/trials/q3/7").status_code == 404
    assert viewer.get(f"/runs/{candidate}/trials/nope/0").status_code == 404


def test_compare_shows_the_changes_and_each_case_side_by_side(
    viewer: Viewer, store: tuple[Path, str, str]
) -> None:
    _, base, candidate = store
    # Made in the background: a page saying so (202) until it is.
    wait_until(lambda: viewer.get(f"/api/compare/{base}/{candidate}").json()["ready"])
    page = viewer.get(f"/compare/{base}/{candidate}")
    assert page.status_code == 200
    assert "1 new failures, 0 new fixes over 4 shared cases" in page.text
    link = f"/compare/{base}/{candidate}/cases/q3"
    assert f'href="{link}"' in page.text
    pair = viewer.get(link)
    assert pair.status_code == 200
    assert pair.text.count('<tbody class="trial"') == 2
    # The runs list's form lands on the same address.
    form = viewer.get("/compare", params={"base": base, "candidate": candidate})
    assert form.status_code == 303 and form.headers["location"] == f"/compare/{base}/{candidate}"
    assert viewer.get(f"/compare/{base}/{candidate}/cases/nope").status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/runs/no-such-run",
        "/runs/no-such-run/summary",
        "/runs/no-such-run/cases",
        "/runs/no-such-run/trials/a/0",
        "/compare/no-such-run/other",
        "/api/runs/no-such-run/progress",
        "/static/../../pyproject.toml",
        "/static/app.py",
        "/nowhere",
    ],
)
def test_unknown_things_answer_404_never_a_traceback(viewer: Viewer, path: str) -> None:
    answer = viewer.get(path)
    assert answer.status_code == 404
    assert "Traceback" not in answer.text


def test_bad_addresses_answer_400_naming_the_field(
    viewer: Viewer, store: tuple[Path, str, str]
) -> None:
    _, _, candidate = store
    for query, named in (("page=x", "page='x'"), ("sort=nope", "sort='nope'"), ("dir=up", "dir")):
        answer = viewer.get(f"/runs/{candidate}?{query}")
        assert answer.status_code == 400 and named in unescape(answer.text)


def test_every_answer_carries_the_security_headers(
    viewer: Viewer, store: tuple[Path, str, str]
) -> None:
    _, _base, candidate = store
    for path in ("/", f"/runs/{candidate}", "/runs/nope", "/static/view.js", "/api/runs"):
        headers = viewer.get(path).headers
        policy = headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src 'self'" in policy
        assert "frame-ancestors 'none'" in policy
        assert headers["x-content-type-options"] == "nosniff"


def test_a_request_for_another_host_is_refused(viewer: Viewer) -> None:
    # A page on another site whose name rebinds to 127.0.0.1 reaches the viewer under its name.
    answer = viewer.get("/", headers={"Host": "evil.example"})
    assert answer.status_code == 400


def test_the_xss_corpus_never_reaches_a_page_unescaped(viewer: Viewer) -> None:
    _summarized(viewer, XSS_RUN)
    _info, results = xss_run()
    pages = ["/", f"/runs/{XSS_RUN}", f"/runs/{XSS_RUN}/summary", f"/runs/{XSS_RUN}/cases"]
    pages += [
        f"/runs/{XSS_RUN}/trials/{quote(r.case.id, safe='')}/{r.trial.trial}" for r in results
    ]
    pages += [f"/compare/{XSS_RUN}/{XSS_RUN}"]
    pages += [f"/runs/{XSS_RUN}?q={quote(XSS[0])}", f"/runs/{XSS_RUN}?tag={quote(XSS[6])}"]
    for path in pages:
        page = viewer.get(path)
        assert page.status_code in (200, 202), (path, page.status_code)
        for payload in XSS:
            for dangerous in ("<script", "<img", "<svg onload", "<iframe", "<details open"):
                if dangerous in payload:
                    assert payload not in page.text, path
        tags = Elements()
        tags.feed(page.text)
        scripts = [attrs for tag, attrs in tags.found if tag == "script"]
        assert all(set(attrs) == {"src"} for attrs in scripts), path
        assert not {"img", "iframe", "object", "embed", "base"} & {t for t, _ in tags.found}
        handlers = [(t, n) for t, attrs in tags.found for n in attrs if n.startswith("on")]
        assert handlers == [], path


def test_the_store_is_never_written(tmp_path: Path, store: tuple[Path, str, str]) -> None:
    path, base, candidate = store
    with RunStore(path) as opened:  # fold the WAL in, so the file alone is the store
        opened.list_runs()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with running_viewer(path) as running:
        for address in ("/", f"/runs/{candidate}", f"/compare/{base}/{candidate}"):
            assert running.get(address).status_code in (200, 202)
        _summarized(running, candidate)
        wait_until(lambda: running.get(f"/api/compare/{base}/{candidate}").json()["ready"])
        assert running.get(f"/compare/{base}/{candidate}").status_code == 200
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def _view(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", "view", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=view_env(),
        timeout=120,
    )


def test_a_corrupt_or_missing_store_is_one_message(tmp_path: Path) -> None:
    garbage = tmp_path / "runs.db"
    garbage.write_bytes(b"not a database at all" * 100)
    done = _view("--store", str(garbage), cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and str(garbage) in done.stderr
    missing = _view("--store", str(tmp_path / "none.db"), cwd=tmp_path)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "agenteval run" in missing.stderr


def test_a_busy_port_is_one_message(tmp_path: Path, store: tuple[Path, str, str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = _view("--store", str(store[0]), "--port", str(port), cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"--port: cannot listen on 127.0.0.1:{port}" in done.stderr


def test_without_the_extra_the_command_says_what_to_install(tmp_path: Path) -> None:
    # As on a machine without `agenteval[view]`: uvicorn cannot be imported.
    script = (
        "import sys; sys.modules['uvicorn'] = None\n"
        "from agenteval.cli import main\n"
        "main(['view', '--store', 'runs.db'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=view_env(),
        timeout=120,
    )
    assert done.returncode == 2
    assert "pip install 'agenteval[view]'" in done.stderr and "Traceback" not in done.stderr


def test_listening_beyond_this_machine_warns(store: tuple[Path, str, str]) -> None:
    with running_viewer(store[0], "--host", "0.0.0.0") as running:
        assert running.get("/").status_code == 200
        running.process.send_signal(2)
        _, err = running.process.communicate(timeout=30)
    assert "not this machine only" in err


def test_importing_agenteval_view_imports_no_web_framework() -> None:
    code = (
        "import sys, agenteval, agenteval.view, agenteval.cli\n"
        "print(sorted(m for m in ('starlette', 'uvicorn') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=view_env(), cwd=ROOT
    )
    assert done.stdout.strip() == "[]", done.stderr


def test_a_run_whose_summary_cannot_be_made_says_why(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    cases = [EvalCase(id=f"q{i}", input=f"{i}+{i}?", expected_output=str(2 * i)) for i in range(3)]
    run = evaluate(_right, cases, store=path)
    # One stored trial no agenteval wrote: the run's one-pass summary stops on it.
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(
            "UPDATE trials SET data = '{\"no\": \"trial\"}' WHERE run_id = ? AND case_id = 'q1'",
            (run.run_id,),
        )
    with running_viewer(path) as running:
        progress = f"/api/runs/{run.run_id}/progress"
        wait_until(lambda: running.get(progress).json()["error"] is not None)
        summary = running.get(f"/runs/{run.run_id}/summary")
        assert summary.status_code == 200  # not pending: the page stops polling
        assert "summary cannot be made" in summary.text and "q1" in unescape(summary.text)
        page = running.get(f"/runs/{run.run_id}")
        assert page.status_code == 200 and "Traceback" not in page.text
        broken = running.get(f"/runs/{run.run_id}/trials/q1/0")
        assert broken.status_code == 503 and "Traceback" not in broken.text
        assert running.get(f"/runs/{run.run_id}/trials/q0/0").status_code == 200


def test_the_runs_list_settles_with_more_runs_than_indexes_kept(tmp_path: Path) -> None:
    # Twelve runs, more than the eight indexes the viewer keeps: every run's figures are
    # shown in the end (each was once built, dropped for the next, built again, forever).
    path = tmp_path / "runs.db"
    for i in range(12):
        write_bulk_run(path, trials=20, target=f"run-{i}.yaml")
    with running_viewer(path) as running:
        wait_until(lambda: not any(run["pending"] for run in running.get("/api/runs").json()))
        runs = running.get("/api/runs").json()
    assert len(runs) == 12 and all(run["rate"] != "…" for run in runs)


def test_a_summary_lists_the_first_flaky_cases_and_counts_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    run_id = write_bulk_run(path, trials=2_000)
    with running_viewer(path) as running:
        wait_until(lambda: running.get(f"/api/runs/{run_id}/progress").json()["summarized"])
        summary = unescape(running.get(f"/runs/{run_id}/summary").text)
    listed = summary.count("data-case-filter=")
    assert listed == 50
    more = re.search(r"and (\d+) more: the case table's \"flaky only\" filter", summary)
    assert more is not None and int(more.group(1)) > 0
