"""What every peer's W1–W3 runner shares: the command line and the result line.

Stdlib only, so it imports in any peer venv (each runner runs from this folder, which Python
puts first on its path).

    python <peer>_workload.py --cases N --latency-ms L --concurrency C --workdir DIR
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
from collections.abc import Callable
from importlib.metadata import version

ANSWER = "Paris"
"""What the fake agent answers, and what every case expects."""


def parse_args(description: str, argv: list[str], *, stream: bool = False) -> argparse.Namespace:
    """The command line every runner shares (`stream`: also `--stream`, agenteval's own runner
    and the floor's, which run on the repository's Python)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--cases", type=int, required=True)
    parser.add_argument("--latency-ms", type=float, required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    parser.add_argument("--workdir", required=True)
    if stream:
        parser.add_argument("--stream", action="store_true", help="give the cases as a stream")
    args = parser.parse_args(argv)
    if args.cases < 1 or args.concurrency < 1 or args.latency_ms < 0:
        parser.error("--cases and --concurrency must be >= 1, --latency-ms >= 0")
    return args


def report(framework: str, cases: int, persists: str, run: Callable[[], tuple[int, float]]) -> int:
    """Run the workload (`run` gives the cases passed and the seconds evaluating), print the
    JSON result as the last line of stdout, and give the exit code: 1 unless every case passed."""
    try:
        passed, seconds = run()
    except Exception as error:
        print(f"{framework} workload failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print(f"passed {passed}/{cases}")
    result = {
        "framework": framework,
        "version": version(framework),
        "cases": cases,
        "passed": passed,
        "seconds": seconds,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "persists": persists,
    }
    print(json.dumps(result))
    if passed != cases:
        print(f"{framework} workload: only {passed} of {cases} cases passed", file=sys.stderr)
        return 1
    return 0
