"""The quickstart run on a three-node Ray cluster: the same stored results as `local`, the
agent (`agent: agent.py:answer` and its sibling `tools.py`) shipped to the workers."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tests.cli_process import agenteval_cli, cli_env
from tests.executors.ray_cluster import LOOPBACK, RayCluster, ray_cluster

from agenteval import RunStore

__all__ = ["ray_cluster"]

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


def _stored(store: Path) -> tuple[dict[str, Any], dict[tuple[str, int], Any]]:
    """A run's summary settings and its trials, without what differs between two runs of the
    same agent (ids, times, latencies)."""
    with RunStore(store) as runs:
        (row,) = runs.list_runs()
        info = runs.get_info(row.run_id)
        trials = {}
        for result in runs.iter_results(info.run_id):
            trial = result.trial.model_dump(
                mode="json",
                exclude={
                    "started_at",
                    "latency_s",
                    "working_latency_s",
                    "trace_id",
                    "span_id",
                    "spans",
                    "tool_calls",
                    "model_calls",
                },
            )
            calls = [(c.name, c.arguments, c.result, c.error) for c in result.trial.tool_calls]
            scores = {name: (s.value, s.passed) for name, s in result.scores.items()}
            trials[result.key] = (trial, calls, scores)
    return info.settings, trials


def test_the_quickstart_on_a_ray_cluster_stores_what_local_stores(
    ray_cluster: RayCluster, tmp_path: Path
) -> None:
    project = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, project)
    env = cli_env(**LOOPBACK)
    local = agenteval_cli(project, "run", ".", "--store", str(tmp_path / "local.db"), env=env)
    remote = agenteval_cli(
        project,
        "run",
        ".",
        "--store",
        str(tmp_path / "ray.db"),
        "--executor",
        "ray",
        "--ray-address",
        ray_cluster.address,
        env=env,
    )
    assert remote.returncode == local.returncode, remote.stderr[-3000:]
    local_settings, local_trials = _stored(tmp_path / "local.db")
    ray_settings, ray_trials = _stored(tmp_path / "ray.db")
    assert ray_settings["executor"] == {"kind": "ray"}
    assert local_settings["executor"] == {"kind": "local"}
    assert len(ray_trials) == len(local_trials) >= 18
    assert ray_trials == local_trials
    # The report the run prints is the same, but for its timings and ids.
    assert _table(local.stdout)
    assert _table(remote.stdout) == _table(local.stdout)


def _table(output: str) -> list[str]:
    return [line for line in output.splitlines() if "│" in line and " s " not in line]
