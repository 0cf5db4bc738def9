"""A large rescore spread over worker processes, by ranges of whole cases.

When every scorer is one of agenteval's built-ins (synchronous, and rebuilt in a worker from
its pickled settings), no `on_result` callback wants each trial, and the run holds at least
`rescoring.POOL_FROM` stored trials, `score_stored` hands the run to `score_in_pool`: the run is cut
into ranges of about `rescoring.RANGE_TRIALS` trials that never split a case (`RunStore.stored_ranges`);
each worker opens the store read-only, reads a range, scores each trial, compares its scores
with the stored text (`changed_scores`), and summarises the range in a partial summary
(`SummaryBuilder.partial`); it returns the changed rows and that summary. The driver takes the
ranges back in the run's order, writes each range's rows in one transaction (in a thread,
while the next is scored) and merges its summary, so the store and the summary are exactly
those of the in-process rescore (tests/engine/test_rescore_pool.py compares them).

Why: scoring is CPU work in Python, one core's worth in the driver's loop; W5 (100,000
stored trials, ten built-ins) ran at ~2,500 trials a second of one core's CPU once the
gc's cost was gone (issue 21). Two workers take it to two cores.

What it costs: the pool's forkserver imports the engine once (~0.4 s here), then each worker
is forked from it (~20 ms) and loads its scorers; hence `rescoring.POOL_FROM`. Meanwhile the
store's damage check (`PRAGMA quick_check`, ~0.3 s for 100,000 trials), which the first write
would make, runs in a thread on the core the forkserver leaves idle; no range is written
before it has passed. The last ranges are smaller (`rescoring.tapered`), so that the workers
finish together. Each worker holds one
range's trials at a time (~30-40 MB of its own besides the imports), the driver only the
ranges in flight (their changed rows and partial summaries).

Errors: an exception in a worker (a stored trial that cannot be read, a store gone) comes
back as itself, with its message, when its range's turn comes; the ranges before it are
written, the ones after are not scored further (the pool is stopped). A rescore killed
midway leaves the ranges written so far; scoring again writes the rest, and nothing twice
(a score equal to its stored text is never written).
"""

from __future__ import annotations

import asyncio
import io
import multiprocessing
import os
import pickle
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import forkserver, popen_forkserver, reduction, spawn, util
from multiprocessing.context import ForkServerContext, ForkServerProcess, set_spawning_popen
from typing import Any

import pebble

from agenteval.engine.stored_trials import Keeper, as_stored
from agenteval.report.summary import SummaryBuilder
from agenteval.score import Score
from agenteval.scorers.base import PreparedScorer, prepare_scorers, unrenamed
from agenteval.scorers.redacted import scoring_from_store
from agenteval.store import RunStore
from agenteval.store.scores import ScoreRow

__all__ = [
    "PoolUnavailable",
    "pool_workers",
    "poolable",
    "score_in_pool",
]

_BUILTIN_PACKAGE = "agenteval.scorers."


def poolable(scorers: Sequence[Any], prepared: Sequence[PreparedScorer]) -> bool:
    """Whether the scorers can score in a worker process: every one a built-in (a class of
    `agenteval.scorers`, renamed or not) that scores at once and pickles."""
    if not all(p.synchronous for p in prepared):
        return False
    if not all(type(unrenamed(s)).__module__.startswith(_BUILTIN_PACKAGE) for s in scorers):
        return False
    try:
        pickle.dumps(list(scorers))
    except Exception:
        return False
    return True


def pool_workers() -> int:
    """How many worker processes: one a core this process may use (Linux says which it may;
    elsewhere every core counts; from Python 3.13, as `os.process_cpu_count` says, which
    `PYTHON_CPU_COUNT` overrides), and none in a daemonic process (a `multiprocessing` pool's
    worker), which may not start processes of its own."""
    if multiprocessing.current_process().daemon:
        return 1
    counted = getattr(os, "process_cpu_count", None)  # 3.13+
    affinity = getattr(os, "sched_getaffinity", None)  # Linux
    if counted is not None:
        cores = counted()
    elif affinity is not None:
        cores = len(affinity(0))
    else:
        cores = os.cpu_count()
    return max(1, cores or 1)


class PoolUnavailable(Exception):
    """The workers could not start (a socket path too long under `TMPDIR`, the system's process
    limit): nothing was scored in the pool, so the caller scores the run in this process."""


async def score_in_pool(
    store: RunStore,
    run_id: str,
    scorers: Sequence[Any],
    *,
    merge: bool,
    summary: SummaryBuilder | None,
    workers: int,
    ranges: Sequence[tuple[int, int, int]],
) -> None:
    """Score the run's stored trials, cut into `ranges` (`RunStore.stored_ranges`), in
    `workers` processes (see the module docs); the changed scores written in the run's order,
    `summary` given every trial as stored after."""
    if not ranges:
        return
    # The store's damage check (`PRAGMA quick_check`, ~0.3 s for W5's 100,000 trials, which
    # the rescore's first write paid at its end) runs in a thread while the pool starts and
    # the workers score; it is awaited before the first write and before returning, so a
    # damaged store is refused, with the same error, no later than it was (nothing written).
    # Handed to the thread now, not when the loop next runs a task: starting the pool blocks
    # the loop ~0.4 s (the forkserver's imports), the time the check needs a core for.
    checking = asyncio.get_running_loop().run_in_executor(None, store.check_undamaged)
    try:
        await _score_in_pool(store, run_id, scorers, merge, summary, workers, ranges, checking)
    finally:
        if not checking.done():  # an error on the way: the thread still holds the store
            await asyncio.wait([checking])
        if not checking.cancelled():
            checking.exception()  # seen here, or raised above: never "never retrieved"
    await checking


async def _score_in_pool(
    store: RunStore,
    run_id: str,
    scorers: Sequence[Any],
    merge: bool,
    summary: SummaryBuilder | None,
    workers: int,
    ranges: Sequence[tuple[int, int, int]],
    checking: asyncio.Future[None],
) -> None:
    pool = pebble.ProcessPool(
        max_workers=workers,
        initializer=_start,
        # The store's own redactor: a worker's environment is the forkserver's, which may
        # predate keys the driver has set since (and a store may have been given another).
        initargs=(
            str(store.path.resolve()),
            run_id,
            pickle.dumps((list(scorers), store.redactor)),
            merge,
        ),
        context=_forkserver(),
    )
    pending: deque[Future[_Done]] = deque()
    writing: asyncio.Future[None] | None = None
    try:
        todo = iter(ranges)

        def submit() -> None:
            taken = next(todo, None)
            if taken is not None:
                part = summary.partial() if summary is not None else None
                pending.append(pool.schedule(_score_range, args=(taken[0], taken[1], part)))

        # Workers that cannot start fail the first ranges (pebble starts them on the first
        # `schedule`): then nothing was scored or written, and the caller scores it all itself.
        first: _Done | None
        try:
            for _ in range(2 * workers):  # each worker busy, and its next range waiting
                submit()
            first = await asyncio.wrap_future(pending.popleft())
        except (BrokenProcessPool, OSError) as exc:
            # A damaged store is refused here, before the caller scores it all in its own
            # process only to be refused at its first write.
            await checking
            raise PoolUnavailable(str(exc.__cause__ or exc) or type(exc).__name__) from exc
        while first is not None or pending:
            if first is not None:
                (rows, part), first = first, None
            else:
                rows, part = await asyncio.wrap_future(pending.popleft())
            submit()
            if summary is not None and part is not None:
                summary.merge(part)
            if writing is not None:
                done, writing = writing, None
                await done
            if rows:
                await checking  # nothing written to a damaged store
                writing = asyncio.ensure_future(
                    asyncio.to_thread(store.write_changed, run_id, rows)
                )
    finally:
        pool.stop()  # type: ignore[no-untyped-call]
        pool.join()
        if writing is not None:
            await writing


_Done = tuple[list[ScoreRow], SummaryBuilder | None]


class _Worker:
    """What a worker process holds between ranges: the store, read-only, and the scorers."""

    def __init__(self, path: str, run_id: str, shipped: bytes, merge: bool) -> None:
        scorers, redactor = pickle.loads(shipped)
        self.store = RunStore(path, create=False, read_only=True, redactor=redactor)
        self.run_id = run_id
        self.scorers = prepare_scorers(scorers)
        self.merge = merge
        self.keep = Keeper(self.store, run_id)


_WORKER: list[_Worker] = []


def _start(path: str, run_id: str, shipped: bytes, merge: bool) -> None:
    _WORKER.append(_Worker(path, run_id, shipped, merge))


def _score_range(first: int, last: int, part: SummaryBuilder | None) -> _Done:
    """Score the trials of cases `first`..`last`: their changed rows, and `part` given each
    trial as stored after (what `score_stored`'s loop does, trial by trial)."""
    worker = _WORKER[0]
    store, run_id, keep = worker.store, worker.run_id, worker.keep
    rows: list[ScoreRow] = []
    with scoring_from_store() as state:
        for item in store.iter_stored(run_id, (first, last)):
            scores: dict[str, Score] = {}
            for scorer in worker.scorers:
                score = scorer.call(item.case, item.trial)
                if not isinstance(score, Score):  # `poolable` lets only the built-ins in
                    raise TypeError(f"scorer {scorer.name!r} did not score at once")
                scores[scorer.name] = score
            if state.undecided:  # a scorer met masked text in this trial
                state.undecided = 0
                keep(item, scores)
            if part is not None:
                part.add(as_stored(store, run_id, item, scores, merge=worker.merge))
            if worker.merge:
                rows += store.changed_scores(run_id, item, scores)
            else:
                raise ValueError("the pool only merges")  # `score_stored` checks first
    return rows, part


def _forkserver() -> Any:
    """Workers forked from a server that has imported this module (and so the engine and
    the scorers) once; `fork` from the driver, which has threads, could copy a held lock.
    Unlike the `process` executor's, these workers never import the caller's main module
    (`_NoMainProcess`): a script that calls `rescore` without `if __name__ == "__main__":`
    must not be run again in each worker, and the built-ins need nothing from it."""
    multiprocessing.get_context("forkserver").set_forkserver_preload(
        ["agenteval.engine.rescore_pool"]
    )
    return _NoMainContext()


class _NoMainPopen(popen_forkserver.Popen):
    """The forkserver's `Popen`, sending the new process what `spawn` prepares, less the
    main module to import (the lines are the standard library's `_launch`, 3.11-3.13)."""

    def _launch(self, process_obj: Any) -> None:
        prep_data = spawn.get_preparation_data(process_obj._name)
        prep_data.pop("init_main_from_name", None)
        prep_data.pop("init_main_from_path", None)
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)  # type: ignore[attr-defined]
        parent_w = os.dup(w)  # the child's sign that this process lives
        self.finalizer = util.Finalize(
            self,
            util.close_fds,  # type: ignore[attr-defined]
            (parent_w, self.sentinel),
        )
        with os.fdopen(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _NoMainProcess(ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        return _NoMainPopen(process_obj)


class _NoMainContext(ForkServerContext):
    Process = _NoMainProcess
