"""agenteval's side of workloads W1–W3: one fake agent, one exact-match scorer, full store.

    python bench/agenteval_workload.py --cases N --latency-ms L --concurrency C --workdir DIR
        [--stream] [--tool-mocks]

The agent awaits `L` ms (no await at all when `L` is 0) and answers "Paris"; every case expects
"Paris". Only the `evaluate` call is timed. The cases are a list built beforehand, as the
peers get them, or with `--stream` a generator that `evaluate` reads once, into the store (the
way to run more cases than memory holds; building the cases is then inside the timed call).
With `--tool-mocks` the run mocks a tool (`evaluate(..., tool_mocks=...)`) that no case mocks
and the agent never calls: every trial then gets its tool environment, and W1-mocks against W1
is what that costs a case without mocks. Everything is persisted, as in any agenteval run:
the run, every case, every trial and every score go to a SQLite store in `DIR`. The last line
of stdout is one JSON object (see `bench/run.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from peers.protocol import parse_args

import agenteval
from agenteval import EvalCase

# agenteval imports the OpenTelemetry SDK (when installed) on a run's first span capture, not
# with `import agenteval`; like every import, it is timed apart from the workload (in
# bench/run.py's import time), as the peers' imports are.
with contextlib.suppress(ImportError):
    import opentelemetry.sdk.trace  # noqa: F401


def _agent(latency_s: float):  # type: ignore[no-untyped-def]
    if latency_s == 0:

        async def answer(_input: str) -> str:
            return "Paris"

    else:

        async def answer(_input: str) -> str:
            await asyncio.sleep(latency_s)
            return "Paris"

    return answer


MOCK_OF_ANOTHER_TOOL = {"create_ticket": {"result": {"id": "T-1"}}}
"""W1-mocks: the run's mock of a tool the agent never calls."""


def main() -> None:
    argv = sys.argv[1:]
    mocks = "--tool-mocks" in argv
    args = parse_args(
        __doc__.splitlines()[0], [a for a in argv if a != "--tool-mocks"], stream=True
    )
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    store = workdir / "agenteval.db"
    store.unlink(missing_ok=True)

    stream = (
        EvalCase(id=f"case-{i}", input=f"case-{i}", expected_output="Paris")
        for i in range(args.cases)
    )
    cases: Iterable[EvalCase] = stream if args.stream else list(stream)
    agent = _agent(args.latency_ms / 1000)
    start, cpu_start = time.perf_counter(), time.process_time()
    run = agenteval.evaluate(
        agent,
        cases,
        ["exact_match"],
        builtins=False,
        concurrency=args.concurrency,
        store=store,
        tool_mocks=MOCK_OF_ANOTHER_TOOL if mocks else None,
    )
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    passed = run.summary.scorers["exact_match"].passed
    print(
        json.dumps(
            {
                "framework": "agenteval",
                "version": agenteval.__version__,
                "cases": args.cases,
                "passed": passed,
                "seconds": seconds,
                "cpu_seconds": cpu_seconds,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "persists": "every trial and score in SQLite",
                "tool_mocks": mocks,
            }
        )
    )


if __name__ == "__main__":
    main()
