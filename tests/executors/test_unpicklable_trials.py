"""A trial holding what does not pickle (an agent's metadata with a lock or a generator in it)
comes back from a worker process or a Ray actor as the store keeps it, and is scored as `local`
scores it: before, the process executor made it `worker_lost` (retried, running the agent
again, then left out of scoring: a wrong answer hidden from the pass rate), and the Ray
executor stopped the whole run with the pickling error, on every resume too."""

from __future__ import annotations

from pathlib import Path

from tests.executors.ray_cluster import RayCluster, ray_cluster

import agenteval
from agenteval import EvalCase
from agenteval.retry import RetryPolicy

__all__ = ["ray_cluster"]

AGENT = f"{Path(__file__).parent / 'process_agents' / 'keeps_objects.py'}:run"
CASES = [
    EvalCase(id="right", input="paris", expected_output="PARIS"),
    EvalCase(id="wrong", input="wrong", expected_output="WRONG"),
    EvalCase(id="plain", input="plain", expected_output="PLAIN"),
]
QUICK_RETRY = RetryPolicy(max_retries=1, initial_wait_s=0.01, max_wait_s=0.01)


def _check(run: agenteval.Run) -> None:
    trials = {result.case.id: result for result in run.results}
    assert sorted(trials) == ["plain", "right", "wrong"]
    for case_id, result in trials.items():
        assert result.trial.failure is None, (case_id, result.trial.failure)
        assert result.trial.attempts == 1 and result.trial.retries == {}
    assert trials["right"].scores["exact_match"].value == 1.0
    assert trials["wrong"].scores["exact_match"].value == 0.0  # scored: a failure counted
    metadata = trials["right"].trial.metadata
    # As the store keeps them (a local run stores the same): the lock as its text, the
    # generator as the list pydantic reads out of it.
    assert "_thread.lock object" in metadata["lock"] and metadata["rows"] == [1]
    assert run.summary.passed.count == 2 and run.summary.passed.total == 3
    assert run.complete


def test_a_trial_holding_what_does_not_pickle_is_scored_on_worker_processes(
    tmp_path: Path,
) -> None:
    run = agenteval.evaluate(
        AGENT,
        CASES,
        executor="process",
        workers=2,
        timeout=30,
        retry_policy=QUICK_RETRY,
        store=tmp_path / "runs.db",
    )
    _check(run)


async def test_a_trial_holding_what_does_not_pickle_is_scored_on_ray(
    ray_cluster: RayCluster, tmp_path: Path
) -> None:
    run = await agenteval.evaluate_async(
        AGENT,
        CASES,
        executor="ray",
        workers=2,
        timeout=30,
        retry_policy=QUICK_RETRY,
        store=tmp_path / "runs.db",
        ray_address=ray_cluster.address,
    )
    _check(run)
