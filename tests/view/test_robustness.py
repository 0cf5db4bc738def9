"""`agenteval view` under hostile or broken input, as a user would meet it (the security and
robustness review of issue 20): each test starts the real command (tests/view/server.py) over a
real store file and asks it over real HTTP."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.view.bulk import write_bulk_run
from tests.view.server import Viewer, running_viewer, view_env, wait_until

from agenteval import evaluate
from agenteval.case import EvalCase
from agenteval.view import pages as pages_module
from agenteval.view.reader import StoreReader


def _right(question: str) -> str:
    return str(2 * int(question.split("+")[0]))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store of one finished run of four cases."""
    path = tmp_path_factory.mktemp("revsec") / "runs.db"
    cases = [EvalCase(id=f"q{i}", input=f"{i}+{i}?", expected_output=str(2 * i)) for i in range(4)]
    return path, evaluate(_right, cases, store=path).run_id


@pytest.fixture(scope="module")
def viewer(store: tuple[Path, str]) -> Iterator[Viewer]:
    with running_viewer(store[0]) as running:
        yield running


_SECURITY_HEADERS = ("content-security-policy", "x-content-type-options", "referrer-policy")


@pytest.mark.parametrize(
    "query",
    [
        "page=%C2%B2",  # "²": str.isdigit() says yes, int() says no
        "page=" + "9" * 5000,  # beyond Python's int-from-text limit
        "page=100000000000000000000000000000",  # beyond SQLite's integers
        "page=1&page=%C2%B2",
        "sort=latency&page=100000000000000000000000000000",
    ],
)
def test_a_malformed_page_number_is_a_400_not_a_crash(
    viewer: Viewer, store: tuple[Path, str], query: str
) -> None:
    for part in ("", "/cases"):
        answer = viewer.get(f"/runs/{store[1]}{part}?{query}")
        assert answer.status_code in (200, 202, 400), (part, query, answer.status_code)
        assert all(name in answer.headers for name in _SECURITY_HEADERS)
        assert "Traceback" not in answer.text


@pytest.mark.parametrize("trial", ["%C2%B2", "9" * 5000, "99999999999999999999999", "-1"])
def test_a_malformed_trial_number_is_a_404_not_a_crash(
    viewer: Viewer, store: tuple[Path, str], trial: str
) -> None:
    answer = viewer.get(f"/runs/{store[1]}/trials/q1/{trial}")
    assert answer.status_code == 404
    assert all(name in answer.headers for name in _SECURITY_HEADERS)


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_listening_beyond_this_machine_still_refuses_a_rebound_name(
    store: tuple[Path, str], host: str
) -> None:
    # Bound to every address, the viewer is on 127.0.0.1 too: a page on evil.example whose
    # name rebinds to 127.0.0.1 must not read the runs under its own name.
    with running_viewer(store[0], "--host", host) as running:
        assert running.get("/api/runs", headers={"Host": "evil.example"}).status_code == 400
        # What a user on the network types still answers: an address, the machine's name.
        for name in ("127.0.0.1", "192.0.2.7:8000", "[fd00::2]", "localhost"):
            assert running.get("/api/runs", headers={"Host": name}).status_code == 200, name


@contextmanager
def _read_only_folder(folder: Path) -> Iterator[Path]:
    """`folder` as a read-only folder: its permissions for a user, a read-only bind mount for
    root (whom permissions do not stop); skipped where neither can be made."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)
        return
    mounted = folder.with_name(folder.name + "-ro")
    mounted.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command to make a read-only folder as root")
    bind = subprocess.run(["mount", "--bind", str(folder), str(mounted)], capture_output=True)
    if bind.returncode != 0:
        pytest.skip(f"cannot bind-mount as root here: {bind.stderr!r}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(mounted)], check=True)
        yield mounted
    finally:
        subprocess.run(["umount", str(mounted)], check=True)


def test_a_store_in_a_read_only_folder_is_viewed(tmp_path: Path, store: tuple[Path, str]) -> None:
    # A store copied from CI onto a read-only share: no -wal beside it and none can be made.
    folder = tmp_path / "share"
    folder.mkdir()
    with closing(sqlite3.connect(store[0])) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(store[0], folder / "runs.db")
    with _read_only_folder(folder) as read_only, running_viewer(read_only / "runs.db") as running:
        assert store[1] in running.get("/").text
        assert running.get(f"/runs/{store[1]}/trials/q1/0").status_code == 200
        assert sorted(p.name for p in read_only.iterdir()) == ["runs.db"]


def _view(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", "view", "--store", str(store), *args],
        cwd=store.parent,
        capture_output=True,
        text=True,
        env=view_env(),
        timeout=120,
    )


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_a_port_out_of_range_is_one_message_naming_the_port(
    store: tuple[Path, str], port: str
) -> None:
    # 70000 was taken as 70000 % 65536 = 4464: the viewer listened on a port nobody asked for.
    done = _view(store[0], "--port", port)
    assert done.returncode == 2, done.stdout
    assert "agenteval view: http" not in done.stdout
    assert f"--port: {port} is not a port" in done.stderr and "Traceback" not in done.stderr


def test_an_address_not_of_this_machine_is_one_message_naming_the_host(
    store: tuple[Path, str],
) -> None:
    done = _view(store[0], "--host", "198.51.100.7", "--port", "0")  # TEST-NET-2: not ours
    assert done.returncode == 2
    assert "--host: cannot listen on 198.51.100.7" in done.stderr, done.stderr
    assert "--port" not in done.stderr  # the port is not what is wrong
    assert "warning: listening on" not in done.stderr  # it never listened


def test_a_bracketed_ipv6_host_is_understood(store: tuple[Path, str]) -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    with running_viewer(store[0], "--host", "[::1]") as running:
        assert running.client.get(running.url.replace("127.0.0.1", "[::1]") + "/api/runs").json()


def test_the_same_comparison_asked_at_once_is_made_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A comparison of two 100,000-trial runs takes ~30 s and ~250 MB: four reloads of the page
    # made it four times at once (1.2 GB, 100 s each). Asked at once, it is made once.
    path = tmp_path / "runs.db"
    cases = [EvalCase(id=f"q{i}", input=f"{i}+{i}?", expected_output=str(2 * i)) for i in range(4)]
    base = evaluate(_right, cases, store=path).run_id
    candidate = evaluate(_right, cases, store=path).run_id
    made: list[str] = []
    real = pages_module.compare_runs

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append("one")
        time.sleep(0.3)  # a long comparison: the other requests arrive meanwhile
        return real(*args, **kwargs)

    monkeypatch.setattr(pages_module, "compare_runs", counted)
    pages = pages_module.Pages(StoreReader(path), store_label=str(path))
    start = threading.Barrier(8)

    def ask() -> tuple[str, bool]:
        start.wait()
        return pages.compare_page(base, candidate)

    try:
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda _: ask(), range(8)))
        # Each asked while it is made: a page saying so, not another comparison.
        assert all(pending and base in text for text, pending in answers)
        pages.comparison(base, candidate).result()
        text, pending = pages.compare_page(base, candidate)
        assert not pending and "new failures" in text
    finally:
        pages.close()
    assert made == ["one"]


def test_a_long_search_is_a_search_not_a_damaged_store(
    viewer: Viewer, store: tuple[Path, str]
) -> None:
    # Past SQLite's LIKE pattern limit (50,000 bytes) the page said "The store cannot be read
    # ... LIKE or GLOB pattern too complex" (503), as if the file were damaged.
    wait_until(lambda: viewer.get(f"/api/runs/{store[1]}/progress").json()["summarized"])
    for text, found in (("x" * 60_000, 0), ('{"' + "q1" * 20_000, 0)):
        answer = viewer.get(f"/runs/{store[1]}/cases", params={"q": text})
        assert answer.status_code == 200, answer.status_code
        assert f"{found} of 4 trials" in answer.text


def test_ctrl_c_while_a_large_comparison_is_made_stops_at_once(tmp_path: Path) -> None:
    # uvicorn waited for the page being made (a comparison of two large runs, many seconds)
    # before exiting on Ctrl-C; the answer came, then the exit. Now Ctrl-C ends the process
    # with the comparison unanswered, quietly, exit 130.
    path = tmp_path / "runs.db"
    base, candidate = (write_bulk_run(path, trials=40_000) for _ in range(2))
    answers: list[object] = []
    with running_viewer(path) as running:

        def ask() -> None:
            try:
                answers.append(running.get(f"/compare/{base}/{candidate}").status_code)
            except httpx.HTTPError as exc:
                answers.append(type(exc).__name__)

        asking = threading.Thread(target=ask)
        asking.start()
        time.sleep(1.0)  # the request is being answered: the comparison reads both runs
        running.process.send_signal(signal.SIGINT)
        _, err = running.process.communicate(timeout=120)
        asking.join()
        assert running.process.returncode == 130
    assert answers != [200]  # not answered: the process did not wait for it
    assert "Traceback" not in err and "ERROR" not in err, err


def test_a_method_the_viewer_does_not_answer_is_a_405_not_a_404(
    viewer: Viewer, store: tuple[Path, str]
) -> None:
    # POST / said 404 "Nothing at /", which is not so: the page is there, for GET.
    for path in ("/", f"/runs/{store[1]}", "/api/runs", "/static/view.js"):
        answer = viewer.client.post(path)
        assert answer.status_code == 405, (path, answer.status_code)
        assert "GET" in answer.headers["allow"]
        assert all(name in answer.headers for name in _SECURITY_HEADERS)
    assert viewer.client.delete("/nowhere").status_code == 404
