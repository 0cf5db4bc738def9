"""Workload W4, rate limit: agenteval's built-in agent against a server that admits R per second.

    python bench/w4_rate_limit.py [--rate 100] [--trials 1500] [--concurrency 64] [--no-adaptive]
                                  [--whole-seconds]

Starts `bench/servers/rate_limited_openai.py` in a separate process (a loopback
OpenAI-compatible HTTP server admitting R requests per fixed one-second window, answering the
rest 429 with the time left in the window as ``Retry-After``), then runs N trials through
`agenteval.evaluate_async` with the built-in agent (`openai:` provider, one model call per
trial, no tools; the server answers "Paris", which every case expects), scored by `exact_match`
and stored in SQLite as in any run. Only the evaluate call is timed.

The last line of stdout is one JSON object: the rate, trials, trials that succeeded and were
lost (a trial is lost when it did not answer "Paris"), seconds, ``goodput_share`` (succeeded
per second, as a share of R), the 429s the server sent, and the endpoint's adaptive limit: its
``peak_limit`` (the highest it climbed back to after its first cut), ``final_limit``,
``lowest_limit`` and ``cuts`` (null without the controller). ``--no-adaptive`` runs the agent
with ``adaptive: false``: plain retries only, for comparison. ``--whole-seconds`` makes the
server round ``Retry-After`` up to whole seconds, as most providers send it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import agenteval
from agenteval import EvalCase
from agenteval.agents.builtin import builtin_agent
from agenteval.throttle import shared_limits

SERVER = Path(__file__).parent / "servers" / "rate_limited_openai.py"


def _start_server(rate: int, *, whole_seconds: bool) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--rate", str(rate)]
        + (["--whole-seconds"] if whole_seconds else []),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline().split()
    if line[:1] != ["PORT"]:
        server.kill()
        raise SystemExit(f"the W4 server did not start: {line!r}")
    return server, f"http://127.0.0.1:{line[1]}"


def _finite(value: float | None) -> float | None:
    return None if value is None or math.isinf(value) else round(value, 2)


async def _run(args: argparse.Namespace, url: str, store: Path) -> dict[str, Any]:
    agent = builtin_agent(
        {"model": "openai:w4-model", "base_url": f"{url}/v1", "adaptive": not args.no_adaptive}
    )
    cases = [
        EvalCase(id=f"q{i}", input=f"What is the capital of France? ({i})", expected_output="Paris")
        for i in range(args.trials)
    ]
    start = time.perf_counter()
    run = await agenteval.evaluate_async(
        agent,
        cases,
        ["exact_match"],
        builtins=False,
        concurrency=args.concurrency,
        store=store,
    )
    seconds = time.perf_counter() - start
    succeeded = sum(1 for r in run.results if r.trial.failure is None and r.trial.output == "Paris")
    limits = list(shared_limits().values())
    limit = limits[0] if limits else None
    return {
        "succeeded": succeeded,
        "seconds": seconds,
        "peak_limit": _finite(limit.peak_since_cut) if limit else None,
        "final_limit": _finite(limit.limit) if limit else None,
        "lowest_limit": _finite(limit.lowest) if limit else None,
        "cuts": limit.cuts if limit else None,
        "trial_retries": sum(sum(r.trial.retries.values()) for r in run.results),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rate", type=int, default=100, help="requests admitted per second")
    parser.add_argument("--trials", type=int, default=1500)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--no-adaptive", action="store_true", help="plain retries only")
    parser.add_argument("--whole-seconds", action="store_true", help="Retry-After in whole seconds")
    args = parser.parse_args()
    # Every request goes to the loopback server: no key or endpoint from the environment.
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        os.environ.pop(name, None)
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"

    server, url = _start_server(args.rate, whole_seconds=args.whole_seconds)
    try:
        with tempfile.TemporaryDirectory(prefix="agenteval-w4-") as workdir:
            result = asyncio.run(_run(args, url, Path(workdir) / "agenteval.db"))
        with urllib.request.urlopen(f"{url}/stats", timeout=10) as response:
            stats = json.load(response)
    finally:
        server.terminate()
        server.wait(timeout=10)
    succeeded, seconds = result["succeeded"], result["seconds"]
    print(
        json.dumps(
            {
                "workload": "W4",
                "adaptive": not args.no_adaptive,
                "retry_after": "whole seconds" if args.whole_seconds else "exact",
                "rate": args.rate,
                "trials": args.trials,
                "concurrency": args.concurrency,
                "succeeded": succeeded,
                "lost": args.trials - succeeded,
                "seconds": round(seconds, 3),
                "goodput_share": round(succeeded / seconds / args.rate, 4),
                "responses_429": stats["refused"],
                "peak_limit": result["peak_limit"],
                "final_limit": result["final_limit"],
                "lowest_limit": result["lowest_limit"],
                "cuts": result["cuts"],
                "trial_retries": result["trial_retries"],
            }
        )
    )


if __name__ == "__main__":
    main()
