"""The `process` executor: trials run in a pool of worker processes on this machine (pebble).

One worker per concurrent trial (`--workers N`, default the run's concurrency). Each worker is
forked from a forkserver that has the engine already imported (safe with the driver's threads,
where a plain fork is not; ~20 ms a worker), builds its runner once from the run's
`TrialRecipe` and runs one trial at a time in its own event loop
(`process_worker.py`). The driver sends each job as the scheduler asks for it and gets each
`Trial` back as soon as it ends (nothing is batched); it scores and stores them as it does for
`local`.

What a process contains that the driver's loop cannot:
- a worker that dies (a segfault, `os._exit`, the OOM killer) is replaced; its trial is
  `worker_crashed`, with the exit code or the signal (not retried: it is the agent's);
- a worker that outlives its job's kill limit (`kill_limit_s`: an agent that blocks its event
  loop, or a thread or a native call that never returns) is killed and replaced; its trial is
  a `timeout`, not retried: the kill comes once every attempt the run allows has had its
  time, and which of them the worker made is unknown (`remote._retried`);
- with `worker_memory_mb`, a worker whose resident memory passes it is stopped and replaced;
  its trial is `worker_crashed`, naming the limit.

Workers die with the driver (even SIGKILLed: each watches a pipe only the driver holds), and
the pool is stopped however the run ends.

How the recipe reaches the workers: cloudpickle. Functions and objects of the user's modules
(`my_agent.py:run`, loaded as `agenteval_user_<digest>_my_agent`) are pickled by reference,
and each worker imports the same files under the same names when it reads the recipe; lambdas
and `__main__`'s functions (a tool mock given as a lambda) are pickled by value. An agent
found in such a module (`agent.py:graph`) is not pickled at all: each worker loads it again
from there and adapts it as the driver did (`AgentByReference`), since a framework's agent
object holds locks and clients, and its adapter sets up the process it runs in. A model user
simulator is shipped as its settings and opened once per worker (its provider clients do not
pickle; its judge-cache SQLite file is the one all workers share; its rate limits become each
worker's). A recipe part that cannot be pickled stops the run before it starts with a
`ConfigError` naming the part.

Known limits: with no trial timeout there is no kill limit, so an agent that blocks its event
loop forever hangs its trial (as it does with `local`); and a script that calls
`evaluate(executor="process")` must do so under `if __name__ == "__main__":`, as every
multiprocessing program must (each worker imports the main module again; one that does not
is told so). A case whose user
is a model simulator has no kill limit either (see `kill_limit_s`). The memory limit counts the
worker's own resident memory, not that of processes its agent starts.

What it costs (2-core machine, other work running): starting the pool, 1.4 to 3 s for 50
workers (the forkserver importing agenteval, then one fork a worker, which pebble does before
it sends the first job); then about 0.5 ms a trial with 2 workers, about 1 ms with 50 (pebble's
workers share one task pipe: each job wakes every idle worker). So `local` stays the executor
for agents that await; `process` is for agents that crash, block or leak.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import sys
from collections.abc import AsyncIterator
from concurrent.futures import BrokenExecutor
from concurrent.futures import CancelledError as FutureCancelled
from contextlib import asynccontextmanager
from dataclasses import fields, replace
from typing import Any, Final

import cloudpickle  # type: ignore[import-untyped]
import pebble

from agenteval.agents.frameworks.base import FrameworkAgent
from agenteval.engine.deadline import grace_s
from agenteval.engine.executors.process_worker import (
    MEMORY_EXIT,
    AgentByReference,
    RecipeUnavailable,
    ShippedRecipe,
    SimulatorSettings,
    run_job,
    start,
)
from agenteval.engine.executors.remote import (
    Attempts,
    TrialJob,
    TrialRecipe,
    WorkerDeath,
    unpacked,
)
from agenteval.engine.executors.settings import ExecutorSettings
from agenteval.engine.failures import WorkerLostError
from agenteval.errors import AgentEvalError, ConfigError
from agenteval.trace import FailureCause, Trial

__all__ = ["kill_limit_s", "open_pool"]

MARGIN_S: Final = 2.0
"""Added to each attempt's time limit and grace before the driver kills a worker: the
attempt's set-up around its deadline (the tool environment, the record), and a loaded
machine's scheduling delays. Never cuts what the worker's own deadline would end."""

_USER_MODULES: Final = "agenteval_user_"

_PARTS: Final = {
    "agent": "agent",
    "environment": "tool mocks or replay",
    "users": "simulated users",
    "declared": "infrastructure_errors",
    "retry": "retry policy",
}


@asynccontextmanager
async def open_pool(
    recipe: TrialRecipe, executor: ExecutorSettings, concurrency: int
) -> AsyncIterator[Attempts]:
    """The run's worker pool, started for it and stopped (no worker left) however it ends."""
    shipped = ship(recipe, executor.memory_limit_mb)
    pool = pebble.ProcessPool(
        max_workers=max(1, executor.workers or concurrency),
        initializer=start,
        initargs=(shipped,),
        context=_forkserver(),
    )
    try:
        yield ProcessAttempts(pool, recipe, executor.memory_limit_mb)
    finally:
        # Kills the workers still running (a stopped run's trials); the running ones'
        # trials are not stored, so a resumed run runs them again.
        pool.stop()  # type: ignore[no-untyped-call]
        pool.join()


class ProcessAttempts:
    """The pool seen from the driver (`Attempts`): one job to a worker, its trial back, or
    how its worker died."""

    def __init__(self, pool: pebble.ProcessPool, recipe: TrialRecipe, memory_mb: int | None):
        self._pool = pool
        self._recipe = recipe
        self._memory_mb = memory_mb

    async def attempt(self, job: TrialJob) -> Trial | WorkerDeath:
        """Run `job` in a worker; never raises for what happened to it (only the run being
        stopped, which kills its worker, and a recipe the workers cannot load, which stops
        the run)."""
        limit = kill_limit_s(self._recipe, job)
        try:
            payload = cloudpickle.dumps(job)
        except Exception as exc:
            raise ConfigError(
                f"the process executor cannot send the case to its worker processes: "
                f"{type(exc).__name__}: {exc}",
                case=job.case.id,
                hint="give its tool mocks as data or module-level functions, or run with "
                "--executor local",
            ) from None
        try:
            future = self._pool.schedule(run_job, args=(payload,), timeout=limit)
        except RuntimeError as exc:  # the pool broke (below) and is not active any more
            raise WorkerLostError(f"the worker pool stopped: {exc}") from None
        try:
            trial = unpacked(await asyncio.wrap_future(future))
        except pebble.ProcessExpired as died:
            return self._died(died.exitcode)
        except TimeoutError:
            return WorkerDeath(
                FailureCause.TIMEOUT,
                f"the trial ran past its time limit ({self._recipe.timeout_s:g} s) and the "
                "worker did not end it (an agent blocking its event loop, or a thread or a "
                f"native call that does not return): the worker was killed after {limit:.0f} s",
            )
        except RecipeUnavailable as exc:
            raise ConfigError(
                f"the process executor's workers cannot load the run's recipe: {exc}",
                field="executor",
                hint="run it with --executor local to see the error in place",
            ) from None
        except FutureCancelled:
            raise asyncio.CancelledError from None  # the pool was stopped under the run
        except BrokenExecutor as exc:
            # pebble gives up on the whole pool when a worker dies with no job running (one
            # killed from outside while idle): the run stops, resumable, rather than store
            # every trial left as lost.
            raise WorkerLostError(
                f"the worker pool broke: {exc} (a worker died while it ran no trial; one that "
                "failed as it started printed why above: a script that starts a run on worker "
                "processes must do so under `if __name__ == '__main__':`)"
            ) from None
        except AgentEvalError as exc:  # one that stops a local run (a case no user can play)
            raise exc from None
        except Exception as exc:  # the trial could not be sent back
            return WorkerDeath(
                FailureCause.WORKER_LOST,
                f"the worker pool lost the trial: {type(exc).__name__}: {exc}",
            )
        return trial

    def _died(self, code: int | None) -> WorkerDeath:
        if code == MEMORY_EXIT and self._memory_mb is not None:
            return WorkerDeath(
                FailureCause.WORKER_CRASHED,
                f"the worker process passed its memory limit (worker_memory_mb: "
                f"{self._memory_mb} MB) and was stopped",
                code,
            )
        return WorkerDeath(
            FailureCause.WORKER_CRASHED, f"the worker process died: {_death(code)}", code
        )


def kill_limit_s(recipe: TrialRecipe, job: TrialJob) -> float | None:
    """How long the driver lets a worker run `job` before it kills it: never less than the
    worker's own deadline needs to end every attempt the job may make, that is per attempt
    the time limit, the grace an agent that ignores its cancellation gets, `MARGIN_S`, and a
    scripted user's replies (each limited to the time limit, the clock held meanwhile), plus
    the longest wait before each retry (`max_wait_s`). None (no kill) when the run has no
    time limit, or the case's user is a model simulator, whose calls (with their providers'
    asked-for waits) bound themselves but not to a figure known here."""
    timeout = recipe.timeout_s
    if timeout is None:
        return None
    per_attempt = timeout + grace_s(timeout) + MARGIN_S
    simulation = job.case.user_simulation
    if simulation is not None:
        try:
            user = recipe.users.user_for(simulation) if recipe.users is not None else None
        except ValueError:
            user = None
        if user is not None and getattr(user, "limits_itself", False):
            return None
        per_attempt += simulation.max_turns * timeout
    retries = job.retries_left
    return (retries + 1) * per_attempt + retries * recipe.retry.max_wait_s


def ship(recipe: TrialRecipe, memory_limit_mb: int | None) -> ShippedRecipe:
    """What every worker gets at its start; a `ConfigError` naming the part of the recipe
    that cannot be pickled."""
    simulator = None
    users = recipe.users
    if users is not None and users.simulator is not None:
        simulator = _simulator_settings(users.simulator)
        if simulator is not None:  # opened again in each worker; scripts loaded there too
            users = replace(users, simulator=None, owned=False, _scripts={})
            recipe = replace(recipe, users=users)
    by_reference = _agent_by_reference(recipe)
    if by_reference is not None:
        recipe = replace(recipe, agent=by_reference)  # type: ignore[arg-type]
    try:
        payload = cloudpickle.dumps(recipe)
    except Exception as exc:
        part = _unpicklable(recipe)
        reference = "by its reference (`agent.py:graph`), which each worker loads again, "
        raise ConfigError(
            f"the process executor cannot send the run's {part} to its worker "
            f"processes: {type(exc).__name__}: {exc}",
            field="executor",
            hint=f"give it {reference * (part == 'agent')}as a module-level function or "
            "plain data, or run with --executor local",
        ) from None
    modules = {
        name: str(module.__file__)
        for name, module in list(sys.modules.items())
        if name.startswith(_USER_MODULES) and getattr(module, "__file__", None)
    }
    return ShippedRecipe(payload, modules, simulator, memory_limit_mb, dict(os.environ))


def _agent_by_reference(recipe: TrialRecipe) -> AgentByReference | None:
    """Where the run's agent was loaded from (`agent.py:graph`: the module holding it and its
    name there), for each worker to load it again; None when it is in no module a worker can
    import again (a function of the driver's script, an object built in a test)."""
    ref = recipe.agent_ref or ""
    if ref.startswith(("http://", "https://")):
        return None
    module_part, _, attribute = ref.rpartition(":")
    agent = recipe.agent
    loaded = getattr(agent, "agent", agent) if isinstance(agent, FrameworkAgent) else agent
    # The user modules the driver imported from files (`agent.py:graph`, given to the CLI or
    # to `evaluate`), and the module a `package.module:graph` names; read with `vars`, never
    # a module's own `__getattr__`.
    names = [name for name in list(sys.modules) if name.startswith(_USER_MODULES)]
    for name in [*names, module_part] if module_part else names:
        module = sys.modules.get(name)
        held = vars(module) if module is not None else {}
        if held.get(attribute) is loaded:
            return AgentByReference(name, attribute)
        found = next((key for key, value in held.items() if value is loaded), None)
        if found is not None:
            return AgentByReference(name, found)
    return None


def _simulator_settings(simulator: Any) -> SimulatorSettings | None:
    """The settings of a model user simulator to open in each worker (None: another kind of
    user, shipped as it is)."""
    from agenteval.simulation.simulator import UserSimulator

    if not isinstance(simulator, UserSimulator):
        return None
    sampler = simulator.sampler
    return SimulatorSettings(sampler.config, sampler.prices, sampler.retry, simulator.prompt)


def _unpicklable(recipe: TrialRecipe) -> str:
    """Which part of the recipe does not pickle, in the words of the run's settings."""
    for part in fields(recipe):
        try:
            cloudpickle.dumps(getattr(recipe, part.name))
        except Exception:
            return _PARTS.get(part.name, part.name)
    return "settings"


def _death(code: int | None) -> str:
    """How a worker ended, from its exit code (negative: the signal that killed it)."""
    if code is None:
        return "it ended without an exit code"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by signal {name} ({code})"
    return f"exited with code {code}"


def _forkserver() -> Any:
    """The start method: forkserver, with the worker module (and so the engine) imported in
    the server once, so each worker forks ready. (`fork` from the driver, which has threads,
    could copy a held lock; `spawn` imports everything again in every worker.)"""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["agenteval.engine.executors.process_worker"])
    return context
