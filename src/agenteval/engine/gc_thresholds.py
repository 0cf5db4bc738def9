"""The cyclic garbage collector's thresholds, raised for as long as a run lasts.

Why: a run keeps many container objects alive at once (a thousand trials in flight each hold
a task, futures, their recorder, the attempt's span capture and their pydantic models across
the agent's await; the writer holds a batch of results), so they outlive the collector's
youngest generation and every older-generation pass walks all of them again. With CPython's
thresholds (700, 10, 10) that walking was 35-40 % of the CPU of 10,000 trials of 100 ms at
concurrency 1,000 (bench W2-1000), and 18 % of 20,000 trials of 0 ms. With `RUN_THRESHOLDS`
the same W2-1000 run took 25-35 % less CPU (1.5-1.9 s instead of 2.3-2.9 s, interleaved on a
loaded host; the time spent collecting down from 1.6-3.0 s to 0.8 s). The workloads' peak
memory did not grow (their objects die by reference count): see the README's Performance.

What it costs: cyclic garbage waits longer for a pass (up to 10,000 new container objects
instead of 700). An agent whose every trial fails with an exception its own frame holds (a
cycle through the traceback) keeping a 20 KB response peaked at 79 MB instead of 64 MB over
20,000 trials (concurrency 50), at 284 MB instead of 168 MB over 60,000 (100 ms, concurrency
1,000). See the README's Performance.

Adapting while the run goes (`_Raised.adapt`, a `gc.callbacks` entry for as long as the
thresholds are raised): after `_CLEAN_PASSES` young passes in a row that freed less than a
tenth of the threshold's worth of containers, each with trials ended since the one before
(`trial_ended`), the young threshold steps up (`_YOUNG_STEPS`: 30,000, then `MOST_YOUNG`, one
step a clean pass); a pass that frees more puts it back to `RUN_THRESHOLDS`. Why: bench
W2-1000 (10,000 trials of 100 ms at concurrency 1,000) makes no cyclic garbage, yet its runs
fell, one in three on a quiet machine and most on a busy one, into a slow mode (1.3-2.0 s
instead of 1.1-1.2 s) whose young passes cost 0.2-0.5 s instead of 0.02-0.05 s. When the
event loop is saturated, trials finish in bursts and the store writer frees results hundreds
at a time; the young count (allocations less deallocations, floored at 0, so a burst of frees
is partly forgotten) then reaches 10,000 every few hundred trials, and each such pass walks
what was allocated since the last one and is still alive: the 1,000 trials in flight
(25,000-60,000 containers: coroutines, frames, contexts, the writer's backlog), 15-45 ms a
pass, freeing nothing, then walked again by the middle generation's passes. With the steps,
such a run makes a few passes at 10,000 and 30,000 and one or two at 100,000: its young
passes took 0.07-0.15 s against 0.29-0.46 s on main (four runs each, interleaved, busy host).
A run that makes cyclic garbage (an agent failing with an exception its own frame holds:
2,000-6,000 containers freed a pass) stays at 10,000, where its memory was measured (85 MB
over 20,000 such trials, as on main). What it costs: garbage that starts after a clean
stretch (an agent that begins failing that way mid-run) can wait, once, for up to 30,000 or
100,000 new containers (the step reached) before the threshold comes back down.

The side effect is process-wide: the thresholds are the interpreter's, so whatever else runs
in the process while a run is going (the agent's own code, its threads, another run) runs
under them too; they are put back when the last run of the process ends, however it ends
(returned, raised, cancelled, Ctrl-C), runs nested in one event loop or running in several
threads included. A process that chose its own collector settings keeps them: with the
collector disabled (`gc.disable()`), or thresholds other than the interpreter's defaults
(`gc.set_threshold(...)`, before the run), nothing is changed. That is also how to turn this
off: set the thresholds you want (even `gc.set_threshold(701, 10, 10)`).
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "MOST_YOUNG",
    "RUN_THRESHOLDS",
    "raised_gc_thresholds",
    "run_thresholds",
    "trial_ended",
]

RUN_THRESHOLDS = (10_000, 10, 10)
"""The thresholds during a run: a young-generation pass after 10,000 net allocations of
container objects rather than 700, the older generations as often as CPython's, relative to it.
Chosen by measuring W2-1000 and a run of failing trials that make cyclic garbage, interleaved
(2026-12-02): 10,000 / 20,000 / 50,000 took about the same CPU in W2-1000 (1.4-1.9 s against
2.3-2.9 s at the defaults); the garbage they kept grew with the first value (79 / 110 / 194 MB
over 20,000 failing trials, 64 MB at the defaults), and rarer older-generation passes ((.., 20,
100)) kept more (322 MB against 284 MB over 60,000)."""

MOST_YOUNG = 100_000
"""The young threshold after clean passes. A pass walks what is alive and young, however high
the threshold; only how often it comes changes: with the threshold fixed at 30,000 W2-1000's
young passes still took 0.04-0.08 s, at 100,000 0.02-0.09 s, against 0.29-0.39 s at 10,000
(five runs each, interleaved, on a busy machine). Doubling step by step instead (20,000,
40,000, ...) cost more than it saved: the passes on the way each walked the trials in flight."""


_GARBAGE_SHARE = 10
"""A pass that frees at least a tenth of the young threshold's worth of containers puts it back
to `RUN_THRESHOLDS`: a run that makes cyclic garbage (an agent failing with an exception its
frame holds frees thousands a pass) stays where its memory was measured, while the odd cycle
(W2-1000's passes free 0, or about a hundred over the run) does not undo the raise."""


_CLEAN_PASSES = 3
"""Clean young passes in a row at `RUN_THRESHOLDS` before it steps up. Those of a run's start,
before any trial ended, do not count (`trial_ended`): with them, an agent failing in every
trial with a cycle went to 100,000 before its first failure and kept 71,000 containers for
one pass (peaks: 125 MB instead of 86 over 20,000 trials at concurrency 50; 234 MB instead of
176 over 60,000 at 100 ms and concurrency 1,000)."""


_YOUNG_STEPS = (RUN_THRESHOLDS[0], 30_000, MOST_YOUNG)
"""The young threshold's steps up, one a clean young pass: garbage that starts while it is at
the middle step waits for 30,000 new containers before it comes back down, not 100,000."""


def run_thresholds() -> frozenset[tuple[int, int, int]]:
    """Every value the thresholds take while a run has them raised: `RUN_THRESHOLDS`, and its
    young threshold stepped up to `MOST_YOUNG`."""
    return frozenset((young, *RUN_THRESHOLDS[1:]) for young in _YOUNG_STEPS)


_INTERPRETER_DEFAULTS = frozenset({(700, 10, 10), (2000, 10, 10)})
"""CPython's default thresholds (3.11 and 3.12; 3.13 and later): any other value was set by
the process, which then keeps it."""


class _Raised:
    """The process's one count of the runs going on, and the thresholds to put back when the
    last ends (`None` when the process's own were left as they are)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs = 0
        self.saved: tuple[int, int, int] | None = None
        self.young = 0
        """The young threshold this module set last (0: none, or not adapting)."""
        self.clean = 0
        """Young passes in a row that found (next to) no garbage, with trials ended before."""
        self.finished = 0
        """Trials ended since the process started (`trial_ended`)."""
        self.judged = 0
        """`finished` at the last young pass that counted."""
        self.callback = self.adapt  # one bound method, to add and remove the same object

    def ours(self) -> tuple[int, int, int]:
        return (self.young, RUN_THRESHOLDS[1], RUN_THRESHOLDS[2])

    def enter(self) -> None:
        with self.lock:
            self.runs += 1
            if self.runs > 1:
                return
            current = gc.get_threshold()
            if gc.isenabled() and current in _INTERPRETER_DEFAULTS:
                self.saved = current
                self.young, self.clean, self.judged = RUN_THRESHOLDS[0], 0, self.finished
                gc.set_threshold(*RUN_THRESHOLDS)
                gc.callbacks.append(self.callback)

    def exit(self) -> None:
        with self.lock:
            self.runs -= 1
            if self.runs > 0 or self.saved is None:
                self.runs = max(self.runs, 0)  # a run left in a forked child (below)
                return
            self._stop_adapting()
            # Put back only what was raised: thresholds the agent set meanwhile stay its own.
            if gc.get_threshold() == self.ours():
                gc.set_threshold(*self.saved)
            self.saved = None
            self.young = 0

    def _stop_adapting(self) -> None:
        with contextlib.suppress(ValueError):  # removed by the process itself
            gc.callbacks.remove(self.callback)

    def adapt(self, phase: str, info: dict[str, int]) -> None:
        """After each collection while raised (see the module's docstring): the young threshold
        one step up (`_YOUNG_STEPS`) after `_CLEAN_PASSES` young passes in a row that found no
        garbage, back to `RUN_THRESHOLDS` after any pass that found some. No lock: the
        collector may run in a thread holding it."""
        young = self.young
        if phase != "stop" or young == 0 or gc.get_threshold() != self.ours():
            return  # not raised, or the process set thresholds of its own meanwhile
        if (info["collected"] + info["uncollectable"]) * _GARBAGE_SHARE >= young:
            self.clean = 0
            wanted = RUN_THRESHOLDS[0]
        elif info["generation"] == 0:
            if self.finished == self.judged:
                return  # no trial ended since the last pass: no sign yet of what trials leave
            self.judged = self.finished
            self.clean += 1
            wanted = young
            if self.clean >= _CLEAN_PASSES and young < MOST_YOUNG:
                wanted = _YOUNG_STEPS[_YOUNG_STEPS.index(young) + 1]
        else:
            return
        if wanted != young:
            self.young = wanted
            gc.set_threshold(*self.ours())

    def forked(self) -> None:
        """In a process forked while a run goes (an agent's `multiprocessing` pool with the
        `fork` start method, say): no run of its parent goes on in it, so its thresholds are put
        back now; else the child, inheriting the count, would keep the raised ones for life."""
        self.lock = threading.Lock()  # the parent's may have been held by another thread
        self._stop_adapting()
        if self.saved is not None and gc.get_threshold() == self.ours():
            gc.set_threshold(*self.saved)
        self.runs = 0
        self.saved = None
        self.young = 0


_RAISED = _Raised()
if hasattr(os, "register_at_fork"):  # POSIX only; Windows has no fork
    os.register_at_fork(after_in_child=_RAISED.forked)


@contextmanager
def raised_gc_thresholds() -> Iterator[None]:
    """`RUN_THRESHOLDS` (its young threshold adapting: `run_thresholds()`) while the block runs
    (and any other run's block of the process), the process's own thresholds back when the last
    such block is left, however it is left."""
    _RAISED.enter()
    try:
        yield
    finally:
        _RAISED.exit()


def trial_ended() -> None:
    """Count one trial of a run as ended (the scheduler, as each is scored): a young pass that
    frees nothing counts as clean only when trials ended since the last one, for a pass during
    a run's start, while its first trials are all in flight, cannot know whether they leave
    cyclic garbage when they end."""
    _RAISED.finished += 1
