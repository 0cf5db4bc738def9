"""What the `process` and `ray` executors share: the recipe a worker builds its runner from,
the job it runs, and the driver's side of a trial (`RemoteTrials`).

The split is at the trial: a worker runs one trial as the local engine does (`TrialRunner`:
its tool environment, its simulated user, its time limit, its retries of what the agent's
calls met), and sends back the `Trial`. The driver keeps what must stay single: the scorers
and the judge (one cache, one set of rate limits), the summary and the store, which only it
writes. What a worker cannot report, its own death, the driver records (`WorkerDeath`), and
retries by the run's rules when the cause is infrastructure (a Ray node lost), counting the
retry in the trial it finally stores."""

from __future__ import annotations

import asyncio
import pickle
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Protocol

from agenteval.agents.calling import Agent
from agenteval.agents.environment import EnvironmentPlan
from agenteval.agents.recorder import monotonic, serve_trials
from agenteval.agents.users import UserPlan
from agenteval.case import EvalCase
from agenteval.engine.trials import TrialRunner
from agenteval.jsonsafe import model_json_text
from agenteval.retry import RetryPolicy
from agenteval.trace import Failure, FailureCause, Trial, utc_now

__all__ = [
    "Attempts",
    "RemoteTrials",
    "TrialJob",
    "TrialRecipe",
    "TrialWorker",
    "WorkerDeath",
    "packed",
    "unpacked",
]


@dataclass(frozen=True)
class TrialRecipe:
    """What a worker builds its runner from, once (`TrialRunner.of`'s arguments), shipped to
    every worker. `agent_ref` and `base_dir` say where the agent was loaded from, when it was
    (`my_agent.py:run`), for an executor that loads it again there rather than pickle it."""

    agent: Agent
    timeout_s: float | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    declared: tuple[type[BaseException], ...] = ()
    environment: EnvironmentPlan | None = None
    users: UserPlan | None = None
    remote_wait_s: float | None = None
    agent_ref: str | None = None
    base_dir: Path | None = None

    def runner(self) -> TrialRunner:
        """The runner of this recipe's trials, in the process that runs them."""
        return TrialRunner.of(
            self.agent,
            timeout_s=self.timeout_s,
            retry=self.retry,
            declared=self.declared,
            environment=self.environment,
            remote_wait_s=self.remote_wait_s,
            users=self.users,
        )


@dataclass(frozen=True)
class TrialJob:
    """One trial as a worker gets it: the case, the trial's index, and how many retries of
    an infrastructure failure the worker may still make (the run's, less those the driver
    made after a worker was lost)."""

    case: EvalCase
    index: int
    retries_left: int


@dataclass(frozen=True)
class WorkerDeath:
    """How a trial's attempt ended when its worker sent no trial back: the worker died
    (`worker_crashed`, with its exit code or signal), was killed by the driver once the job's
    whole time was spent, every attempt it may make with their limits, graces and waits
    (`timeout`), or was lost with its node (`worker_lost`)."""

    cause: FailureCause
    message: str
    exit_code: int | None = None
    attempts: int = 1
    """The tries it ended: more than one when the executor ran the trial again itself (a Ray
    trial run again alone after a crash it shared)."""


class TrialWorker:
    """A worker's side: the runner built once from the recipe, running the jobs it is given."""

    def __init__(self, recipe: TrialRecipe) -> None:
        self._runner = recipe.runner()
        # A worker process serves one run: a tool its trials answer in place is refused when
        # called from a thread the agent started, as in the driver (`agents/recorder.py`).
        serve_trials()

    async def run(self, job: TrialJob) -> Trial:
        """Run one trial, retrying infrastructure failures at most `job.retries_left` times."""
        runner = self._runner
        if job.retries_left != runner.retry.max_retries:
            runner = replace(runner, retry=replace(runner.retry, max_retries=job.retries_left))
        return await runner.run(job.case, job.index)

    async def run_packed(self, job: TrialJob) -> bytes:
        """`run`, its trial as it crosses back to the driver (`packed`)."""
        return packed(await self.run(job))


def packed(trial: Trial) -> bytes:
    """A worker's trial as it crosses to the driver: pickled as it is; or, when it holds what
    does not pickle (a lock, a generator, a client the agent left in its metadata), in the form
    the store keeps (`jsonsafe`: such a value as its text, as a `local` run stores it). Never
    raises: a trial is the agent's record, and what it holds must not pass for a lost worker
    (retried, then left out of scoring) nor stop the run."""
    try:
        return pickle.dumps(trial, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # PicklingError, TypeError, RecursionError: whatever the value raises
        kept = Trial.model_validate_json(model_json_text(trial, None, "metadata"))
        return pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL)


def unpacked(payload: bytes) -> Trial:
    """The trial a worker `packed`."""
    trial = pickle.loads(payload)
    if not isinstance(trial, Trial):
        raise TypeError(f"a worker sent back {type(trial).__name__}, not a Trial")
    return trial


class Attempts(Protocol):
    """An executor's pool seen from the driver: one job sent to a worker, and what came back.
    Never raises for what happened to the worker (that is a `WorkerDeath`); only the run
    being stopped (a cancellation) propagates."""

    async def attempt(self, job: TrialJob) -> Trial | WorkerDeath: ...


class RemoteTrials:
    """The driver's side of trials run elsewhere (`Attempts`): the same `run(case, index)` as
    `TrialRunner`, so the scheduler does not know where trials run."""

    def __init__(self, attempts: Attempts, retry: RetryPolicy) -> None:
        self._attempts = attempts
        self._retry = retry

    async def run(self, case: EvalCase, index: int) -> Trial:
        """The trial's record: the worker's, with the attempts a lost worker cost counted in;
        or, when the worker died and that is not retried (or retries ran out), a trial
        failed with the death's cause."""
        started_at = utc_now()
        start = monotonic()
        lost = 0
        lost_s = 0.0  # the lost attempts' time: work, as a local timed-out attempt's is
        retries: dict[str, int] = {}
        while True:
            used = sum(retries.values())
            attempt_start = monotonic()
            outcome = await self._attempts.attempt(
                TrialJob(case, index, max(0, self._retry.max_retries - used))
            )
            if isinstance(outcome, Trial):
                if not lost:
                    return outcome
                return _with_lost(outcome, lost, lost_s, retries, started_at, start)
            lost += outcome.attempts
            lost_s += monotonic() - attempt_start
            if _retried(outcome) and used < self._retry.max_retries:
                retries[outcome.cause.value] = retries.get(outcome.cause.value, 0) + 1
                await asyncio.sleep(self._retry.wait_s(lost, RuntimeError(outcome.message)))
                continue
            failure = Failure(
                cause=outcome.cause, message=outcome.message, exit_code=outcome.exit_code
            )
            return Trial(
                case_id=case.id,
                trial=index,
                failure=failure,
                started_at=started_at,
                latency_s=monotonic() - start,
                working_latency_s=lost_s,
                attempts=lost,
                retries=retries,
            )


def _retried(death: WorkerDeath) -> bool:
    """Whether the driver runs the trial again after `death`: when its cause is
    infrastructure, but not a worker the driver killed. That kill comes only once the job's
    whole time is spent, and the driver cannot know how many of its attempts the worker made:
    a retry could run the agent more times than the run allows (and pass a trial the run's
    retries would have failed), so the trial ends there, a `timeout`."""
    return death.cause.is_infrastructure and death.cause is not FailureCause.TIMEOUT


def _with_lost(
    trial: Trial,
    lost: int,
    lost_s: float,
    retries: dict[str, int],
    started_at: datetime,
    start: float,
) -> Trial:
    """A worker's trial after `lost` attempts died elsewhere (taking `lost_s`): they count in
    its attempts, retries, latency (from the first attempt's start) and working latency, as a
    retried local attempt does."""
    merged = dict(retries)
    for reason, count in trial.retries.items():
        merged[reason] = merged.get(reason, 0) + count
    return trial.model_copy(
        update={
            "attempts": trial.attempts + lost,
            "retries": merged,
            "started_at": started_at,
            "latency_s": monotonic() - start,
            "working_latency_s": (trial.working_latency_s or 0.0) + lost_s,
        }
    )
