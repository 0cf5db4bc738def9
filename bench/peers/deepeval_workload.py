"""Benchmark workload for DeepEval; runs inside its venv (``bench/.venvs/deepeval``).

Protocol shared by every peer runner::

    python deepeval_workload.py --cases N --latency-ms L --concurrency C --workdir DIR

DeepEval's ``evaluate()`` scores prepared test cases and never calls the system under test,
so the fake agent (await ``asyncio.sleep(L / 1000)``, no sleep at all when L is 0, answer
``"Paris"``) is called inside the one custom async metric, which then exact-matches the
answer against the expected ``"Paris"``.  ``evaluate`` runs with ``max_concurrent=C`` in
DIR (its ``.deepeval/`` run file lands there), telemetry off, no progress bar, no printed
results, and ``write_cache=False``: the default cache rewrites whole JSON files after every
case, which makes a run quadratic in its cases.  Only ``evaluate`` is timed.  The last
stdout line is one JSON object.
"""

from __future__ import annotations

import os

# Before deepeval is imported: it reads these once, at import.
os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "1"
os.environ["DEEPEVAL_NO_INSPECT_PROMPT"] = "1"
os.environ["DEEPEVAL_DISABLE_DOTENV"] = "1"

import asyncio
import sys
import time
from pathlib import Path

from protocol import ANSWER, parse_args, report


def run(cases: int, latency_ms: float, concurrency: int) -> tuple[int, float]:
    """Evaluate the fake agent on ``cases`` test cases; return (cases passed, seconds evaluating)."""
    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig
    from deepeval.metrics import BaseMetric
    from deepeval.test_case import LLMTestCase

    class AgentExactMatch(BaseMetric):
        """Call the fake agent on the case's input, then score 1 if its answer equals the expected."""

        def __init__(self, delay: float, threshold: float = 1.0) -> None:
            # deepeval copies a metric per case by calling __init__ with same-named attributes.
            self.delay = delay
            self.threshold = threshold
            self.async_mode = True

        async def agent(self, question: str) -> str:
            """The system under test: wait the fake latency, then answer."""
            if self.delay:
                await asyncio.sleep(self.delay)
            return ANSWER

        def _score(self, test_case: LLMTestCase, answer: str) -> float:
            """Record the agent's answer on the case and exact-match it against the expected."""
            test_case.actual_output = answer
            self.score = 1.0 if answer == test_case.expected_output else 0.0
            self.reason = "exact match" if self.score else "differs"
            self.success = self.score >= self.threshold
            return self.score

        async def a_measure(self, test_case: LLMTestCase, *args: object, **kwargs: object) -> float:
            """Async path, the one ``evaluate`` takes here."""
            return self._score(test_case, await self.agent(test_case.input))

        def measure(self, test_case: LLMTestCase, *args: object, **kwargs: object) -> float:
            """Sync path (unused with ``run_async=True``)."""
            if self.delay:
                time.sleep(self.delay)
            return self._score(test_case, ANSWER)

        def is_successful(self) -> bool:
            """Whether the last measured case passed."""
            return bool(self.success)

        @property
        def __name__(self) -> str:
            return "Agent Exact Match"

    test_cases = [
        LLMTestCase(name=f"case-{i}", input=f"case-{i}", expected_output=ANSWER)
        for i in range(cases)
    ]
    metric = AgentExactMatch(delay=latency_ms / 1000)
    start = time.perf_counter()
    result = evaluate(
        test_cases,
        [metric],
        async_config=AsyncConfig(run_async=True, max_concurrent=concurrency),
        display_config=DisplayConfig(
            show_indicator=False, print_results=False, inspect_after_run=False
        ),
        # The default (write_cache=True) reloads and rewrites, with fsync, the whole test-run
        # and cache JSON files after every case: quadratic, ~150 ms/case at 2,000 cases.
        cache_config=CacheConfig(write_cache=False, use_cache=False),
    )
    seconds = time.perf_counter() - start
    passed = sum(bool(test.success) for test in result.test_results)
    return passed, seconds


def main(argv: list[str]) -> int:
    """Run the workload in DIR and print its JSON result as the last line of stdout."""
    args = parse_args(__doc__.splitlines()[0], argv)
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    os.chdir(workdir)
    return report(
        "deepeval",
        args.cases,
        ".deepeval/.latest_run_full.json (whole run, ~300 B/case)",
        lambda: run(args.cases, args.latency_ms, args.concurrency),
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
