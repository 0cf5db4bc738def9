"""The `ray` executor's pool (`executors/cluster.py` opens it): the actors that run trials,
and the driver's side of each attempt sent to one. Ray is imported by the caller (passed in)
or, in a worker, inside the actor's methods."""

from __future__ import annotations

import asyncio
import importlib.util
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from agenteval.agents.recorder import monotonic
from agenteval.engine.executors.remote import (
    TrialJob,
    TrialRecipe,
    TrialWorker,
    WorkerDeath,
    unpacked,
)
from agenteval.errors import ConfigError
from agenteval.trace import FailureCause, Trial, utc_now

__all__ = ["Backstop", "Pool", "Shipment", "TrialActor"]

_SETTLE_S = 60.0
"""Seconds the driver asks Ray what became of an actor that went silent before it counts it
lost (Ray declares a killed node dead after missing heartbeats: about 15 s by default)."""

_BACKSTOP_GRACE_S = 60.0
"""Seconds the driver waits past a trial's own limits before it kills the actor running it."""

_REPLACE_TRIES = 3
"""Starts of a dead actor's replacement that may each die with the node Ray placed it on."""


@dataclass(frozen=True)
class Shipment:
    """What every actor starts from: the recipe, cloudpickled, and the user's files in the
    agent's folder that it names by reference (module name, path on the driver, path in the
    folder), which the actor imports under those names before it reads the recipe."""

    recipe: bytes
    files: tuple[tuple[str, str, str], ...] = ()


class TrialActor:
    """A Ray actor's body: the worker built once from the shipped recipe, running jobs."""

    def __init__(self, shipment: Shipment) -> None:
        import cloudpickle  # type: ignore[import-untyped]

        # The folder's files, as the driver loaded them (in the job's working directory, the
        # current one, when the folder is not on this machine); raising, the actor fails to
        # start and the run says why (`Pool._new`).
        for name, driver_path, relative in shipment.files:
            path = Path(driver_path)
            _import_as(name, path if path.is_file() else Path.cwd() / relative)
        recipe: TrialRecipe = cloudpickle.loads(shipment.recipe)
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

    async def run(self, job: TrialJob) -> bytes:
        """One trial, as the local engine runs it, pickled here (`remote.packed`: one holding
        what does not pickle crosses as the store keeps it, never failing Ray's pickling)."""
        return await self._worker.run_packed(job)


@dataclass(frozen=True)
class Backstop:
    """The driver's own limit on an attempt, past which it kills the actor: the trial's time
    limit (which the worker enforces itself) for every try it may make, and for each reply
    of a simulated user (off the agent's clock, each held to the same limit), plus the
    longest wait between tries, twice over and a minute more; None when trials have no
    limit."""

    timeout_s: float | None
    max_wait_s: float

    @classmethod
    def of(cls, recipe: TrialRecipe) -> Backstop:
        return cls(recipe.timeout_s, recipe.retry.max_wait_s)

    def limit_s(self, job: TrialJob) -> float | None:
        """Seconds the driver gives `job`'s attempt (None: no limit)."""
        if self.timeout_s is None:
            return None
        tries = job.retries_left + 1
        simulation = job.case.user_simulation
        replies = simulation.max_turns if simulation is not None else 0
        per_try = self.timeout_s * (1 + replies) + self.max_wait_s
        return 2 * per_try * tries + _BACKSTOP_GRACE_S


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
    out_of_memory: bool = False
    """Killed by Ray's memory monitor: which trial used the memory, none can tell (the monitor
    kills by the node's memory, several workers at once, idle ones too)."""


class Pool:
    """The actors and the attempts sent to them: each attempt goes to the least loaded live
    actor with a free slot; a dead actor is replaced."""

    def __init__(
        self,
        ray: ModuleType,
        payload: Shipment,
        *,
        slots: int,
        backstop: Backstop,
        simulator: bool = False,
    ) -> None:
        # The run's model user simulator stays on the driver: a case it plays is refused.
        self._simulator = simulator
        self._refused = False
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
        nodes: list[str | None] = [*self._nodes()] or [None]
        actors = await asyncio.gather(
            *(self._new(self._slots, nodes[i % len(nodes)]) for i in range(workers))
        )
        self._actors.extend(actors)

    def _nodes(self, avoid: str | None = None) -> list[str]:
        """The live nodes that can run an actor, those running fewest of the pool's first.
        Ray's own SPREAD is best effort (it put three actors of three on the head node):
        the pool deals them out itself, so one node lost loses a share of the trials."""
        alive = [
            str(node["NodeID"])
            for node in self._ray.nodes()
            if node.get("Alive") and node.get("Resources", {}).get("CPU", 0) >= 1
        ]
        running = [actor.node_id for actor in self._actors if not actor.dead]
        return sorted((n for n in alive if n != avoid), key=running.count)

    async def _new(self, slots: int, node: str | None) -> _Actor:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        options: dict[str, Any] = {
            "max_concurrency": slots,
            "max_restarts": 0,
            "max_task_retries": 0,
            # soft: a node that cannot take it leaves the choice to Ray.
            "scheduling_strategy": "SPREAD"
            if node is None
            else NodeAffinitySchedulingStrategy(node, soft=True),
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
        """Send `job` to an actor and wait for its trial; a `WorkerDeath` when the actor died.
        A `ConfigError` for a case played by the model user simulator, which does not ship."""
        simulation = job.case.user_simulation
        if self._simulator and simulation is not None and simulation.script is None:
            if self._refused:  # the run is stopping on the first: one error, not one a case
                await asyncio.Event().wait()
            self._refused = True
            raise ConfigError(
                "it is played by the model user simulator (user_simulator:, "
                "--user-simulator), which does not run in Ray workers: it is opened by the "
                "driver, with its client and rate limits",
                case=job.case.id,
                hint="run cases with simulated users with --executor local or process",
            )
        started_at, start = utc_now(), monotonic()
        actor = await self._acquire()
        try:
            outcome = await self._on(actor, job)
        finally:
            await self._release(actor)
        crashed = isinstance(outcome, WorkerDeath) and outcome.cause is FailureCause.WORKER_CRASHED
        if crashed and (actor.load_at_death > 1 or actor.out_of_memory):
            # Others ran in the same process (or on the same node's memory): any of them may
            # have ended it. Run this one again alone, where a crash is more surely its own.
            assert isinstance(outcome, WorkerDeath)
            again = await self._alone(job, outcome)
            if again is outcome:  # no actor of its own started: it ran once
                return outcome
            # It ran twice: the first try counts, as a retry's does (`RemoteTrials`).
            if isinstance(again, WorkerDeath):
                return replace(again, attempts=again.attempts + 1)
            return again.model_copy(
                update={
                    "attempts": again.attempts + 1,
                    "started_at": started_at,
                    "latency_s": monotonic() - start,
                }
            )
        return outcome

    async def _on(self, actor: _Actor, job: TrialJob) -> Trial | WorkerDeath:
        ray = self._ray
        ref = actor.handle.run.remote(job)
        limit = self._backstop.limit_s(job)
        try:
            return unpacked(await asyncio.wait_for(_awaited(ref), limit))
        except TimeoutError:
            actor.killed = actor.dead = True
            self._kill(actor)
            return WorkerDeath(
                FailureCause.TIMEOUT,
                f"the Ray worker gave no trial in {limit:g} s (the trial's limit for each try "
                f"and user reply, with its waits, twice over): the driver killed it",
            )
        except asyncio.CancelledError:
            ray.cancel(ref, force=False)
            raise
        except ray.exceptions.OutOfMemoryError as exc:
            # Not an actor error: Ray's memory monitor killed the actor's process.
            if not actor.dead:
                actor.dead = actor.out_of_memory = True
                actor.load_at_death = actor.load
            return WorkerDeath(
                FailureCause.WORKER_CRASHED,
                f"the Ray worker running the trial was killed by Ray's memory monitor (its "
                f"node ran low on memory): {_first_lines(exc)}",
            )
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
            if isinstance(exc, ray.exceptions.ActorUnavailableError) and not (
                await self._raylet_answers(actor.node_id)
            ):
                # Its node's raylet is gone: the node is, whatever Ray says in ~15 s.
                return WorkerDeath(
                    FailureCause.WORKER_LOST,
                    f"the Ray node stopped answering: {_first_lines(exc)}",
                )
            if isinstance(exc, ray.exceptions.ActorDiedError) and "process has died" in text:
                pid = re.search(r"pid: (\d+)", text)
                return WorkerDeath(
                    FailureCause.WORKER_CRASHED,
                    f"the Ray worker process running the trial died"
                    f"{f' (pid {pid[1]})' if pid else ''}: the agent exited it, crashed in "
                    f"native code, or was killed for its memory",
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

    async def _raylet_answers(self, node_id: str) -> bool:
        """Whether the node's raylet accepts a connection (within 2 s)."""
        for node in self._ray.nodes():
            if node.get("NodeID") == node_id:
                address, port = node.get("NodeManagerAddress"), node.get("NodeManagerPort")
                break
        else:
            return False
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(address, port), 2)
        except (OSError, TimeoutError):
            return False
        writer.close()
        return True

    def _node_alive(self, node_id: str) -> bool:
        for node in self._ray.nodes():
            if node.get("NodeID") == node_id:
                return bool(node.get("Alive"))
        return False

    async def _alone(self, job: TrialJob, crash: WorkerDeath) -> Trial | WorkerDeath:
        """`job` on an actor of its own, killed after it (`crash` when none starts)."""
        nodes = self._nodes()
        try:
            actor = await self._new(1, nodes[0] if nodes else None)
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
                task = asyncio.create_task(self._replace(actor.node_id))
                self._starting.add(task)
                task.add_done_callback(self._starting.discard)
            self._changed.notify_all()

    async def _replace(self, dead_on: str) -> None:
        """A new actor in a dead one's place, on the live node running fewest (not the dead
        one's: Ray may not know yet that it is gone). One that dies with its node before it
        answers is started again (`_REPLACE_TRIES`): Ray 2.40, its view of the nodes behind,
        can place it on the very node being lost, affinity to another node notwithstanding,
        and the pool would stay an actor short, its waiting trials too (`_acquire`)."""
        actor = None
        for _ in range(_REPLACE_TRIES):
            nodes = self._nodes(avoid=dead_on)
            try:
                actor = await self._new(self._slots, nodes[0] if nodes else None)
            except ConfigError as exc:
                if "node has died" in str(exc.__cause__):
                    continue  # Ray knows the node is gone now: it places the next one elsewhere
            break  # started, or cannot start: the pool runs on with one actor fewer
        async with self._changed:
            if actor is not None:
                self._actors.append(actor)
            # Done starting before the waiters wake (not in the task's done callback, which
            # runs after them): with no actor left, they must see that none is coming.
            self._starting.discard(asyncio.current_task())
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


def _import_as(name: str, path: Path) -> None:
    """Import the file at `path` as module `name` (its folder on the import path, as
    `loading.import_file` puts it), unless a module of that name is loaded already."""
    if name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path} as Python")
    module = importlib.util.module_from_spec(spec)
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


async def _awaited(ref: Any) -> Any:
    return await ref


def _first_lines(exc: BaseException) -> str:
    """An exception as one short line: Ray's messages run to a page of advice."""
    text = " ".join(line.strip() for line in str(exc).splitlines()[:8] if line.strip())
    return (text[:400] + "...") if len(text) > 400 else text or type(exc).__name__
