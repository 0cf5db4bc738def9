"""A real Ray cluster on 127.0.0.1 for the `ray` executor's tests: a head and two worker
nodes (one CPU each), started once per test module and stopped node by node.

Never `Cluster.shutdown()`: it runs `ray stop --force`, which kills every Ray process on the
machine, another session's too. Ray would also rewrite 127.0.0.1 to the machine's address,
which this sandbox does not route: `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0` keeps it loopback
(set before Ray is imported, and passed to every child `agenteval`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
os.environ.update(LOOPBACK)

_NODE: dict[str, Any] = {
    "num_cpus": 1,
    "object_store_memory": 80 * 1024 * 1024,
    "node_ip_address": "127.0.0.1",
}


@dataclass
class RayCluster:
    """The test cluster: its address, and its worker nodes (to remove one mid-run)."""

    cluster: Any
    workers: list[Any] = field(default_factory=list)

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def remove(self, node: Any) -> None:
        """Take `node` out as a lost machine would go (its raylet and workers killed)."""
        self.workers.remove(node)
        self.cluster.remove_node(node, allow_graceful=False)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[RayCluster]:
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        connect=False,
        head_node_args={**_NODE, "include_dashboard": False},
    )
    started = RayCluster(cluster)
    try:
        started.workers.extend(cluster.add_node(**_NODE) for _ in range(2))
        cluster.wait_for_nodes()
        yield started
    finally:
        if ray.is_initialized():
            ray.shutdown()
        for node in list(started.workers):
            cluster.remove_node(node)
        if cluster.head_node is not None:
            cluster.remove_node(cluster.head_node)
