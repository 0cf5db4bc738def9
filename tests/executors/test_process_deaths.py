"""The process executor contains what the driver's loop cannot: an agent that exits, segfaults,
blocks its event loop, swallows its cancellation or leaks memory costs its own trial only,
recorded with its cause, beside healthy trials that pass; and no worker outlives the run."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest

import agenteval
from agenteval import EvalCase
from agenteval.retry import RetryPolicy
from agenteval.trace import FailureCause

AGENTS = Path(__file__).parent / "process_agents"
HOSTILE = f"{AGENTS / 'hostile.py'}:run"
QUICK_RETRY = RetryPolicy(max_retries=1, initial_wait_s=0.01, max_wait_s=0.01)


def _gone(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie not yet reaped by its parent has too)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_gone(pids: set[int]) -> set[int]:
    """The pids still alive once they had a while to end (a kill is not instant)."""
    for _ in range(200):
        left = {pid for pid in pids if not _gone(pid)}
        if not left:
            return left
        time.sleep(0.05)
    return left


@pytest.mark.skipif(not Path("/proc").exists(), reason="Linux: segfaults and prctl")
def test_a_mixed_run_records_every_death_with_its_cause_and_passes_the_healthy(
    tmp_path: Path,
) -> None:
    questions = ["ok", "exit", "segfault", "block", "swallow", "ok"]
    cases = [
        EvalCase(id=f"{i}-{question}", input=question, expected_output=None)
        for i, question in enumerate(questions)
    ]
    run = agenteval.evaluate(
        HOSTILE,
        cases,
        executor="process",
        workers=3,
        timeout=0.3,
        retry_policy=QUICK_RETRY,
        store=tmp_path / "runs.db",
    )
    trials = {result.case.id: result.trial for result in run.results}
    assert len(trials) == len(cases)

    for key in ("0-ok", "5-ok"):
        assert trials[key].failure is None
        assert trials[key].output is not None and trials[key].output.startswith("ok ")
    crashed = trials["1-exit"].failure
    assert crashed is not None and crashed.cause is FailureCause.WORKER_CRASHED
    assert crashed.exit_code == 1 and "exited with code 1" in crashed.message
    assert trials["1-exit"].attempts == 1  # the agent's own doing: never retried

    segfault = trials["2-segfault"].failure
    assert segfault is not None and segfault.cause is FailureCause.WORKER_CRASHED
    assert segfault.exit_code == -11 and "SIGSEGV (-11)" in segfault.message

    # A blocked loop: no deadline fires in the worker; the driver kills it once the job's
    # whole time (every attempt the run allows) is spent, and stores it: not retried again,
    # since the worker may have made any of its attempts.
    blocked = trials["3-block"]
    assert blocked.failure is not None and blocked.failure.cause is FailureCause.TIMEOUT
    assert "the worker was killed" in blocked.failure.message
    assert blocked.attempts == 1 and blocked.retries == {}

    # Swallowed cancellation: the worker's own deadline ends it, as it does locally.
    swallowed = trials["4-swallow"]
    assert swallowed.failure is not None and swallowed.failure.cause is FailureCause.TIMEOUT
    assert "the worker was killed" not in swallowed.failure.message
    assert swallowed.attempts == 2

    # The healthy trials ran in worker processes, which are all gone with the run.
    pids = {int(trials[key].output.split()[1]) for key in ("0-ok", "5-ok")}  # type: ignore[union-attr]
    assert psutil.Process().pid not in pids
    assert not _wait_gone(pids), "a worker outlived its run"


def test_a_run_with_no_failure_passes_on_the_pool(tmp_path: Path) -> None:
    cases = [EvalCase(id=f"c{i}", input="ok") for i in range(6)]
    run = agenteval.evaluate(
        HOSTILE, cases, executor="process", workers=2, store=tmp_path / "runs.db"
    )
    outputs = [result.trial.output or "" for result in run.results]
    assert len(outputs) == 6 and all(output.startswith("ok ") for output in outputs)
    assert len({output.split()[1] for output in outputs}) <= 2  # two workers, each reused


def test_a_worker_past_its_memory_limit_is_stopped_and_its_trial_says_so(tmp_path: Path) -> None:
    cases = [EvalCase(id="leak", input="leak"), EvalCase(id="fine", input="ok")]
    run = agenteval.evaluate(
        HOSTILE,
        cases,
        executor="process",
        workers=2,
        timeout=60,  # the leak is stopped by its memory, long before its time
        retry_policy=QUICK_RETRY,
        worker_memory_mb=300,
        store=tmp_path / "runs.db",
    )
    trials = {result.case.id: result.trial for result in run.results}
    leaked = trials["leak"]
    assert leaked.failure is not None and leaked.failure.cause is FailureCause.WORKER_CRASHED
    assert "memory limit (worker_memory_mb: 300 MB)" in leaked.failure.message
    assert leaked.attempts == 1  # the agent's doing: not retried
    assert trials["fine"].failure is None  # a worker under the limit runs on


def _workers() -> set[int]:
    """This process's worker processes alive: its grandchildren (the forkserver's children)."""
    me = psutil.Process()
    return {
        child.pid
        for child in me.children(recursive=True)
        if child.ppid() != me.pid and not _gone(child.pid)
    }


def test_a_run_that_fails_stops_its_pool_even_a_worker_stuck_in_a_trial(tmp_path: Path) -> None:
    cases = [EvalCase(id="stuck", input="block")]
    cases += [EvalCase(id=f"ok{i}", input="ok") for i in range(3)]

    def on_result(result: object) -> None:
        raise RuntimeError("the caller's callback failed")

    with pytest.raises(RuntimeError, match="the caller's callback failed"):
        agenteval.evaluate(
            HOSTILE,
            cases,
            executor="process",
            workers=2,
            on_result=on_result,  # type: ignore[arg-type]
            store=tmp_path / "runs.db",
        )
    # The driver (this process) lives on: only the pool's stop can have ended the stuck worker.
    assert not _wait_gone(_workers()), "the pool was left running"
