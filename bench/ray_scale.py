"""Issue 19's simulated scale test: the `ray` executor with more worker slots than cores.

    python bench/ray_scale.py                       # slots 2,4,8,16; 64 trials of 500 ms; 3 rounds
    python bench/ray_scale.py --slots 2,4 --trials 16 --repeat 1    # a smoke test

One local Ray cluster (a head and one worker node, `bench/executors.py`) is given as many
logical CPUs as the most slots asked for, split over its two nodes: far more than this
machine's cores, which is the simulation: the agent only waits (`--latency-ms`, 500 ms of
`asyncio.sleep`, as a model call would), so a slot costs almost no CPU and the cluster behaves
as a larger one would. For each slot count `S` the same run is made: `--trials` cases, one
trial each, `S` actors (`workers=S`) and concurrency `S`, so each actor runs one trial at a
time (`max_concurrency` 1) and throughput can only come from more actors. Rounds are
interleaved (every slot count once per round, in a rotating order); the figures are medians.

What it shows: trials per second against the ideal (`S / latency`), and how close the
executor stays to it as slots grow: counted over the trials themselves (the first trial's
start to the last one's end, from the stored trials), and over the whole `evaluate` call,
which also starts and stops the `S` actors (timed apart too, `open_seconds`: the same run
with `S` trials of 0 ms, made just before). The cluster's startup and the driver's connection
to it are timed apart, once.

Every measurement goes to `bench/results/ray-scale-<timestamp>.json`; the table (Markdown) to
stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_agents import AGENTS

import agenteval
from agenteval import EvalCase
from executors import BENCH, connect, ray_cluster, trials_span


def run_once(
    address: str, slots: int, trials: int, latency_ms: float, workdir: Path
) -> dict[str, float]:
    """One run of `trials` trials on `slots` actors; its wall time and throughput, and the
    wall time of the same run with a 0 ms agent (the actors' start and stop)."""
    cases = [EvalCase(id=f"c{i}", input=f"c{i}", expected_output="Paris") for i in range(trials)]
    on: dict[str, Any] = {"executor": "ray", "workers": slots, "ray_address": address}

    def evaluate(agent: Any, store: str, how_many: int) -> tuple[float, int, float]:
        start = time.perf_counter()
        run = agenteval.evaluate(
            agent,
            cases[:how_many],
            ["exact_match"],
            builtins=False,
            concurrency=slots,
            store=workdir / store,
            **on,
        )
        seconds = time.perf_counter() - start
        return seconds, run.summary.scorers["exact_match"].passed, trials_span(run)

    opening, _, _ = evaluate(AGENTS[0.0], f"open-{slots}.db", slots)
    seconds, passed, span = evaluate(AGENTS[latency_ms], f"run-{slots}.db", trials)
    if passed != trials:
        raise RuntimeError(f"{slots} slots: {passed} of {trials} trials passed")
    return {
        "slots": slots,
        "seconds": seconds,
        "trials_per_second": trials / seconds,
        "span_seconds": span,
        "span_trials_per_second": trials / span,
        "open_seconds": opening,
        "load_1min": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--slots", default="2,4,8,16")
    parser.add_argument("--trials", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=500.0, choices=sorted(AGENTS))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    slot_counts = [int(s) for s in args.slots.split(",") if s]

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    runs: dict[int, list[dict[str, float]]] = {s: [] for s in slot_counts}
    load_before = os.getloadavg()
    with ray_cluster(max(slot_counts)) as cluster, tempfile.TemporaryDirectory() as tmp:
        connect_s = connect(cluster.address)
        log(
            f"cluster of {cluster.slots} slots up in {cluster.startup_seconds:.1f} s, "
            f"driver connected in {connect_s:.2f} s"
        )
        for round_no in range(args.repeat):
            shift = round_no % len(slot_counts)
            for slots in slot_counts[shift:] + slot_counts[:shift]:
                result = run_once(cluster.address, slots, args.trials, args.latency_ms, Path(tmp))
                runs[slots].append(result)
                log(
                    f"round {round_no + 1}/{args.repeat} slots {slots}: "
                    f"{result['seconds']:.2f} s, {result['trials_per_second']:.1f} trials/s"
                )
    about = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "cpus": os.cpu_count(),
        "trials": args.trials,
        "latency_ms": args.latency_ms,
        "cluster_startup_seconds": cluster.startup_seconds,
        "connect_seconds": connect_s,
        "load_average": {"before": load_before, "after": os.getloadavg()},
    }
    out_dir = BENCH / "results"
    out_dir.mkdir(exist_ok=True)
    out = out_dir / f"ray-scale-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.write_text(json.dumps({"about": about, "runs": runs}, indent=1))
    print(table(runs, args.trials, args.latency_ms, about))
    log(f"every measurement: {out}")
    return 0


def table(
    runs: dict[int, list[dict[str, float]]], trials: int, latency_ms: float, about: dict[str, Any]
) -> str:
    """The Markdown table of medians, one row per slot count."""
    lines = [
        f"{trials} trials of {latency_ms:g} ms, medians of {max(map(len, runs.values()))} "
        f"interleaved rounds, {about['cpus']} CPUs; cluster startup "
        f"{about['cluster_startup_seconds']:.1f} s, driver connection "
        f"{about['connect_seconds']:.2f} s (both apart from the runs).",
        "",
        "| slots (actors) | ideal trials / s | trials / s, first start to last end | of ideal "
        "| trials / s, whole run | whole run's wall time | actors' start and stop |",
        "|---|---|---|---|---|---|---|",
    ]
    for slots, results in runs.items():
        wall = statistics.median(r["seconds"] for r in results)
        rate = statistics.median(r["trials_per_second"] for r in results)
        ideal = slots / (latency_ms / 1000)
        opening = statistics.median(r["open_seconds"] for r in results)
        steady = statistics.median(r["span_trials_per_second"] for r in results)
        lines.append(
            f"| {slots} | {ideal:g} | {steady:.2f} | {steady / ideal:.0%} | {rate:.2f} "
            f"| {wall:.2f} s | {opening:.2f} s |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
