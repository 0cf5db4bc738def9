"""What `agenteval view` costs a user, on a 100,000-trial run, beside the floor and Inspect's view.

    python bench/view.py                      # everything, medians of 3 (~5 min, once the
                                              # Inspect log is cached: see below)
    python bench/view.py --tries 1 --no-peer  # a first look
    python bench/view.py --trials 20000       # a smaller big run

Stores are written straight into SQLite by `tests/view/bulk.py:write_bulk_run` (real rows, as
the store writes them): a 100,000-trial run and a second one (to compare), two 2,000-trial
runs, and 50 runs of 1,000 trials (the runs list). `agenteval view` runs as a user starts it
(`python -m agenteval view --store PATH --port 0`, a process of its own); every figure is one
HTTP request over loopback (httpx, no proxy), whole body read:

- cold: the first request after the viewer starts (a fresh process each try);
- warm: the same again, median of 3;
- summary ready: from a run page's first request (which starts the run's index, built in the
  background) until `/api/runs/RUN/progress` says `summarized`;
- filtered pages (`?status=fail`, `?sort=latency&dir=desc`, `?q=case-04999`): the first
  after the summary is ready, then warm;
- peak RSS: the viewer's VmHWM (/proc), after the first page and after the index is built.

The floor is a bare Starlette app in this file (`--floor-serve`) on the same uvicorn: a page
is one SELECT of 50 trials with their case and scores (LIMIT 50 OFFSET n, in report order),
`json.loads` of each, and a minimal HTML table: what any server must pay for a page.

The peer is Inspect AI's `inspect view` at its pinned release (`bench/peers/setup.py`) over an
Inspect log of as many samples, written with Inspect's own log recorder
(`peers/inspect_view_log.py`; it takes minutes, so it is written once and kept under
`bench/.venvs/inspect-view-logs/`). Inspect's viewer reads its log in the browser (ranges of
the `.eval` zip over `/api/log-bytes`, decompressed and parsed in web workers), so its figure
is the browser's: headless Chromium (Debian's `/usr/bin/chromium`, Playwright) from
navigation until the first sample's row is visible; agenteval's run page is timed the same
way. The table goes to stdout and to `bench/results/view.md`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html import escape
from pathlib import Path
from typing import Any

import httpx

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
CHROMIUM = "/usr/bin/chromium"
INSPECT_LOGS = BENCH / ".venvs" / "inspect-view-logs"
PAGE = 50


# -- processes -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    """A server process this bench started, and a client to it (no proxy, no keep-alive
    reuse across servers)."""

    process: subprocess.Popen[str]
    url: str
    client: httpx.Client

    def get(self, path: str) -> tuple[float, httpx.Response]:
        """Seconds for one GET, body read; the answer (anything but 200/202 fails the bench)."""
        start = time.perf_counter()
        response = self.client.get(path)
        seconds = time.perf_counter() - start
        if response.status_code not in (200, 202):
            raise RuntimeError(f"{self.url}{path}: {response.status_code} {response.text[:300]}")
        return seconds, response

    def peak_rss_mb(self) -> float:
        """The process's peak resident set (VmHWM), in MB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        line = next(row for row in status.splitlines() if row.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_PROXY": "*", "COLUMNS": "200"}


@contextmanager
def serve(command: list[str], address: Callable[[str], str | None]) -> Iterator[Server]:
    """Start `command`, read its output until `address(line)` gives its URL, stop it after
    (Ctrl-C, then kill)."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(),
        cwd=tempfile.gettempdir(),
    )
    assert process.stdout is not None
    url = None
    seen: list[str] = []
    while url is None:
        line = process.stdout.readline()
        if not line:
            process.wait()
            raise RuntimeError(f"{command[:4]} did not start: {''.join(seen)[-2000:]}")
        seen.append(line)
        url = address(line)
    client = httpx.Client(base_url=url, trust_env=False, timeout=600)
    try:
        yield Server(process, url, client)
    finally:
        client.close()
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _after(prefix: str) -> Callable[[str], str | None]:
    def find(line: str) -> str | None:
        if prefix not in line:
            return None
        rest = line.split("http://", 1)[1].split()[0].rstrip("/")
        return "http://" + rest.replace("localhost", "127.0.0.1")

    return find


def agenteval_view(store: Path) -> Any:
    command = [sys.executable, "-m", "agenteval", "view", "--store", str(store), "--port", "0"]
    return serve(command, _after("agenteval view:"))


def floor_server(store: Path) -> Any:
    command = [sys.executable, str(Path(__file__).resolve()), "--floor-serve", str(store)]
    return serve(command, _after("floor:"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def inspect_view(python: Path, log_dir: Path, scratch: Path) -> Any:
    port = _free_port()
    inspect = str(python.parent / "inspect")
    command = [inspect, "view", "start", "--log-dir", str(log_dir), "--port", str(port)]
    command += ["--host", "127.0.0.1"]
    os.environ["XDG_DATA_HOME"] = str(scratch / "xdg")  # Inspect's traces go to scratch
    return serve(command, lambda line: f"http://127.0.0.1:{port}" if "Running on" in line else None)


# -- the floor -------------------------------------------------------------------------------

_FLOOR_SQL = (
    "SELECT c.case_id, t.trial, c.data, t.data,"
    " (SELECT json_group_array(json(s.data)) FROM scores s WHERE s.run_id = t.run_id"
    "  AND s.case_id = t.case_id AND s.trial = t.trial)"
    # CROSS JOIN: cases in order by their index, then each case's trials by the primary key
    # (a plain JOIN lets SQLite scan trials and sort them all: 1.2 s for the last page of 100k).
    " FROM cases c CROSS JOIN trials t ON t.run_id = c.run_id AND t.case_id = c.case_id"
    " WHERE c.run_id = ? ORDER BY c.idx, t.trial LIMIT ? OFFSET ?"
)


def floor_serve(store: Path) -> None:
    """A bare Starlette app: `/runs/RUN?page=N` is one SELECT, json.loads, a minimal table."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    def page(run_id: str, number: int) -> str:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
            rows = db.execute(_FLOOR_SQL, (run_id, PAGE, (number - 1) * PAGE)).fetchall()
        cells = []
        for case_id, trial, case_json, trial_json, scores_json in rows:
            case, result, scores = map(json.loads, (case_json, trial_json, scores_json))
            shown = " ".join(f"{s['name']}={s.get('value')}" for s in scores)
            cells.append(
                f"<tr><td>{escape(case_id)}</td><td>{trial}</td>"
                f"<td>{escape(str(case.get('input')))}</td>"
                f"<td>{escape(str(result.get('output')))}</td>"
                f"<td>{result.get('latency_s')}</td><td>{escape(shown)}</td></tr>"
            )
        return f"<!doctype html><title>{escape(run_id)}</title><table>{''.join(cells)}</table>"

    async def run(request: Request) -> HTMLResponse:
        number = int(request.query_params.get("page", "1"))
        return HTMLResponse(await run_in_threadpool(page, request.path_params["run_id"], number))

    app = Starlette(routes=[Route("/runs/{run_id}", run)])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # before the address is printed: a client may connect at once
    print(f"floor: http://127.0.0.1:{sock.getsockname()[1]}/", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


# -- measuring -------------------------------------------------------------------------------

AGENTEVAL, FLOOR, INSPECT = "agenteval view", "floor", "inspect view"
COLUMNS = (AGENTEVAL, FLOOR, INSPECT)


class Figures:
    """Every figure: row -> column -> the value of each try (the table shows medians)."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[str, dict[str, list[float]]]] = {}
        self.notes: list[str] = []

    def add(self, row: str, unit: str, column: str, value: float) -> None:
        self.rows.setdefault(row, (unit, {}))[1].setdefault(column, []).append(value)

    def cell(self, row: str, column: str) -> str:
        unit, values = self.rows[row]
        if column not in values:
            return "—"
        value = statistics.median(values[column])
        shown = {"s": f"{value:.3f} s", "MB": f"{value:.0f} MB", "KB": f"{value:,.0f} KB"}
        text = shown.get(unit, f"{value:,.0f} {unit}".strip())
        runs = len(values[column])
        return text if runs > 1 else f"{text} (1 run)"

    def table(self) -> str:
        lines = [f"| measure | {' | '.join(COLUMNS)} |", "|---|" + "---|" * len(COLUMNS)]
        for row in self.rows:
            lines.append(f"| {row} | {' | '.join(self.cell(row, c) for c in COLUMNS)} |")
        return "\n".join(lines)


def warm(server: Server, path: str, tries: int = 3) -> float:
    """The median of `tries` requests of `path` (after at least one before)."""
    return statistics.median([server.get(path)[0] for _ in range(tries)])


def wait_summarized(server: Server, run_id: str, limit_s: float = 600) -> None:
    deadline = time.perf_counter() + limit_s
    while time.perf_counter() < deadline:
        if server.get(f"/api/runs/{run_id}/progress")[1].json()["summarized"]:
            return
        time.sleep(0.05)
    raise RuntimeError(f"run {run_id} not summarized in {limit_s} s")


FILTERS = ("?status=fail", "?sort=latency&dir=desc", "?q=case-04999")


def measure_run(
    figures: Figures, size: str, store: Path, run_id: str, trials: int, tries: int
) -> None:
    """A run's pages in `agenteval view`, each try in fresh viewers (cold = first request)."""
    last = -(-trials // PAGE)
    base = f"/runs/{run_id}"
    trace = f"{base}/trials/case-000123/0"
    for _ in range(tries):
        for name, path in (("run page", base), (f"last page (page={last})", f"{base}?page={last}")):
            with agenteval_view(store) as server:
                figures.add(f"{size}: {name}, cold", "s", AGENTEVAL, server.get(path)[0])
        with agenteval_view(store) as server:
            figures.add(f"{size}: one trial's trace, cold", "s", AGENTEVAL, server.get(trace)[0])
        with agenteval_view(store) as server:
            started = time.perf_counter()
            _, first = server.get(base)
            figures.add(f"{size}: run page, size", "KB", AGENTEVAL, len(first.content) / 1e3)
            figures.add(
                f"{size}: peak RSS, first page served", "MB", AGENTEVAL, server.peak_rss_mb()
            )
            figures.add(
                f"{size}: run page, warm, summary still building",
                "s",
                AGENTEVAL,
                warm(server, base),
            )
            wait_summarized(server, run_id)
            figures.add(
                f"{size}: summary ready, from the first request",
                "s",
                AGENTEVAL,
                time.perf_counter() - started,
            )
            _, drawn = server.get(base)
            figures.add(
                f"{size}: run page with its summary, size",
                "KB",
                AGENTEVAL,
                len(drawn.content) / 1e3,
            )
            figures.add(f"{size}: run page, warm", "s", AGENTEVAL, warm(server, base))
            figures.add(
                f"{size}: last page, warm", "s", AGENTEVAL, warm(server, f"{base}?page={last}")
            )
            figures.add(f"{size}: one trial's trace, warm", "s", AGENTEVAL, warm(server, trace))
            for query in FILTERS:
                figures.add(
                    f"{size}: `{query}`, first", "s", AGENTEVAL, server.get(base + query)[0]
                )
                figures.add(f"{size}: `{query}`, warm", "s", AGENTEVAL, warm(server, base + query))
            figures.add(f"{size}: peak RSS, index built", "MB", AGENTEVAL, server.peak_rss_mb())


def measure_floor(
    figures: Figures, size: str, store: Path, run_id: str, trials: int, tries: int
) -> None:
    last = -(-trials // PAGE)
    base = f"/runs/{run_id}"
    for _ in range(tries):
        for name, path in (("run page", base), (f"last page (page={last})", f"{base}?page={last}")):
            with floor_server(store) as server:
                figures.add(f"{size}: {name}, cold", "s", FLOOR, server.get(path)[0])
                warm_name = name.split(" (")[0]
                figures.add(f"{size}: {warm_name}, warm", "s", FLOOR, warm(server, path))
                if path == base:
                    _, page = server.get(path)
                    figures.add(f"{size}: run page, size", "KB", FLOOR, len(page.content) / 1e3)
                    figures.add(
                        f"{size}: peak RSS, first page served", "MB", FLOOR, server.peak_rss_mb()
                    )


def measure_runs_list(figures: Figures, store: Path, runs: int, tries: int) -> None:
    """`/` over `runs` runs: cold, warm, and whether every run's figures settle (each run's
    index is built for its pass rate and cost)."""
    name = f"`/` with {runs} runs"
    for number in range(tries):
        with agenteval_view(store) as server:
            figures.add(f"{name}, cold", "s", AGENTEVAL, server.get("/")[0])
            figures.add(f"{name}, warm", "s", AGENTEVAL, warm(server, "/"))
            if number:
                continue
            # Once: poll as the page does (every second) until no run is pending.
            started = time.perf_counter()
            pending = runs
            while time.perf_counter() - started < SETTLE_S:
                server.get("/")
                pending = sum(row["pending"] for row in server.get("/api/runs")[1].json())
                if not pending:
                    break
                time.sleep(1)
            if pending:
                figures.notes.append(
                    f"{name}: {pending} runs still pending (no pass rate) after {SETTLE_S} s "
                    "of the page polling"
                )
            else:
                elapsed = time.perf_counter() - started
                figures.add(f"{name}, every run's figures shown, after", "s", AGENTEVAL, elapsed)
            figures.add(f"{name}, peak RSS", "MB", AGENTEVAL, server.peak_rss_mb())


SETTLE_S = 30


def measure_compare(
    figures: Figures, size: str, store: Path, base: str, candidate: str, tries: int
) -> None:
    path = f"/compare/{base}/{candidate}"
    for _ in range(tries):
        with agenteval_view(store) as server:
            # The comparison is made in the background: the first answer says so (202) and the
            # page reloads when `/api/compare/...` says it is ready, as the browser does.
            started = time.perf_counter()
            seconds, _ = server.get(path)
            figures.add(f"{size}: `/compare/A/B`, first answer", "s", AGENTEVAL, seconds)
            while not server.get(f"/api{path}")[1].json()["ready"]:
                time.sleep(0.2)
            made = time.perf_counter() - started
            figures.add(f"{size}: `/compare/A/B`, comparison shown, cold", "s", AGENTEVAL, made)
            figures.add(f"{size}: `/compare/A/B`, warm", "s", AGENTEVAL, warm(server, path))
            figures.add(f"{size}: `/compare/A/B`, peak RSS", "MB", AGENTEVAL, server.peak_rss_mb())


# -- in the browser --------------------------------------------------------------------------


def first_row_seconds(url: str, text: str) -> tuple[float, list[str], int]:
    """Headless Chromium: seconds from navigating to `url` until `text` is visible; the
    /api/ requests answered by then (their paths, in order) and the bytes of their answers."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            api: list[int] = []
            paths: list[str] = []

            def answered(response: Any) -> None:
                if "/api/" in response.url:
                    paths.append(response.url.split("/", 3)[3])
                    try:
                        api.append(len(response.body()))
                    except Exception:  # a body gone with a closed page: counted, 0 bytes
                        api.append(0)

            page.on("response", answered)
            start = time.perf_counter()
            page.goto(url)
            page.get_by_text(text, exact=True).first.wait_for(state="visible", timeout=600_000)
            seconds = time.perf_counter() - start
            return seconds, list(paths), sum(api)
        finally:
            browser.close()


def measure_browser_agenteval(
    figures: Figures, size: str, store: Path, run_id: str, tries: int
) -> None:
    for _ in range(tries):
        with agenteval_view(store) as server:
            seconds, _, _ = first_row_seconds(f"{server.url}/runs/{run_id}", "case-000000")
        figures.add(
            f"{size}: Chromium, first trial row visible (fresh server)", "s", AGENTEVAL, seconds
        )


def inspect_log(python: Path, samples: int) -> Path:
    """The kept Inspect log of `samples` samples, written on first use."""
    folder = INSPECT_LOGS / str(samples)
    found = sorted(folder.glob("*.eval"))
    if found:
        return folder
    scratch = Path(tempfile.mkdtemp(prefix="inspect-view-log-"))
    print(f"[view] writing an Inspect log of {samples:,} samples (once; minutes)", file=sys.stderr)
    done = subprocess.run(
        [
            str(python),
            str(BENCH / "peers" / "inspect_view_log.py"),
            "--samples",
            str(samples),
            "--log-dir",
            str(scratch / "logs"),
        ],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_DATA_HOME": str(scratch / "xdg")},
    )
    print(f"[view] {done.stdout.strip()}", file=sys.stderr)
    folder.parent.mkdir(parents=True, exist_ok=True)
    (scratch / "logs").rename(folder)
    return folder


def measure_inspect(figures: Figures, size: str, samples: int, tries: int) -> None:
    sys.path.insert(0, str(BENCH))
    from peers.setup import peer_python

    python = peer_python("inspect-ai")
    folder = inspect_log(python, samples)
    (log,) = sorted(folder.glob("*.eval"))
    figures.notes.append(f"Inspect log: {samples:,} samples, {log.stat().st_size / 1e6:.1f} MB")
    scratch = Path(tempfile.mkdtemp(prefix="inspect-view-"))
    for _ in range(tries):
        with inspect_view(python, folder, scratch) as server:
            seconds, calls, size_bytes = first_row_seconds(server.url + "/", "case-000000")
            figures.add(
                f"{size}: Chromium, first trial row visible (fresh server)", "s", INSPECT, seconds
            )
            figures.add(f"{size}: Chromium, /api/ calls until then", "", INSPECT, len(calls))
            figures.add(
                f"{size}: Chromium, /api/ bytes until then", "KB", INSPECT, size_bytes / 1e3
            )
            figures.add(f"{size}: peak RSS, first page served", "MB", INSPECT, server.peak_rss_mb())
        # The server's part: the same /api/ calls, one after another over HTTP (the browser
        # makes some at once, and between them unpacks and parses in its workers).
        with inspect_view(python, folder, scratch) as server:
            figures.add(
                f"{size}: the first row's /api/ calls over HTTP, cold",
                "s",
                INSPECT,
                replay(server, calls),
            )
            figures.add(
                f"{size}: the first row's /api/ calls over HTTP, warm",
                "s",
                INSPECT,
                replay(server, calls),
            )


def replay(server: Server, paths: list[str]) -> float:
    """Seconds for `paths`, asked in order (the events stream, which never ends, left out;
    `/api/flow` answers 404 to the browser too when the folder has no flow file)."""
    start = time.perf_counter()
    for path in paths:
        if not path.startswith("api/events"):
            response = server.client.get("/" + path)
            if response.status_code >= 500 or response.status_code in (400, 403):
                raise RuntimeError(f"{path}: {response.status_code} {response.text[:300]}")
    return time.perf_counter() - start


# -- stores ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stores:
    """The stores the bench reads, and their runs."""

    big: Path
    big_runs: tuple[str, str]
    small: Path
    small_runs: tuple[str, str]
    many: Path
    many_runs: int


def build(folder: Path, trials: int, many_runs: int) -> Stores:
    sys.path.insert(0, str(ROOT))
    from tests.view.bulk import write_bulk_run

    started = time.perf_counter()
    big, small, many = folder / "big.db", folder / "small.db", folder / "many.db"
    now = datetime.now(UTC)
    big_runs = (
        write_bulk_run(big, trials, created_at=now - timedelta(hours=2)),
        write_bulk_run(big, trials, created_at=now - timedelta(hours=1)),
    )
    small_runs = (
        write_bulk_run(small, 2_000, created_at=now - timedelta(hours=2)),
        write_bulk_run(small, 2_000, created_at=now - timedelta(hours=1)),
    )
    for number in range(many_runs):
        write_bulk_run(many, 1_000, created_at=now - timedelta(minutes=number))
    print(f"[view] stores built in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return Stores(big, big_runs, small, small_runs, many, many_runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100_000, help="the big run's trials")
    parser.add_argument("--tries", type=int, default=3)
    parser.add_argument("--no-peer", action="store_true", help="leave Inspect's view out")
    parser.add_argument("--no-browser", action="store_true", help="no Chromium figures")
    parser.add_argument("--floor-serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor_serve:
        floor_serve(args.floor_serve)
        return
    started = time.perf_counter()
    figures = Figures()
    big = f"{args.trials:,} trials"
    small = "2,000 trials"
    with tempfile.TemporaryDirectory(prefix="agenteval-view-bench-") as scratch:
        stores = build(Path(scratch), args.trials, 50)
        steps: list[tuple[str, Callable[[], None]]] = [
            (
                "big run",
                lambda: measure_run(
                    figures, big, stores.big, stores.big_runs[0], args.trials, args.tries
                ),
            ),
            (
                "floor, big",
                lambda: measure_floor(
                    figures, big, stores.big, stores.big_runs[0], args.trials, args.tries
                ),
            ),
            (
                "small run",
                lambda: measure_run(
                    figures, small, stores.small, stores.small_runs[0], 2_000, args.tries
                ),
            ),
            (
                "floor, small",
                lambda: measure_floor(
                    figures, small, stores.small, stores.small_runs[0], 2_000, args.tries
                ),
            ),
            (
                "runs list",
                lambda: measure_runs_list(figures, stores.many, stores.many_runs, args.tries),
            ),
            (
                "compare small",
                lambda: measure_compare(
                    figures, small, stores.small, *stores.small_runs, args.tries
                ),
            ),
            ("compare big", lambda: measure_compare(figures, big, stores.big, *stores.big_runs, 1)),
        ]
        if not args.no_browser:
            steps.append(
                (
                    "browser",
                    lambda: measure_browser_agenteval(
                        figures, big, stores.big, stores.big_runs[0], args.tries
                    ),
                )
            )
        if not args.no_peer:
            steps.append(
                ("inspect view", lambda: measure_inspect(figures, big, args.trials, args.tries))
            )
        for name, step in steps:
            began = time.perf_counter()
            try:
                step()
            except Exception as exc:  # one step's failure is reported, the rest still run
                figures.notes.append(f"{name} failed: {type(exc).__name__}: {exc}")
            print(f"[view] {name}: {time.perf_counter() - began:.0f} s", file=sys.stderr)
    head = (
        f"`python bench/view.py`, {datetime.now(UTC):%Y-%m-%d}, medians of {args.tries} "
        f'("1 run" where only one), {os.cpu_count()} CPUs, Python {platform.python_version()}, '
        f"SQLite {sqlite3.sqlite_version}; whole bench {time.perf_counter() - started:.0f} s."
    )
    text = "\n\n".join([head, figures.table(), *[f"- {note}" for note in figures.notes]])
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "view.md").write_text(text + "\n")
    raw = {row: {"unit": unit, **values} for row, (unit, values) in figures.rows.items()}
    (RESULTS / "view.json").write_text(json.dumps(raw, indent=1))


if __name__ == "__main__":
    main()
