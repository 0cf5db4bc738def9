"""Benchmark workload for pydantic-evals; runs inside its venv (``bench/.venvs/pydantic-evals``).

Protocol shared by every peer runner::

    python pydantic_evals_workload.py --cases N --latency-ms L --concurrency C --workdir DIR

The task under test awaits ``asyncio.sleep(L / 1000)`` (no sleep at all when L is 0) and
answers ``"Paris"``; every case expects ``"Paris"`` and one ``EqualsExpected`` evaluator
scores it.  Only ``Dataset.evaluate`` is timed.  The last stdout line is one JSON object.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from protocol import ANSWER, parse_args, report


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
    args = parse_args(__doc__.splitlines()[0], argv)
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    os.chdir(args.workdir)
    return report(
        "pydantic-evals",
        args.cases,
        "nothing (report in memory)",
        lambda: asyncio.run(run(args.cases, args.latency_ms, args.concurrency)),
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
