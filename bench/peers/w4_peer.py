"""What every peer's W4 runner shares: its options, the rate-limited server, the result line.

Stdlib only, so it imports in any peer venv.  The server is agenteval's own
``bench/servers/rate_limited_openai.py`` (stdlib only as well), started as a separate process
exactly as ``bench/w4_rate_limit.py`` starts it, so every framework meets the same server.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

SERVER = Path(__file__).resolve().parent.parent / "servers" / "rate_limited_openai.py"
ANSWER = "Paris"
"""What the server answers, and what every trial expects."""


def parse_args(
    description: str, argv: list[str], *, adaptive_option: bool = False
) -> argparse.Namespace:
    """``--rate --trials --concurrency``, with the defaults of ``bench/w4_rate_limit.py``.

    ``adaptive_option`` adds ``--adaptive``, for a peer that ships its own adaptive concurrency.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rate", type=int, default=100, help="requests admitted per second")
    parser.add_argument("--trials", type=int, default=1500)
    parser.add_argument("--concurrency", type=int, default=64)
    if adaptive_option:
        parser.add_argument("--adaptive", action="store_true", help="the peer's own controller")
    args = parser.parse_args(argv)
    if min(args.rate, args.trials, args.concurrency) < 1:
        parser.error("--rate, --trials and --concurrency must be >= 1")
    return args


def loopback_only() -> None:
    """Keep every request on the loopback server: no key, endpoint or proxy from outside."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        os.environ.pop(name, None)
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"


@dataclass
class Server:
    """The running W4 server: its base URL (ending in ``/v1``) and its stats."""

    url: str
    stats: dict[str, int]


@contextmanager
def rate_limited_server(rate: int) -> Iterator[Server]:
    """Run the W4 server admitting ``rate`` requests a second; read its ``/stats`` on exit."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--rate", str(rate)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().split()
        if line[:1] != ["PORT"]:
            raise RuntimeError(f"the W4 server did not start: {line!r}")
        root = f"http://127.0.0.1:{line[1]}"
        server = Server(url=f"{root}/v1", stats={})
        yield server
        with urllib.request.urlopen(f"{root}/stats", timeout=10) as response:
            server.stats = json.load(response)
    finally:
        process.terminate()
        process.wait(timeout=10)


def result_line(
    framework: str,
    args: argparse.Namespace,
    succeeded: int,
    seconds: float,
    server: Server,
    **extra: object,
) -> str:
    """The JSON result with the keys of agenteval's W4, plus the framework and its version."""
    return json.dumps(
        {
            "workload": "W4",
            "framework": framework,
            "version": version(framework),
            "rate": args.rate,
            "trials": args.trials,
            "concurrency": args.concurrency,
            "succeeded": succeeded,
            "lost": args.trials - succeeded,
            "seconds": round(seconds, 3),
            "goodput_share": round(succeeded / seconds / args.rate, 4),
            "responses_429": server.stats["refused"],
            **extra,
        }
    )
