"""`agenteval view` as a user starts it: the real command in its own process, on a free port of
127.0.0.1, over a real store file. `Viewer.get` asks it over HTTP (httpx), through no proxy."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
_ADDRESS = re.compile(r"http://[^ /]+:(\d+)/")


class Viewer:
    """A running `agenteval view`: its address and its output so far."""

    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url
        self.client = httpx.Client(base_url=url, trust_env=False, timeout=60)

    def get(self, path: str, **kwargs: object) -> httpx.Response:
        return self.client.get(path, **kwargs)  # type: ignore[arg-type]


def view_env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "NO_PROXY": "*",
        "COLUMNS": "200",
        "PYTHONUNBUFFERED": "1",
    }


_AS_FROM_A_TERMINAL = (
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from agenteval.cli import main; main()"
)
"""`python -m agenteval`, with Ctrl-C as a terminal gives it: a test suite started as a shell's
background job (CI under nohup) passes SIGINT on ignored, and uvicorn (0.55) then stops on it
but exits 0, or 130 only if a page is still being made: the Ctrl-C tests passed or failed by
timing."""


@contextmanager
def running_viewer(store: Path, *args: str, cwd: Path | None = None) -> Iterator[Viewer]:
    """`agenteval view --store STORE --port 0`, until the block ends (then Ctrl-C)."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _AS_FROM_A_TERMINAL,
            "view",
            "--store",
            str(store),
            "--port",
            "0",
            *args,
        ],
        cwd=cwd or store.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=view_env(),
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = _ADDRESS.search(line)
    if match is None:
        process.kill()
        _, err = process.communicate()
        raise AssertionError(f"agenteval view did not start: {line!r} {err}")
    viewer = Viewer(process, f"http://127.0.0.1:{match.group(1)}")
    try:
        yield viewer
    finally:
        viewer.client.close()
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_until(check: object, *, tries: int = 600, every: float = 0.1) -> None:
    """Poll `check()` until it is true (each try `every` seconds apart); fail after `tries`."""
    for _ in range(tries):
        if check():  # type: ignore[operator]
            return
        time.sleep(every)
    raise AssertionError("condition not met")
