"""Benchmark workload for pydantic-evals; runs inside its venv (``bench/.venvs/pydantic-evals``).

Protocol shared by every peer runner::

    python pydantic_evals_workload.py --cases N --latency-ms L --concurrency C --workdir DIR

The task under test awaits ``asyncio.sleep(L / 1000)`` (no sleep at all when L is 0) and
answers ``"Paris"``; every case expects ``"Paris"`` and one ``EqualsExpected`` evaluator
scores it.  Only ``Dataset.evaluate`` is timed.  The last stdout line is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import time
from importlib.metadata import version
from pathlib import Path

ANSWER = "Paris"


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Parse the command line every peer runner shares."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, required=True)
    parser.add_argument("--latency-ms", type=float, required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args(argv)
    if args.cases < 1 or args.concurrency < 1 or args.latency_ms < 0:
        parser.error("--cases and --concurrency must be >= 1, --latency-ms >= 0")
    return args


async def run(cases: int, latency_ms: float, concurrency: int) -> tuple[int, float]:
    """Evaluate the fake agent on ``cases`` cases; return (cases passed, seconds evaluating)."""
    from pydantic_evals import Case, Dataset
    from pydantic_evals.evaluators import EqualsExpected

    delay = latency_ms / 1000

    async def agent(question: str) -> str:
        """The system under test: wait the fake latency, then answer."""
        if delay:
            await asyncio.sleep(delay)
        return ANSWER

    dataset = Dataset[str, str, None](
        name="agenteval-bench",
        cases=[
            Case(name=f"case-{i}", inputs=f"case-{i}", expected_output=ANSWER) for i in range(cases)
        ],
        evaluators=[EqualsExpected()],
    )
    start = time.perf_counter()
    report = await dataset.evaluate(agent, max_concurrency=concurrency, progress=False)
    seconds = time.perf_counter() - start
    if report.failures:
        raise RuntimeError(
            f"{len(report.failures)} task failures, first: {report.failures[0].error_message}"
        )
    passed = sum(
        all(result.value is True for result in case.assertions.values()) and bool(case.assertions)
        for case in report.cases
    )
    return passed, seconds


def main(argv: list[str]) -> int:
    """Run the workload and print its JSON result as the last line of stdout."""
    args = parse_args(argv)
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    os.chdir(args.workdir)
    try:
        passed, seconds = asyncio.run(run(args.cases, args.latency_ms, args.concurrency))
    except Exception as error:
        print(f"pydantic-evals workload failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print(f"passed {passed}/{args.cases}")
    result = {
        "framework": "pydantic-evals",
        "version": version("pydantic-evals"),
        "cases": args.cases,
        "passed": passed,
        "seconds": seconds,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "persists": "nothing (report in memory)",
    }
    print(json.dumps(result))
    if passed != args.cases:
        print(
            f"pydantic-evals workload: only {passed} of {args.cases} cases passed", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
