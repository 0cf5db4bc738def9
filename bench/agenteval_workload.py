"""agenteval's side of workloads W1–W3: one fake agent, one exact-match scorer, full store.

    python bench/agenteval_workload.py --cases N --latency-ms L --concurrency C --workdir DIR
        [--stream] [--tool-mocks] [--executor local|process|ray] [--workers W] [--ray-slots S]

The agent awaits `L` ms (no await at all when `L` is 0) and answers "Paris"; every case expects
"Paris". Only the `evaluate` call is timed. The cases are a list built beforehand, as the
peers get them, or with `--stream` a generator that `evaluate` reads once, into the store (the
way to run more cases than memory holds; building the cases is then inside the timed call).
With `--tool-mocks` the run mocks a tool (`evaluate(..., tool_mocks=...)`) that no case mocks
and the agent never calls: every trial then gets its tool environment, and W1-mocks against W1
is what that costs a case without mocks. Everything is persisted, as in any agenteval run:
the run, every case, every trial and every score go to a SQLite store in `DIR`. The last line
of stdout is one JSON object (see `bench/run.py`).

`--executor process|ray` runs the trials on that executor (`evaluate(executor=...)`, with
`--workers W` when given), and the result's framework is `agenteval[process]` /
`agenteval[ray]`. For `ray`, a local cluster (a head and one worker node sharing `S` CPU slots,
`bench/executors.py`) is started before the timed call and removed after it; its startup
(`startup_seconds`) and the driver's connection to it (`connect_seconds`, made once, before
the runs) are reported apart. So is the executor's own opening: before the timed run, two runs
of one 0 ms trial per worker (`first_open_seconds`, with what only a process's first run pays,
the forkserver and its imports; `open_seconds`, what every run pays to start and stop its
workers, which the timed run pays again). `span_seconds` is the timed run without its opening:
the first trial's start to the last one's end, as the stored trials tell.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import resource
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bench_agents import AGENTS
from peers.protocol import parse_args

import agenteval
from agenteval import EvalCase
from executors import EXECUTOR_KINDS, connect, export_bench_path, ray_cluster, trials_span

# agenteval imports the OpenTelemetry SDK (when installed) on a run's first span capture, not
# with `import agenteval`; like every import, it is timed apart from the workload (in
# bench/run.py's import time), as the peers' imports are.
with contextlib.suppress(ImportError):
    import opentelemetry.sdk.trace  # noqa: F401


def _agent(latency_s: float):  # type: ignore[no-untyped-def]
    # The module-level agents pickle by reference, for every executor's workers; the same
    # code as the closures below, which serve any other latency on `local`.
    if latency_s * 1000 in AGENTS:
        return AGENTS[latency_s * 1000]
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


def _executor_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The executor options, and the rest of the command line (the shared protocol)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--executor", choices=EXECUTOR_KINDS, default="local")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--ray-slots", type=int, default=2)
    return parser.parse_known_args(argv)


def main() -> None:
    where, argv = _executor_args(sys.argv[1:])
    mocks = "--tool-mocks" in argv
    args = parse_args(
        __doc__.splitlines()[0], [a for a in argv if a != "--tool-mocks"], stream=True
    )
    with contextlib.ExitStack() as stack:
        print(json.dumps(_measure(args, where, mocks, stack)))


def _measure(
    args: argparse.Namespace, where: argparse.Namespace, mocks: bool, stack: contextlib.ExitStack
) -> dict[str, object]:
    """Run the workload once (after the executor's warm-up, when not local); its result."""
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
    on: dict[str, Any] = {}
    about: dict[str, Any] = {}
    if where.executor != "local":
        export_bench_path()
        on = {"executor": where.executor, "workers": where.workers}
        if where.executor == "ray":
            cluster = stack.enter_context(ray_cluster(where.ray_slots))
            on["ray_address"] = cluster.address
            about |= {"startup_seconds": cluster.startup_seconds, "ray_slots": cluster.slots}
            about["connect_seconds"] = connect(cluster.address)
        # The first opening in a process also pays what only a process's first run does (the
        # forkserver and its imports, Ray's connection); the second is what every run pays.
        # One trial per worker: the executor's default is a worker per concurrent trial
        # (`process`) or per CPU slot (`ray`).
        workers = where.workers or (
            where.ray_slots if where.executor == "ray" else args.concurrency
        )
        about["first_open_seconds"] = _open_seconds(workdir / "warm1.db", workers, on)
        about["open_seconds"] = _open_seconds(workdir / "warm2.db", workers, on)
    start, cpu_start = time.perf_counter(), time.process_time()
    run = agenteval.evaluate(
        agent,
        cases,
        ["exact_match"],
        builtins=False,
        concurrency=args.concurrency,
        store=store,
        tool_mocks=MOCK_OF_ANOTHER_TOOL if mocks else None,
        **on,
    )
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    passed = run.summary.scorers["exact_match"].passed
    span = trials_span(run)  # read back from the store, after the timing
    local = where.executor == "local"
    return {
        "framework": "agenteval" if local else f"agenteval[{where.executor}]",
        "version": agenteval.__version__,
        "cases": args.cases,
        "passed": passed,
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "persists": "every trial and score in SQLite",
        "tool_mocks": mocks,
        "workers": where.workers,
        "span_seconds": span,
        **about,
    }


def _open_seconds(store: Path, workers: int, on: dict[str, Any]) -> float:
    """How long the executor takes to open and close for a run, apart from its trials: a run
    of one 0 ms trial per worker (so that each is started), in a store of its own. It also
    warms what a first run would pay once per process (imports, Ray's connection)."""
    warm = [EvalCase(id=f"warm-{i}", input="warm", expected_output="Paris") for i in range(workers)]
    start = time.perf_counter()
    agenteval.evaluate(
        AGENTS[0.0],
        warm,
        ["exact_match"],
        builtins=False,
        concurrency=len(warm),
        store=store,
        **on,
    )
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
