"""A worker node lost mid-run loses no trial: the trials it ran are retried on the nodes left,
counted as infrastructure retries (`worker_lost`), and the run finishes."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from tests.executors.ray_cluster import RayCluster, ray_cluster

import agenteval
from agenteval import EvalCase

__all__ = ["ray_cluster"]

CASES = 6


async def held_until_go(question: str) -> str:
    """Says which node runs it (a file named after the node), then waits for `go`."""
    import ray

    folder = Path(question)
    node = ray.get_runtime_context().get_node_id()
    (folder / f"{node}.{uuid.uuid4().hex}").touch()
    while not (folder / "go").exists():  # noqa: ASYNC110 (a file: the test is another process)
        await asyncio.sleep(0.05)
    return "done"


def _nodes(folder: Path) -> list[str]:
    return [path.name.split(".")[0] for path in folder.iterdir() if path.name != "go"]


async def test_a_node_lost_mid_run_loses_no_trial(ray_cluster: RayCluster, tmp_path: Path) -> None:
    folder = tmp_path / "running"
    folder.mkdir()
    cases = [EvalCase(id=f"c{i}", input=str(folder)) for i in range(CASES)]
    run = asyncio.create_task(
        agenteval.evaluate_async(
            held_until_go,
            cases,
            concurrency=CASES,
            retries=2,
            store=tmp_path / "runs.db",
            executor="ray",
            workers=3,
            ray_address=ray_cluster.address,
        )
    )
    while len(_nodes(folder)) < CASES:  # every trial running, on the three nodes
        assert not run.done(), run
        await asyncio.sleep(0.05)
    first = _nodes(folder)
    by_node = {node: first.count(node) for node in set(first)}
    # Not the driver's node (the driver would go with it): every node here is on 127.0.0.1,
    # and Ray 2.40 attaches the driver to any raylet on its address, a worker node's too.
    import ray

    driver = ray.get_runtime_context().get_node_id()
    lost = next(
        node for node in ray_cluster.workers if by_node.get(node.node_id) and node.node_id != driver
    )
    ray_cluster.remove(lost)
    # Its trials start again on the nodes left (before `go`: a worker process of the lost
    # node could otherwise finish its trial while its raylet is being killed), within two
    # minutes (Ray declares the node dead in ~15 s): the lost actor's replacement starts on
    # a live node, wherever Ray first placed it.
    deadline = asyncio.get_running_loop().time() + 120
    while len(_nodes(folder)) < CASES + by_node[lost.node_id]:
        assert not run.done(), run
        assert asyncio.get_running_loop().time() < deadline, "the lost trials never ran again"
        await asyncio.sleep(0.05)
    (folder / "go").touch()
    finished = await run

    results = finished.results
    assert sorted(r.case.id for r in results) == [f"c{i}" for i in range(CASES)]
    assert all(r.trial.failure is None and r.trial.output == "done" for r in results)
    retried = {r.case.id: r.trial.retries.get("worker_lost", 0) for r in results}
    assert sum(retried.values()) == by_node[lost.node_id] >= 1
    assert all(r.trial.attempts == 1 + retried[r.case.id] for r in results)
    # The retries ran on the nodes left.
    again = list(_nodes(folder))
    for node in first:
        again.remove(node)
    assert len(again) == by_node[lost.node_id]
    assert lost.node_id not in again
