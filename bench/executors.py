"""What the benchmark needs to run agenteval on its `process` and `ray` executors.

    with ray_cluster(slots=4) as cluster:   # head + one worker node, 2 slots each
        agenteval.evaluate(..., executor="ray", ray_address=cluster.address)

`ray_cluster` starts a real Ray cluster on this machine (a head node and one worker node, each
its own raylet, on 127.0.0.1) in a temporary directory of its own, and removes exactly its own
nodes by handle when done. Never `ray stop` or `Cluster.shutdown()`-style sweeps: other
sessions run Ray on this machine, and a sweep would kill their nodes too. Ray's `Cluster`
writes the head's address to `/tmp/ray/ray_current_cluster`, where a bare `ray.init()` in
another session would find it and join this cluster (and lose it when it goes): the file is
put back as it was as soon as the head is up.

Ray is imported only inside `ray_cluster`, so the `local` and `process` runs never load it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
EXECUTOR_KINDS = ("local", "process", "ray")
LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def export_bench_path() -> None:
    """Put `bench/` on the `PYTHONPATH` of every process started from now on (pool workers,
    Ray's raylets and their workers), so that they import `bench_agents` as the driver does."""
    paths = [str(BENCH), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))


@dataclass(frozen=True)
class RayCluster:
    """A started local cluster: its GCS address (what `ray_address=` takes), its CPU slots
    and how long it took to start (Ray's startup, kept apart from the per-trial figures)."""

    address: str
    slots: int
    startup_seconds: float


@contextlib.contextmanager
def ray_cluster(slots: int = 2, nodes: int = 2) -> Iterator[RayCluster]:
    """A head node and `nodes - 1` worker nodes sharing `slots` CPU slots (logical CPUs,
    overcommitted past the machine's cores when `slots` is larger: the scale test's
    simulated cluster). Started and stopped with this block, by handle."""
    export_bench_path()
    # Ray swaps 127.0.0.1 for the host's outward address when a driver connects, unless its
    # "cluster mode" is off; off, every node and driver stays on the loopback interface. Read
    # when Ray is imported, hence before the import, and inherited by the nodes' processes.
    os.environ[LOOPBACK_ONLY] = "0"
    from ray.cluster_utils import Cluster

    # Short: Ray's Unix socket paths live under it, and a socket path is at most 107 bytes.
    temp_dir = tempfile.mkdtemp(prefix="rayb", dir="/tmp")
    per_node = [slots // nodes + (1 if i < slots % nodes else 0) for i in range(nodes)]
    common: dict[str, Any] = {
        "temp_dir": temp_dir,
        "node_ip_address": "127.0.0.1",
        "object_store_memory": 100 * 1024 * 1024,
    }
    start = time.perf_counter()
    cluster = Cluster(shutdown_at_exit=False)
    try:
        with _terminated_as_exit(), _address_file_kept():
            cluster.add_node(num_cpus=per_node[0], include_dashboard=False, **common)
        for cpus in per_node[1:]:
            cluster.add_node(num_cpus=cpus, **common)
        cluster.wait_for_nodes()
        startup = time.perf_counter() - start
        with _terminated_as_exit():
            yield RayCluster(str(cluster.address), slots, startup)
    finally:
        _disconnect()
        handles = [*cluster.worker_nodes, *([cluster.head_node] if cluster.head_node else [])]
        for node in handles:  # the worker nodes, then the head
            with contextlib.suppress(Exception):
                cluster.remove_node(node, allow_graceful=True)
        _kill_left_in(temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)


def _kill_left_in(temp_dir: str) -> None:
    """Kill what is left of this cluster: the processes whose command line names its private
    directory (a node interrupted while it started is in no handle). That directory is this
    cluster's alone, so no other session's Ray process can match."""
    import psutil  # type: ignore[import-untyped]

    for process in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            if any(temp_dir in part for part in process.info["cmdline"] or ()):
                process.kill()


@contextlib.contextmanager
def _terminated_as_exit() -> Iterator[None]:
    """While the cluster runs, SIGTERM (a benchmark stopped by `kill`) exits through the
    `finally` that removes the nodes, instead of leaving them running."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def trials_span(run: Any) -> float:
    """Seconds from the first trial's start to the last one's end, from the stored trials
    (their own clocks): a run's time without the opening and closing of its executor."""
    starts, ends = [], []
    for result in run.iter_results():
        trial = result.trial
        if trial.started_at is None or trial.latency_s is None:
            continue
        start = trial.started_at.timestamp()
        starts.append(start)
        ends.append(start + trial.latency_s)
    return max(ends) - min(starts) if starts else float("nan")


def connect(address: str) -> float:
    """Connect this process to the cluster at `address` as the `ray` executor would, and
    give the seconds it took: a once-per-process cost, kept apart from the runs (which find
    the driver connected and leave it so)."""
    import ray

    start = time.perf_counter()
    ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    return time.perf_counter() - start


@contextlib.contextmanager
def _address_file_kept() -> Iterator[None]:
    """Leave Ray's "current cluster" file (another session's, maybe) as it was before."""
    from ray._private.utils import get_ray_address_file  # type: ignore[attr-defined]

    path = Path(get_ray_address_file(None))
    before = path.read_bytes() if path.exists() else None
    try:
        yield
    finally:
        if before is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(before)


def _disconnect() -> None:
    """Drop this process's connection to the cluster, if the executor left one: Ray refuses
    to remove the node a connected driver uses."""
    import ray

    if ray.is_initialized():
        ray.shutdown()


EXECUTOR_ARGS: dict[tuple[str, str], tuple[str, ...]] = {
    # W1's agent never waits: a worker per core is all the parallelism there is to use, and
    # more processes would only take turns on the two cores.
    ("process", "W1"): ("--workers", "2"),
    # W2, as issue 19 asks: one worker process per concurrent trial.
    ("process", "W2"): ("--workers", "50"),
    ("ray", "W1"): ("--ray-slots", "2"),
    ("ray", "W2"): ("--ray-slots", "2"),
}
"""What `bench/run.py --executors` gives each executor's column, by workload."""

TARGETS = {"agenteval[process]": 1.05, "agenteval[ray]": 1.25}
"""Issue 19: each executor's W2 wall time, at most this many times `local`'s."""

Median = Callable[[str, str, str], "float | None"]


def executor_report(median: Median, columns: Sequence[str]) -> str:
    """Issue 19's table (W1 and W2 on `local`, each executor column and the asyncio floor,
    medians) and its targets, met or missed, from `median(workload, framework, key)`."""
    local, floor = "agenteval", "floor"
    shown = [local, *columns, floor]
    header = ["measure", "agenteval (local)", *columns, "asyncio alone"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def row(label: str, of: Callable[[str], float | None], unit: str) -> None:
        cells = [_shown(of(f), unit) for f in shown]
        lines.append("| " + " | ".join([label, *cells]) + " |")

    def seconds(workload: str) -> Callable[[str], float | None]:
        return lambda f: median(workload, f, "seconds")

    def per_trial(workload: str, trials: int) -> Callable[[str], float | None]:
        def of(f: str) -> float | None:
            if f in (local, floor):
                return None
            return _per(median(workload, f, "seconds"), median(workload, local, "seconds"), trials)

        return of

    w1 = seconds("W1")
    w2 = seconds("W2")
    row("W1: time per trial (2,000 trials, 0 ms)", lambda f: _scaled(w1(f), 1000 / 2000), "ms")
    row("W1: overhead per trial over local", per_trial("W1", 2000), "ms")
    row("W2: wall time (1,000 × 100 ms, concurrency 50)", w2, "s")
    row("W2: wall / ideal (2 s)", lambda f: _scaled(w2(f), 1 / 2), "x")
    base = w2(local)
    row("W2: wall / local's wall", lambda f: None if not base else _scaled(w2(f), 1 / base), "x")
    row("W2: overhead per trial over local, (wall − local) / 1,000", per_trial("W2", 1000), "ms")
    row(
        "W2: the same, from the trials' span: (span − local's span) / 1,000",
        lambda f: (
            None
            if f in (local, floor)
            else _per(median("W2", f, "span_seconds"), median("W2", local, "span_seconds"), 1000)
        ),
        "ms",
    )
    row(
        "W2: the trials' span (first start to last end) / local's",
        lambda f: _ratio(median("W2", f, "span_seconds"), median("W2", local, "span_seconds")),
        "x",
    )
    row(
        "executor's first opening in a process",
        lambda f: median("W2", f, "first_open_seconds"),
        "s",
    )
    row(
        "executor opening (a run of one trial per worker)",
        lambda f: median("W2", f, "open_seconds"),
        "s",
    )
    row(
        "Ray cluster startup (head + 1 worker node)",
        lambda f: median("W2", f, "startup_seconds"),
        "s",
    )
    row(
        "the driver's connection to it (once per process)",
        lambda f: median("W2", f, "connect_seconds"),
        "s",
    )
    lines.append("")
    lines.append("Targets (issue 19):")
    ideal_floor = _scaled(w2(floor), 1 / 2)
    ideal_local = _scaled(base, 1 / 2)
    for column in columns:
        mine, limit = w2(column), TARGETS[column]
        if mine is None or not base:
            lines.append(f"- {column} W2 ≤ {limit}× local: — (no run)")
            continue
        ratio = mine / base
        mark = "met" if ratio <= limit else "MISSED"
        lines.append(
            f"- {column} W2 ≤ {limit}× local: {mark} ({ratio:.3f}×; local {_shown(ideal_local, 'x')}"
            f" ideal, asyncio alone {_shown(ideal_floor, 'x')} ideal, in the same rounds)"
        )
    return "\n".join(lines)


def _per(value: float | None, base: float | None, trials: int) -> float | None:
    return None if value is None or base is None else (value - base) / trials * 1000


def _ratio(value: float | None, base: float | None) -> float | None:
    return None if value is None or not base else value / base


def _scaled(value: float | None, by: float) -> float | None:
    return None if value is None else value * by


def _shown(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    return {"ms": f"{value:.3f} ms", "s": f"{value:.2f} s", "x": f"{value:.3f}×"}[unit]


def main(argv: Sequence[str]) -> int:
    """Print issue 19's table again from a results file of `bench/run.py --executors`."""
    import json
    import statistics

    if len(argv) != 1:
        print("usage: python bench/executors.py bench/results/<timestamp>.json")
        return 2
    runs = json.loads(Path(argv[0]).read_text())["runs"]

    def median(workload: str, framework: str, key: str) -> float | None:
        values = [r[key] for r in runs.get(workload, {}).get(framework, []) if key in r]
        return statistics.median(values) if values else None

    columns = [c for c in TARGETS if any(c in by for by in runs.values())]
    print(executor_report(median, columns))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
