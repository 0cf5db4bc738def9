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

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["RUN_THRESHOLDS", "raised_gc_thresholds"]

RUN_THRESHOLDS = (10_000, 10, 10)
"""The thresholds during a run: a young-generation pass after 10,000 net allocations of
container objects rather than 700, the older generations as often as CPython's, relative to it.
Chosen by measuring W2-1000 and a run of failing trials that make cyclic garbage, interleaved
(2026-12-02): 10,000 / 20,000 / 50,000 took about the same CPU in W2-1000 (1.4-1.9 s against
2.3-2.9 s at the defaults); the garbage they kept grew with the first value (79 / 110 / 194 MB
over 20,000 failing trials, 64 MB at the defaults), and rarer older-generation passes ((.., 20,
100)) kept more (322 MB against 284 MB over 60,000)."""

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

    def enter(self) -> None:
        with self.lock:
            self.runs += 1
            if self.runs > 1:
                return
            current = gc.get_threshold()
            if gc.isenabled() and current in _INTERPRETER_DEFAULTS:
                self.saved = current
                gc.set_threshold(*RUN_THRESHOLDS)

    def exit(self) -> None:
        with self.lock:
            self.runs -= 1
            if self.runs > 0 or self.saved is None:
                self.runs = max(self.runs, 0)  # a run left in a forked child (below)
                return
            # Put back only what was raised: thresholds the agent set meanwhile stay its own.
            if gc.get_threshold() == RUN_THRESHOLDS:
                gc.set_threshold(*self.saved)
            self.saved = None

    def forked(self) -> None:
        """In a process forked while a run goes (an agent's `multiprocessing` pool with the
        `fork` start method, say): no run of its parent goes on in it, so its thresholds are put
        back now; else the child, inheriting the count, would keep the raised ones for life."""
        self.lock = threading.Lock()  # the parent's may have been held by another thread
        if self.saved is not None and gc.get_threshold() == RUN_THRESHOLDS:
            gc.set_threshold(*self.saved)
        self.runs = 0
        self.saved = None


_RAISED = _Raised()
if hasattr(os, "register_at_fork"):  # POSIX only; Windows has no fork
    os.register_at_fork(after_in_child=_RAISED.forked)


@contextmanager
def raised_gc_thresholds() -> Iterator[None]:
    """`RUN_THRESHOLDS` while the block runs (and any other run's block of the process), the
    process's own thresholds back when the last such block is left, however it is left."""
    _RAISED.enter()
    try:
        yield
    finally:
        _RAISED.exit()
