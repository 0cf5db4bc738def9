"""The `ray` executor: trials run in Ray actors, on the cluster at `--ray-address` (else
`RAY_ADDRESS`, else a local Ray instance started for the run and stopped after it).

Each actor builds its `TrialWorker` once, from the recipe shipped to it by value (cloudpickle,
so an agent loaded from `my_agent.py` and tool mocks written as lambdas reach workers that
never saw the file), and runs `TrialJob`s as an async actor (`max_concurrency`: the run's
concurrency spread over the actors). When the agent came from a reference, its folder ships
as the actors' Ray working directory, so `import tools` beside the agent works there too.

Ray never re-runs anything itself (`max_restarts=0`, `max_task_retries=0`): a trial runs twice
only when the driver says so (`RemoteTrials`, the run's retry policy). An actor lost with its
node is `worker_lost` (infrastructure: retried on another actor); an actor whose process died
on a live node is `worker_crashed` (the agent's failure: scored). Ray is imported only here,
when a run names it."""

from __future__ import annotations

import asyncio
import logging
import math
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from agenteval.engine.executors.remote import (
    Attempts,
    TrialJob,
    TrialRecipe,
    TrialWorker,
    WorkerDeath,
)
from agenteval.engine.executors.settings import ExecutorSettings
from agenteval.errors import ConfigError
from agenteval.trace import FailureCause, Trial

__all__ = ["open_pool"]

_EXCLUDED = [
    ".agenteval",
    ".git",
    ".hg",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    "node_modules",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "*.pyc",
]
"""What of the agent's folder never ships to the workers: the run store (the driver alone
writes it), version control, virtual environments and caches."""

_SETTLE_S = 60.0
"""Seconds the driver asks Ray what became of an actor that went silent before it counts it
lost (Ray declares a killed node dead after missing heartbeats: about 15 s by default)."""

_BACKSTOP_GRACE_S = 60.0
"""Seconds the driver waits past a trial's own limits before it kills the actor running it."""


@asynccontextmanager
async def open_pool(
    recipe: TrialRecipe, executor: ExecutorSettings, concurrency: int
) -> AsyncIterator[Attempts]:
    """The run's actors, started for it and killed however it ends; Ray itself stopped after
    the run when the run started it (joined to a cluster, the driver only disconnects)."""
    ray = _import_ray()
    payload = _shipped(recipe)
    started = _connect(ray, executor.ray_address, _runtime_env(recipe))
    try:
        workers = executor.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        pool = _Pool(
            ray,
            payload,
            slots=max(1, math.ceil(concurrency / workers)),
            backstop=_Backstop.of(recipe),
        )
        try:
            await pool.start(workers)
            yield pool
        finally:
            pool.close()
    finally:
        if started:
            ray.shutdown()


def _import_ray() -> ModuleType:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "the ray executor needs Ray, which is not installed",
            hint="pip install 'agenteval[ray]'",
        ) from exc
    return ray


def _connect(ray: ModuleType, address: str | None, runtime_env: dict[str, Any]) -> bool:
    """Join the cluster at `address` (else `RAY_ADDRESS`), else start a local Ray instance,
    with the run's `runtime_env` (Ray ships a folder only for a whole job). False when this
    process was already connected: the caller's Ray, left as it is, and no folder shipped
    (workers on this machine find the agent's folder by its path; `TrialActor`)."""
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS") or None
    # The workers' output is theirs: it would interleave with the driver's report.
    common: dict[str, Any] = {
        "log_to_driver": False,
        "logging_level": logging.WARNING,
        "runtime_env": runtime_env or None,
    }
    try:
        if address is None:
            ray.init(include_dashboard=False, **common)
        else:
            ray.init(address=address, **common)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise ConfigError(
            f"cannot start or join {where}: {exc}",
            hint="check --ray-address / RAY_ADDRESS (host:port of the head node's GCS)",
        ) from exc
    return True


def _runtime_env(recipe: TrialRecipe) -> dict[str, Any]:
    """The actors' Ray runtime environment: the agent's folder as their working directory
    when the agent was loaded from a reference (`agent: my_agent.py:run`), so its sibling
    modules and data files are there on every node; nothing otherwise."""
    if recipe.agent_ref is None or recipe.base_dir is None:
        return {}
    return {"working_dir": str(recipe.base_dir.resolve()), "excludes": list(_EXCLUDED)}


def _shipped(recipe: TrialRecipe) -> bytes:
    """The recipe as workers receive it: cloudpickled, the user's own modules (an agent file
    loaded as `agenteval_user_<digest>_<stem>`, the module defining the agent) by value, since
    a worker cannot import them by name. A `ConfigError` saying what cannot ship."""
    if recipe.environment is not None and recipe.environment.replay is not None:
        raise ConfigError(
            "replaying a stored run (--replay) works with the local executor only: the stored "
            "run is read from the driver's store, which the Ray workers do not have",
            hint="run with --executor local, or leave --replay out",
        )
    if recipe.users is not None and recipe.users.owned:
        raise ConfigError(
            "a model user simulator (user_simulator:, --user-simulator) does not run in Ray "
            "workers: it is opened by the driver, with its client and rate limits",
            hint="run cases with simulated users with --executor local or process",
        )
    with _by_value(_users_modules(recipe)) as pickler:
        try:
            payload: bytes = pickler.dumps(recipe)
        except Exception as exc:
            raise ConfigError(
                f"the agent, its tool mocks or its users cannot be sent to Ray workers: "
                f"{type(exc).__name__}: {exc}",
                hint="load the agent from a reference (agent: my_agent.py:run), or run with "
                "--executor local",
            ) from exc
    return payload


def _users_modules(recipe: TrialRecipe) -> list[ModuleType]:
    """The modules a worker cannot import by name: agent files loaded by path, and the
    module the agent itself is defined in when it is not an installed package's."""
    found = [m for name, m in list(sys.modules.items()) if name.startswith("agenteval_user_")]
    owner = sys.modules.get(getattr(recipe.agent, "__module__", "") or "")
    if owner is not None and _is_users(owner):
        found.append(owner)
    return found


def _is_users(module: ModuleType) -> bool:
    """A module of the user's project, not of an installed package nor agenteval's."""
    file = getattr(module, "__file__", None)
    if file is None or module.__name__ in ("__main__", "builtins"):
        return False
    path = str(Path(file).resolve())
    return not ("site-packages" in path or "dist-packages" in path or path.startswith(_OURS))


_OURS = str(Path(__file__).resolve().parents[2])


@contextmanager
def _by_value(modules: list[ModuleType]) -> Iterator[Any]:
    """cloudpickle, with `modules` pickled by value for the time of one dump."""
    import cloudpickle  # type: ignore[import-untyped]

    registered = []
    already = set(cloudpickle.list_registry_pickle_by_value())
    for module in {m.__name__: m for m in modules}.values():
        if module.__name__ not in already:  # one the user registered stays registered
            cloudpickle.register_pickle_by_value(module)
            registered.append(module)
    try:
        yield cloudpickle
    finally:
        for module in registered:
            cloudpickle.unregister_pickle_by_value(module)


class TrialActor:
    """A Ray actor's body: the worker built once from the shipped recipe, running jobs."""

    def __init__(self, payload: bytes) -> None:
        import cloudpickle

        recipe: TrialRecipe = cloudpickle.loads(payload)
        folder = recipe.base_dir.resolve() if recipe.base_dir is not None else None
        if folder is not None and recipe.agent_ref is not None and not folder.is_dir():
            # Not on this machine: the folder came as the job's working directory, the
            # current one, which Ray puts on the import path.
            folder = Path.cwd()
        if folder is not None:
            if str(folder) not in sys.path:  # `import tools` beside the agent, as locally
                sys.path.insert(0, str(folder))
            if recipe.users is not None:  # scripted users are relative to it too
                recipe = replace(recipe, users=replace(recipe.users, base_dir=folder))
        self._worker = TrialWorker(recipe)

    async def node(self) -> str:
        """The id of the node this actor runs on (asked once, when it starts)."""
        import ray

        return str(ray.get_runtime_context().get_node_id())

    async def run(self, job: TrialJob) -> Trial:
        """One trial, as the local engine runs it."""
        return await self._worker.run(job)


@dataclass(frozen=True)
class _Backstop:
    """The driver's own limit on an attempt, past which it kills the actor: the trial's time
    limit (which the worker enforces itself) for every try it may make, plus the longest
    wait between tries, twice over and a minute more; None when trials have no limit."""

    timeout_s: float | None
    max_wait_s: float

    @classmethod
    def of(cls, recipe: TrialRecipe) -> _Backstop:
        return cls(recipe.timeout_s, recipe.retry.max_wait_s)

    def limit_s(self, job: TrialJob) -> float | None:
        if self.timeout_s is None:
            return None
        tries = job.retries_left + 1
        return 2 * (self.timeout_s + self.max_wait_s) * tries + _BACKSTOP_GRACE_S


@dataclass(eq=False)
class _Actor:
    """One actor of the pool, as the driver tracks it (mutable: its load changes)."""

    handle: Any
    node_id: str
    slots: int
    load: int = 0
    dead: bool = False
    killed: bool = False
    """Killed by the driver (its backstop), not by what ran in it."""
    load_at_death: int = 0
    """How many attempts it was running when it died: more than one, and none can be blamed."""
    refs: set[Any] = field(default_factory=set)


class _Pool:
    """The actors and the attempts sent to them: each attempt goes to the least loaded live
    actor with a free slot; a dead actor is replaced."""

    def __init__(
        self,
        ray: ModuleType,
        payload: bytes,
        *,
        slots: int,
        backstop: _Backstop,
    ) -> None:
        self._ray = ray
        self._payload = payload
        self._slots = slots
        self._backstop = backstop
        self._actors: list[_Actor] = []
        self._starting: set[asyncio.Task[None]] = set()
        self._changed = asyncio.Condition()
        self._all: list[Any] = []  # every handle made, killed at the end
        self._remote = ray.remote(TrialActor)

    async def start(self, workers: int) -> None:
        """Start `workers` actors and wait until they run; a `ConfigError` when they cannot
        (the agent fails to load in a worker, the working directory cannot ship)."""
        actors = await asyncio.gather(*(self._new(self._slots) for _ in range(workers)))
        self._actors.extend(actors)

    async def _new(self, slots: int) -> _Actor:
        options: dict[str, Any] = {
            "max_concurrency": slots,
            "max_restarts": 0,
            "max_task_retries": 0,
            "scheduling_strategy": "SPREAD",
        }
        handle = self._remote.options(**options).remote(self._payload)
        self._all.append(handle)
        try:
            node_id = await handle.node.remote()
        except self._ray.exceptions.RayError as exc:
            raise ConfigError(
                f"a Ray worker could not start the run's agent: {_first_lines(exc)}",
                hint="the agent must import on the workers: its folder ships with it, other "
                "packages must be installed on every node",
            ) from exc
        return _Actor(handle, node_id, slots)

    async def attempt(self, job: TrialJob) -> Trial | WorkerDeath:
        """Send `job` to an actor and wait for its trial; a `WorkerDeath` when the actor died."""
        actor = await self._acquire()
        try:
            outcome = await self._on(actor, job)
        finally:
            await self._release(actor)
        crashed = isinstance(outcome, WorkerDeath) and outcome.cause is FailureCause.WORKER_CRASHED
        if crashed and actor.load_at_death > 1:
            # Others ran in the same process: any of them may have ended it. Run this one
            # again alone, where a crash can only be its own.
            assert isinstance(outcome, WorkerDeath)
            return await self._alone(job, outcome)
        return outcome

    async def _on(self, actor: _Actor, job: TrialJob) -> Trial | WorkerDeath:
        ray = self._ray
        ref = actor.handle.run.remote(job)
        actor.refs.add(ref)
        limit = self._backstop.limit_s(job)
        try:
            trial: Trial = await asyncio.wait_for(_awaited(ref), limit)
            return trial
        except TimeoutError:
            actor.killed = actor.dead = True
            self._kill(actor)
            return WorkerDeath(
                FailureCause.TIMEOUT,
                f"the Ray worker gave no trial in {limit:g} s (the trial's limit for each try, "
                f"with its waits, twice over): the driver killed it",
            )
        except asyncio.CancelledError:
            ray.cancel(ref, force=False)
            raise
        except (
            ray.exceptions.RayActorError,
            ray.exceptions.NodeDiedError,
            ray.exceptions.WorkerCrashedError,
            ray.exceptions.ObjectLostError,
            ray.exceptions.LocalRayletDiedError,
        ) as exc:
            if not actor.dead:
                actor.dead = True
                actor.load_at_death = actor.load
            return await self._death(actor, exc)
        finally:
            actor.refs.discard(ref)

    async def _death(self, actor: _Actor, exc: BaseException) -> WorkerDeath:
        """What an actor's death means for the trial it ran: lost with its node (or killed
        by the driver for another trial) is infrastructure; its process dying on a live
        node is the agent's.

        Ray says which only once its control store knows: an actor whose node was killed is
        first only "unavailable" (its socket closed), until the node misses its heartbeats.
        So an unclear death is asked again, every half second, for up to `_SETTLE_S`; still
        unclear then, it counts as lost (retried: never an agent blamed for the cluster)."""
        if actor.killed:
            return WorkerDeath(
                FailureCause.WORKER_LOST,
                "the Ray worker was killed by the driver (another trial it ran passed the "
                "driver's time limit)",
            )
        ray = self._ray
        loop = asyncio.get_running_loop()
        give_up = loop.time() + _SETTLE_S
        while True:
            text = str(exc)
            if "node has died" in text or not self._node_alive(actor.node_id):
                return WorkerDeath(
                    FailureCause.WORKER_LOST, f"the Ray node was lost: {_first_lines(exc)}"
                )
            if isinstance(exc, ray.exceptions.ActorDiedError) and "process has died" in text:
                return WorkerDeath(
                    FailureCause.WORKER_CRASHED, f"the Ray worker died: {_first_lines(exc)}"
                )
            if loop.time() > give_up:
                return WorkerDeath(
                    FailureCause.WORKER_LOST, f"the Ray worker was lost: {_first_lines(exc)}"
                )
            await asyncio.sleep(0.5)
            try:
                await asyncio.wait_for(_awaited(actor.handle.node.remote()), 5)
            except ray.exceptions.RayError as again:
                exc = again
            except TimeoutError:
                continue
            else:  # it answers: the connection to it broke, not its process
                return WorkerDeath(
                    FailureCause.WORKER_LOST, f"the Ray worker was unreachable: {_first_lines(exc)}"
                )

    def _node_alive(self, node_id: str) -> bool:
        for node in self._ray.nodes():
            if node.get("NodeID") == node_id:
                return bool(node.get("Alive"))
        return False

    async def _alone(self, job: TrialJob, crash: WorkerDeath) -> Trial | WorkerDeath:
        """`job` on an actor of its own, killed after it (`crash` when none starts)."""
        try:
            actor = await self._new(1)
        except ConfigError:
            return crash
        actor.load = 1
        try:
            return await self._on(actor, job)
        finally:
            self._kill(actor)

    async def _acquire(self) -> _Actor:
        async with self._changed:
            while True:
                free = [a for a in self._actors if not a.dead and a.load < a.slots]
                if free:
                    actor = min(free, key=lambda a: a.load)
                    actor.load += 1
                    return actor
                if not self._actors and not self._starting:
                    raise RuntimeError("every Ray worker of the run died, and none restarts")
                await self._changed.wait()

    async def _release(self, actor: _Actor) -> None:
        async with self._changed:
            actor.load -= 1
            if actor.dead and actor in self._actors:
                self._actors.remove(actor)
                self._kill(actor)
                task = asyncio.create_task(self._replace())
                self._starting.add(task)
                task.add_done_callback(self._starting.discard)
            self._changed.notify_all()

    async def _replace(self) -> None:
        """A new actor in a dead one's place (on any live node: SPREAD over what is left)."""
        try:
            actor = await self._new(self._slots)
        except ConfigError:
            actor = None  # the pool runs on with one actor fewer
        async with self._changed:
            if actor is not None:
                self._actors.append(actor)
            self._changed.notify_all()

    def _kill(self, actor: _Actor) -> None:
        try:
            self._ray.kill(actor.handle, no_restart=True)
        except Exception:  # already gone with its node: nothing left to stop
            return

    def close(self) -> None:
        """Kill every actor the run started (none is left behind on the cluster)."""
        for task in self._starting:
            task.cancel()
        for handle in self._all:
            try:
                self._ray.kill(handle, no_restart=True)
            except Exception:  # gone with its node already
                continue


async def _awaited(ref: Any) -> Any:
    return await ref


def _first_lines(exc: BaseException) -> str:
    """An exception as one short line: Ray's messages run to a page of advice."""
    text = " ".join(line.strip() for line in str(exc).splitlines()[:8] if line.strip())
    return (text[:400] + "...") if len(text) > 400 else text or type(exc).__name__
