"""The worker side of the `process` executor: what runs in each worker process of the pool.

A worker is forked from the run's forkserver (which has this module, and so the engine,
already imported: a worker starts in milliseconds), builds its `TrialWorker` once from the
shipped recipe (`start`, pebble's initializer), keeps one event loop, and runs the jobs the
pool gives it one at a time (`run_job`), sending each `Trial` back pickled.

What a worker does for the driver's sake:
- it dies with the driver, however the driver ended (even SIGKILLed): a thread waits on the
  pipe the driver holds (`_die_with_driver`), so a worker stuck in a trial that never ends
  exits too;
- with a memory limit, a watchdog thread reads the worker's resident memory every
  `_WATCH_EVERY_S` (and `run_job` as each job ends, so the job that passed the limit is the
  one charged) and ends the process with `MEMORY_EXIT` past the limit, which the driver
  reads as "the worker passed its memory limit" (`worker_crashed`, naming the limit);
- a recipe that cannot be rebuilt here (a module that fails to import) is not pebble's
  initializer error (pebble would start a new worker forever): it is kept and raised to the
  driver by the first job, as `RecipeUnavailable`, which stops the run with a `ConfigError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import importlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import cloudpickle  # type: ignore[import-untyped]

from agenteval.agents.users import UserPlan
from agenteval.engine.executors.remote import TrialJob, TrialRecipe, TrialWorker
from agenteval.errors import AgentLoadError
from agenteval.loading import import_file

# Imported here, so once in the forkserver (which preloads this module) rather than in every
# worker as it builds its runner: the span capture's OpenTelemetry modules (optional) and the
# memory watchdog's psutil. ~0.1 s of CPU a worker otherwise, 5 s for a pool of 50 on 2 cores.
with contextlib.suppress(ImportError):
    import opentelemetry.context
    import opentelemetry.propagate
    import opentelemetry.sdk._logs
    import opentelemetry.sdk.trace
    import opentelemetry.trace  # noqa: F401
import psutil  # type: ignore[import-untyped]

__all__ = [
    "MEMORY_EXIT",
    "AgentByReference",
    "RecipeUnavailable",
    "ShippedRecipe",
    "SimulatorSettings",
    "run_job",
    "start",
]

MEMORY_EXIT: Final = 86
"""The exit code of a worker its watchdog stopped past its memory limit (an agent that calls
`os._exit(86)` itself is taken for one: a code no common program uses)."""

_WATCH_EVERY_S: Final = 0.05
"""How often the watchdog reads the worker's memory: a leak of a few GB a second passes the
limit by at most a tenth of that before the worker is stopped; a read costs ~20 µs."""

_PR_SET_PDEATHSIG: Final = 1
_ORPHANED_EXIT: Final = 70
"""The exit code of a worker whose driver is gone (no one reads it)."""


class RecipeUnavailable(Exception):
    """The worker could not rebuild the run's recipe (its message says why); raised to the
    driver by the worker's first job, so the run stops with it instead of a pool that keeps
    starting workers that fail."""


@dataclass(frozen=True)
class SimulatorSettings:
    """The run's model user simulator as shipped to a worker: its settings, not its opened
    provider clients (which hold sockets and locks and do not pickle). Each worker opens its
    own simulator from them (`open`); the judge cache's SQLite file is the same for all. Its
    limits (concurrency, requests and tokens a minute) are then each worker's: a run that
    must keep a provider's quota divides them by its workers."""

    config: Any
    prices: Any
    retry: Any
    prompt: Any

    def open(self) -> Any:
        """The simulator these settings describe, opened in this worker."""
        from agenteval.judge.sampling import Sampler
        from agenteval.simulation.simulator import UserSimulator

        sampler = Sampler.open(self.config, prices=self.prices, retry=self.retry)
        return UserSimulator(sampler, self.prompt)


@dataclass(frozen=True)
class ShippedRecipe:
    """What crosses to a worker at its start: the recipe cloudpickled (`recipe`, with its model
    user simulator taken out and shipped as `simulator`), and the files of the user modules
    (`agenteval_user_*`, loaded from `my_agent.py:run` and the like) the recipe's functions
    may be pickled by reference into, so the worker imports the same files under the same
    names before it reads the recipe."""

    recipe: bytes
    modules: dict[str, str]
    simulator: SimulatorSettings | None = None
    memory_limit_mb: int | None = None
    environ: dict[str, str] = field(default_factory=dict)
    """The driver's environment when the pool opened: a worker is forked from the forkserver,
    which has the environment of when it started (the driver's first pool); an API key set
    since must reach the agent as it does with `local`."""


_worker: TrialWorker | None = None
_loop: asyncio.AbstractEventLoop | None = None
_broken: str | None = None
_modules: dict[str, str] = {}
_memory_limit: _MemoryLimit | None = None
_job_running = False
_job_guard = threading.Lock()
"""Held by the watchdog while it stops the worker, and by `run_job` while it ends a job: the
worker is stopped only while a job runs, never while pebble sends a result (a worker that
died holding the pool's channel lock would stall every other worker)."""


def start(shipped: ShippedRecipe) -> None:
    """pebble's initializer: tie the worker's life to the driver's, watch its memory, and build
    its runner and event loop once. Never raises (see the module)."""
    global _worker, _loop, _broken, _modules, _memory_limit
    _modules = shipped.modules
    _die_with_driver()
    if shipped.environ:
        os.environ.clear()
        os.environ.update(shipped.environ)
    if shipped.memory_limit_mb is not None:
        _memory_limit = _MemoryLimit(psutil.Process(), shipped.memory_limit_mb * 1024 * 1024)
        _watch_memory(_memory_limit)
    _loop = asyncio.new_event_loop()  # first: the simulator opened below may want it
    asyncio.set_event_loop(_loop)
    try:
        _worker = TrialWorker(_rebuild(shipped))
    except Exception as exc:  # a ConfigError, an AgentLoadError, an unpickling error
        _broken = f"{type(exc).__name__}: {exc}"


def run_job(payload: bytes) -> bytes:
    """Run one job (cloudpickled: a case's tool mocks may be lambdas) in the worker's event
    loop, to its `Trial`, pickled here (`remote.packed`: one holding what does not pickle is
    sent as the store keeps it, never lost in pebble's pickling) (pebble's task function)."""
    global _job_running
    if _broken is not None or _worker is None or _loop is None:
        raise RecipeUnavailable(_broken or "the worker was not started")
    job: TrialJob = _loads(payload, _modules)
    _job_running = True
    try:
        trial = _loop.run_until_complete(_worker.run_packed(job))
        # A job that ends past the limit before the watchdog looked (a few MB kept in a few
        # ms) is charged with it here, not the next job the worker runs.
        if _memory_limit is not None and _memory_limit.over():
            os._exit(MEMORY_EXIT)
        return trial
    finally:
        with _job_guard:
            _job_running = False


@dataclass(frozen=True)
class AgentByReference:
    """The run's agent as shipped when it was loaded from a reference (`agent.py:graph`):
    the module and attribute it was found at, loaded again in each worker and made ready
    there as the driver did (`as_framework_agent`). A framework's agent object holds locks,
    clients and context variables that do not pickle, and its adapter sets things up in the
    process that runs it (ADK's quiet logs, its modules imported before the first trial)."""

    module: str
    attribute: str

    def load(self, modules: dict[str, str]) -> Any:
        """The agent, from the module's file when it is a user module, else imported."""
        from agenteval.agents.frameworks import as_framework_agent

        if self.module in modules and self.module not in sys.modules:
            import_file(Path(modules[self.module]), AgentLoadError, modules[self.module])
        agent = getattr(importlib.import_module(self.module), self.attribute)
        framework = as_framework_agent(agent)
        return agent if framework is None else framework


def _rebuild(shipped: ShippedRecipe) -> TrialRecipe:
    """The recipe, its user modules imported first (on demand: only those it names)."""
    recipe: TrialRecipe = _loads(shipped.recipe, shipped.modules)
    if isinstance(recipe.agent, AgentByReference):
        recipe = replace(recipe, agent=recipe.agent.load(shipped.modules))
    if shipped.simulator is not None:
        users = recipe.users if recipe.users is not None else UserPlan()
        # Opened here, for this worker: owned, as the run's own simulator is.
        opened = replace(users, simulator=shipped.simulator.open(), owned=True)
        recipe = replace(recipe, users=opened)
    return recipe


def _loads(payload: bytes, modules: dict[str, str]) -> Any:
    """Unpickle `payload`, importing each user module it names from its file, as the driver
    did (same file, same module name), when the unpickler asks for it."""
    imported: set[str] = set()
    while True:
        try:
            return cloudpickle.loads(payload)
        except ModuleNotFoundError as exc:
            name = exc.name or ""
            root = name.split(".")[0]
            if root not in modules or root in imported:
                raise
            imported.add(root)
            import_file(Path(modules[root]), AgentLoadError, modules[root])


def _die_with_driver() -> None:
    """End this worker as soon as the driver is gone, however it ended (even SIGKILLed), and
    at once if it is already. A thread waits on the pipe from the driver that multiprocessing
    leaves every child (`parent_process().sentinel`: its write end is the driver's alone, so it
    reads EOF when the driver dies). Not the parent's death signal alone: a worker's parent is
    the forkserver, which lives on while any worker does. `PR_SET_PDEATHSIG` is asked too, so
    a worker dies with a killed forkserver even while its agent holds the GIL."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    parent = multiprocessing.parent_process()
    if parent is None:  # not a child of multiprocessing's: nothing to watch
        return
    sentinel = parent.sentinel

    def watch() -> None:
        multiprocessing.connection.wait([sentinel])
        os._exit(_ORPHANED_EXIT)

    threading.Thread(target=watch, name="agenteval-driver-watch", daemon=True).start()


@dataclass(frozen=True)
class _MemoryLimit:
    """The worker's memory limit (`worker_memory_mb`), in bytes of its resident memory."""

    process: Any
    limit: int

    def over(self) -> bool:
        """Whether the worker's resident memory is past the limit now."""
        return bool(self.process.memory_info().rss > self.limit)


def _watch_memory(limit: _MemoryLimit) -> threading.Thread:
    """Start the watchdog: a daemon thread that ends the worker with `MEMORY_EXIT` once its
    resident memory passes the limit while a job runs. (A thread of the worker's own, so the
    driver needs no list of the pool's pids; it runs whenever the agent releases the GIL,
    which allocating Python objects does every few milliseconds.) A job that passes the
    limit between two looks is stopped as it ends (`run_job`), so it is the one charged."""

    def watch() -> None:
        while True:
            time.sleep(_WATCH_EVERY_S)
            if _job_running and limit.over():
                with _job_guard:
                    if _job_running:
                        os._exit(MEMORY_EXIT)

    thread = threading.Thread(target=watch, name="agenteval-memory-watchdog", daemon=True)
    thread.start()
    return thread
