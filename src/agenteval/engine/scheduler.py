"""Running every (case, trial) job with bounded concurrency, scoring each trial as it finishes,
and streaming results to the store in batches (a trial counts as done once it is stored)."""

from __future__ import annotations

import asyncio
from collections.abc import (
    AsyncIterator,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
    Sized,
)
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenteval.agents.calling import Agent
from agenteval.agents.environment import EnvironmentPlan
from agenteval.agents.users import UserPlan
from agenteval.case import EvalCase
from agenteval.engine.executors import ExecutorSettings, TrialRecipe, TrialSource, open_trials
from agenteval.engine.failures import WorkerLostError
from agenteval.engine.gc_thresholds import trial_ended
from agenteval.engine.trials import trace_trial
from agenteval.errors import AgentEvalError
from agenteval.interrupts import (
    RunStop,
    running,
    settle_own_cancellations,
    stops_the_run,
    watching_sigint,
)
from agenteval.records import TrialResult, trial_result
from agenteval.retry import RetryPolicy
from agenteval.score import Score
from agenteval.scorers.base import PreparedScorer, prepare_scorer, prepare_scorers
from agenteval.store import RunStore
from agenteval.trace import Trial

__all__ = ["DEFAULT_CONCURRENCY", "EngineSettings", "WorkerLostError", "execute", "score_trial"]

DEFAULT_CONCURRENCY = 16
_WRITE_BATCH = 500
_BATCHES_AHEAD = 4
"""How many batches the writer takes before the oldest is stored. A write in the writer's thread
waits for the interpreter lock at each SQLite call while the loop runs trials: 200 W1 trials,
1.2 ms to write alone, took 5-25 ms so (measured), as long as the next batches took to come.
Only a store slower than the trials (a busy disk) makes the workers wait for it."""
_ENCODE_STEP = 50
"""How many results the writer encodes before letting the event loop run others (~0.65 ms of
W1's trials, against ~6.5 ms for a whole batch)."""


@dataclass(frozen=True)
class EngineSettings:
    """How trials are run: how many per case, how many at once, time limit, retries, and the
    exception classes the run declares as infrastructure (`infrastructure_errors`)."""

    trials: int = 1
    concurrency: int = DEFAULT_CONCURRENCY
    timeout_s: float | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    infrastructure: tuple[type[BaseException], ...] = ()
    remote_wait_s: float | None = None
    """With an OTLP receiver on: how long a trial waits for its agent service's spans."""
    environment: EnvironmentPlan | None = None
    """The run's tool mocks and replay, added to each case's environment."""
    users: UserPlan | None = None
    """The run's user simulator and where scripted users load from (None: scripted users
    only, relative to the current directory)."""
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)
    """Where the trials run (`local`, `process`, `ray`); scoring and the store stay here."""
    agent_ref: str | None = None
    """The agent's reference (`my_agent.py:run`), when it was loaded from one: an executor
    may load it again in its workers."""
    base_dir: Path | None = None
    """The folder the agent's reference is relative to."""


async def score_trial(scorers: Sequence[Any], case: EvalCase, trial: Trial) -> dict[str, Score]:
    """Every scorer's verdict on one trial, by scorer name; scorers prepared once for many
    trials (`prepare_scorers`) skip working out again how each one runs. Whatever a scorer
    raises is that score's error (`PreparedScorer`); only the run being stopped propagates."""
    scores: dict[str, Score] = {}
    for scorer in scorers:
        prepared = scorer if isinstance(scorer, PreparedScorer) else prepare_scorer(scorer)
        if prepared.synchronous:
            score = prepared.call(case, trial)
            scores[prepared.name] = score if isinstance(score, Score) else await score
        else:
            scores[prepared.name] = await prepared.run(case, trial)
    return scores


def _jobs(
    cases: Iterable[EvalCase], trials: int, done: set[tuple[str, int]]
) -> Iterator[tuple[EvalCase, int]]:
    for case in cases:
        for index in range(trials):
            if (case.id, index) not in done:
                yield case, index


async def execute(
    agent: Agent | None,
    cases: Iterable[EvalCase],
    scorers: Sequence[Any],
    settings: EngineSettings,
    store: RunStore,
    run_id: str,
    *,
    case_count: int | None = None,
    done: set[tuple[str, int]] | None = None,
    on_result: Callable[[TrialResult], None] | None = None,
    recorded: Mapping[tuple[str, int], Trial] | None = None,
    first_write: Callable[[], object] | None = None,
) -> None:
    """Run the jobs not in `done`, score them, and store each result as it finishes.

    `first_write` (storing the run and its cases, say) runs in the writer's thread before any
    result is stored, while the first trials already run: they need not wait for it.

    `agent=None` scores each case's recorded `agent_trace` instead of running an agent, or,
    given `recorded`, the trials recorded elsewhere by (case id, trial index) (a job with no
    recorded trial is skipped). `cases` is read once, as the jobs are taken: a case stream of
    `case_count` cases is never held in memory (a sequence gives its own length).
    """
    done = done or set()
    if case_count is None and isinstance(cases, Sized):
        case_count = len(cases)
    # With the count unknown, as many workers as allowed; they stop when the cases run out.
    pending = (
        settings.concurrency if case_count is None else case_count * settings.trials - len(done)
    )
    if pending <= 0:
        if first_write is not None:
            first_write()
        return
    jobs = _jobs(cases, settings.trials, done)
    prepared = prepare_scorers(scorers)
    finished: asyncio.Queue[TrialResult | None] = asyncio.Queue(maxsize=4 * settings.concurrency)

    runner: TrialSource | None = None

    async def work() -> None:
        task = asyncio.current_task()
        assert task is not None
        for case, index in jobs:
            if runner is not None:
                trial = await runner.run(case, index)
                # A cancellation the agent asked for on this task and survived (or left
                # pending) is withdrawn here, not left to hit the scorers or the next trial.
                if task.cancelling():
                    await settle_own_cancellations(task)
            elif recorded is not None:
                if (case.id, index) not in recorded:
                    continue
                trial = recorded[(case.id, index)]
            else:
                trial = trace_trial(case, index)
            scores = await score_trial(prepared, case, trial)
            trial_ended()
            if task.cancelling():  # likewise, a scorer's
                await settle_own_cancellations(task)
            await finished.put(trial_result(case, trial, scores))

    async def write() -> None:
        # A pipeline: a batch is taken from the queue and encoded while the one before it is
        # written in the writer's thread (and the first ones while the run and its cases are
        # stored), so the workers' queue is drained all along. Waiting for each write before
        # taking the next batch, the queue filled while a batch was written and encoded, and
        # the workers stood still: W1 started no trial for ~40 % of its run (measured).
        # Writes stay one at a time, in order, each batch one transaction, each reported
        # once stored; at most `_BATCHES_AHEAD` batches are taken and not yet stored.
        failed = asyncio.get_running_loop().create_future()  # done when a write fails

        def watch(writing: asyncio.Future[Any]) -> None:
            failed_now = not writing.cancelled() and writing.exception() is not None
            if failed_now and not failed.done():
                failed.set_result(None)

        def started(writing: asyncio.Future[Any]) -> asyncio.Future[Any]:
            writing.add_done_callback(watch)
            in_flight.append(writing)
            return writing

        in_flight: list[asyncio.Future[Any]] = []
        before = None
        if first_write is not None:
            before = started(asyncio.ensure_future(asyncio.to_thread(first_write)))
        getting: asyncio.Future[TrialResult | None] | None = None
        try:
            while True:
                # The next result, unless a write fails first: its error stops the run at once,
                # as when the writer waited for each write, not when the next results come.
                getting = asyncio.ensure_future(finished.get())
                await asyncio.wait([getting, failed], return_when=asyncio.FIRST_COMPLETED)
                if failed.done():
                    break  # raised below, by the write that failed
                first = getting.result()
                if first is None:
                    break
                batch, last = [first], False
                while len(batch) < _WRITE_BATCH and not finished.empty():
                    item = finished.get_nowait()
                    if item is None:
                        last = True
                        break
                    batch.append(item)
                before = started(asyncio.ensure_future(_encode_and_write(batch, before)))
                if last:
                    break
                while len(in_flight) > _BATCHES_AHEAD:  # the oldest written, its error raised
                    await asyncio.shield(in_flight[0])
                    del in_flight[0]
            for writing in in_flight:
                await asyncio.shield(writing)
        except BaseException:
            # The run is stopping (or a write failed), but a batch taken is encoded and written
            # all the same (a write may land in its thread anyway): wait for them, so a batch
            # stored is reported like any other, never a stored trial whose scores were not
            # sent on; then raise what stopped the writer.
            if getting is not None:
                getting.cancel()
            if in_flight:
                await asyncio.wait(in_flight)
                for writing in in_flight:
                    if not writing.cancelled():
                        writing.exception()  # retrieved: raised once, above or by its batch
            raise

    async def _encode_and_write(
        batch: list[TrialResult], before: asyncio.Future[Any] | None
    ) -> None:
        # Encoded here, written there: the thread spends its time in SQLite, which lets go of
        # the interpreter lock, so it never holds up the event loop for a switch interval.
        # Encoded a step at a time, with the loop's due callbacks run in between: a whole
        # batch of 500 W1 trials took the loop ~6.5 ms in one go, late for every timer due.
        encoded = store.encode_results(batch[:_ENCODE_STEP])
        for start in range(_ENCODE_STEP, len(batch), _ENCODE_STEP):
            await asyncio.sleep(0)
            store.encode_results(batch[start : start + _ENCODE_STEP], into=encoded)
        if before is not None:
            await before  # the batch before (or the run and its cases) stored: raises its error
        await asyncio.to_thread(store.write_results, run_id, encoded)
        _report(batch)

    def _report(batch: list[TrialResult]) -> None:
        if on_result is not None:
            for result in batch:
                on_result(result)

    async def produce(stop: RunStop) -> None:
        async with asyncio.TaskGroup() as workers:
            for _ in range(min(settings.concurrency, pending)):
                workers.create_task(_never_lost(work(), "a worker", stop))
        await finished.put(None)

    # One group: if the writer fails, the workers stop too, and the other way round.
    try:
        with watching_sigint(), running() as stop:
            async with _trials(agent, settings) as runner, asyncio.TaskGroup() as group:
                group.create_task(_never_lost(produce(stop), "the workers' supervisor", stop))
                group.create_task(_never_lost(write(), "the store writer", stop))
        if next(jobs, None) is not None:  # every worker ended, and jobs are left: never "done"
            raise WorkerLostError("the workers ended with jobs left; the run is not finished")
    except BaseExceptionGroup as failed:
        # The one task that failed (the others were cancelled) raises its own error, so that a
        # store that cannot be written ends in its one clear message, not in a group of one.
        error: BaseException = failed
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]  # a worker's own error comes in a group of the workers'
        if isinstance(error, BaseExceptionGroup):
            # Several workers met a mistake of the user's at once (an executor's workers that
            # cannot load the agent): one message, as one worker meeting it would give.
            mistakes = _leaves(error)
            if all(isinstance(leaf, AgentEvalError) for leaf in mistakes):
                error = mistakes[0]
        if error is failed:
            raise
        raise error from None


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The exceptions a (nested) group holds, in order."""
    found: list[BaseException] = []
    for inner in group.exceptions:
        found.extend(_leaves(inner) if isinstance(inner, BaseExceptionGroup) else [inner])
    return found


@asynccontextmanager
async def _trials(
    agent: Agent | None, settings: EngineSettings
) -> AsyncIterator[TrialSource | None]:
    """Where the run's trials come from: its executor, opened for the run (None: no agent
    runs, the trials are recorded ones)."""
    if agent is None:
        yield None
        return
    recipe = TrialRecipe(
        agent,
        timeout_s=settings.timeout_s,
        retry=settings.retry,
        declared=settings.infrastructure,
        environment=settings.environment,
        users=settings.users,
        agent_ref=settings.agent_ref,
        base_dir=settings.base_dir,
        remote_wait_s=settings.remote_wait_s,
    )
    async with open_trials(recipe, settings.executor, settings.concurrency) as source:
        yield source


async def _never_lost(work: Coroutine[Any, Any, None], who: str, stop: RunStop) -> None:
    """Run a worker or the writer. A `CancelledError` ending it propagates when the run is being
    stopped; any other (one raised where nobody cancelled) fails the run loudly, since a task
    group would take it for a cancellation and let the run finish with trials missing.

    Whatever ends it early marks the run as stopping first (`stop.failed`), before its task
    group cancels the others: they take that cancellation for the run's, not their agent's."""
    try:
        await work
    except asyncio.CancelledError as exc:
        stopping = stops_the_run(exc)
        stop.failed = True
        if stopping:
            raise
        raise WorkerLostError(
            f"{who} ended with a CancelledError nobody asked for ({exc or 'no message'}), "
            "with work left; the run is not finished (resume it)"
        ) from exc
    except BaseException:
        stop.failed = True
        raise
