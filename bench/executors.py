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
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

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
    common = {
        "temp_dir": temp_dir,
        "node_ip_address": "127.0.0.1",
        "object_store_memory": 100 * 1024 * 1024,
    }
    start = time.perf_counter()
    cluster = Cluster(shutdown_at_exit=False)
    started = []
    try:
        with _address_file_kept():
            started.append(
                cluster.add_node(num_cpus=per_node[0], include_dashboard=False, **common)
            )
        for cpus in per_node[1:]:
            started.append(cluster.add_node(num_cpus=cpus, **common))
        cluster.wait_for_nodes()
        startup = time.perf_counter() - start
        yield RayCluster(str(cluster.address), slots, startup)
    finally:
        _disconnect()
        for node in reversed(started):  # the worker nodes, then the head
            with contextlib.suppress(Exception):
                cluster.remove_node(node, allow_graceful=True)
        shutil.rmtree(temp_dir, ignore_errors=True)


@contextlib.contextmanager
def _address_file_kept() -> Iterator[None]:
    """Leave Ray's "current cluster" file (another session's, maybe) as it was before."""
    from ray._private.utils import get_ray_address_file

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
