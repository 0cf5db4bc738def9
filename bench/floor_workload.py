"""The floor under W1–W3: the same fake agent in a bare asyncio worker pool, with no framework.

    python bench/floor_workload.py --cases N --latency-ms L --concurrency C --workdir DIR

`C` workers take the cases from one iterator, await the agent (`L` ms, no await at all when
`L` is 0), and count the answers equal to "Paris"; nothing is scored, kept or written. No
harness can beat this on the same machine at the same moment, so it tells how much of a
workload's time is the machine's (timers, scheduling, a busy host) rather than a framework's.
The last line of stdout is one JSON object, as every workload runner prints.
"""

from __future__ import annotations

import asyncio
import json
import platform
import resource
import sys
import time

from peers.protocol import parse_args


async def evaluate(cases: int, latency_s: float, concurrency: int) -> int:
    """Run the agent on every case with `concurrency` workers; how many answered right."""

    async def agent(_question: str) -> str:
        if latency_s:
            await asyncio.sleep(latency_s)
        return "Paris"

    questions = iter([f"case-{i}" for i in range(cases)])
    passed = 0

    async def work() -> None:
        nonlocal passed
        for question in questions:
            answer = await agent(question)
            passed += answer == "Paris"

    async with asyncio.TaskGroup() as group:
        for _ in range(min(concurrency, cases)):
            group.create_task(work())
    return passed


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], sys.argv[1:], stream=True)
    start = time.perf_counter()
    passed = asyncio.run(evaluate(args.cases, args.latency_ms / 1000, args.concurrency))
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "framework": "asyncio floor",
                "version": platform.python_version(),
                "cases": args.cases,
                "passed": passed,
                "seconds": seconds,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "persists": "nothing",
            }
        )
    )


if __name__ == "__main__":
    main()
