"""The `ray` executor: trials run in Ray actors, on the cluster at `--ray-address` (else
`RAY_ADDRESS`, else a local Ray instance started for the run and stopped after it).

Each actor builds its `TrialWorker` once, from the recipe shipped to it (cloudpickle: tool
mocks written as lambdas, an agent object, reach workers that never saw them), and runs
`TrialJob`s as an async actor (`max_concurrency`: the run's concurrency spread over the
actors). When the agent came from a reference, its folder ships as the actors' Ray working
directory, so `import tools` beside the agent works there too, and each actor imports the
agent's file itself (what it makes at module level, an SDK client, is made there, as with
`local`); other files of the user's are shipped by value.

Ray never re-runs anything itself (`max_restarts=0`, `max_task_retries=0`): a trial runs twice
only when the driver says so (`RemoteTrials`, the run's retry policy). An actor lost with its
node is `worker_lost` (infrastructure: retried on another actor); an actor whose process died
on a live node is `worker_crashed` (the agent's failure: scored). The driver's backstop: an
attempt silent past twice its tries' limits and waits, plus a minute, has its actor killed
(`timeout`, not retried: every try's time is spent, `remote._retried`). What cannot ship is refused before Ray starts: the replay of a stored run
(read from the driver's store), an agent that does not pickle; a model user simulator (opened
by the driver, with its client and rate limits) stays on the driver, and the first case that
needs it stops the run. Ray is imported only here,
when a run names it; the actors and the attempts sent to them are `cluster_pool.py`'s."""

from __future__ import annotations

import logging
import math
import os
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

from agenteval.engine.executors.cluster_pool import Backstop, Pool, Shipment
from agenteval.engine.executors.remote import Attempts, TrialRecipe
from agenteval.engine.executors.settings import ExecutorSettings
from agenteval.errors import ConfigError

__all__ = ["open_pool"]

_EXCLUDED = [
    ".agenteval",
    ".git",
    ".hg",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "*.pyc",
]
"""What of the agent's folder never ships to the workers: the run store (the driver alone
writes it), version control, virtual environments and caches (Ray leaves `__pycache__` out
itself)."""


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
        pool = Pool(
            ray,
            payload,
            slots=max(1, math.ceil(concurrency / workers)),
            backstop=Backstop.of(recipe),
            simulator=recipe.users is not None and recipe.users.owned,
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
    if address is not None:
        _check_reachable(address)
    # The workers' output is theirs: it would interleave with the driver's report.
    common: dict[str, Any] = {
        "log_to_driver": False,
        "logging_level": logging.WARNING,
        "runtime_env": runtime_env or None,
    }
    try:
        if address is None:
            # "local", not None: `ray.init()` alone joins the last cluster started on this
            # machine (`ray start`, another user's or session's), not one of the run's own.
            ray.init(address="local", include_dashboard=False, **common)
        else:
            ray.init(address=address, **common)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise ConfigError(
            f"cannot start or join {where}: {exc}",
            hint="check --ray-address / RAY_ADDRESS (host:port of the head node's GCS)",
        ) from exc
    return True


def _check_reachable(address: str) -> None:
    """A `ConfigError` at once when nothing listens at `address` (`host:port`): `ray.init`
    itself would retry it for minutes. Other forms (`ray://`, `auto`) are Ray's to check."""
    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as exc:
        raise ConfigError(
            f"no Ray cluster answers at {address}: {exc}",
            hint="give the head node's address as host:port (`ray start --head` prints it) "
            "with --ray-address or RAY_ADDRESS, or leave both out for a local Ray",
        ) from exc


def _runtime_env(recipe: TrialRecipe) -> dict[str, Any]:
    """The actors' Ray runtime environment: the agent's folder (`_agent_folder`) as their
    working directory when it has one (`agent: my_agent.py:run`, or a file given to
    `evaluate`), so its sibling modules and data files are there on every node."""
    folder = _agent_folder(recipe)
    if folder is None:
        return {}
    return {"working_dir": str(folder), "excludes": list(_EXCLUDED)}


def _agent_folder(recipe: TrialRecipe) -> Path | None:
    """The folder that ships with the agent: its reference's folder (the CLI's, agenteval.yaml's,
    or `evaluate(agent_ref=, base_dir=)`), else that of the file the agent was loaded from
    (`evaluate("path/to/agent.py:run")`); None for an agent of no file of the user's."""
    if recipe.agent_ref is not None and recipe.base_dir is not None:
        return recipe.base_dir.resolve()
    module = sys.modules.get(getattr(recipe.agent, "__module__", "") or "")
    file = getattr(module, "__file__", None)
    if module is None or file is None or not module.__name__.startswith("agenteval_user_"):
        return None
    return Path(file).resolve().parent


def _shipped(recipe: TrialRecipe) -> Shipment:
    """The recipe as workers receive it: cloudpickled, the user's own modules (an agent file
    loaded as `agenteval_user_<digest>_<stem>`, the module defining the agent) by value, since
    a worker cannot import them by name; but the files in the agent's folder, which ships, by
    reference: each actor imports them under the same names first (`TrialActor`), so what they
    hold at module level (an SDK client, its locks) is made there, not pickled. A
    `ConfigError` saying what cannot ship."""
    if recipe.environment is not None and recipe.environment.replay is not None:
        raise ConfigError(
            "replaying a stored run (--replay-tools) works with the local executor only: the stored "
            "run is read from the driver's store, which the Ray workers do not have",
            hint="run with --executor local, or leave --replay-tools out",
        )
    if recipe.users is not None and recipe.users.owned:
        # Not shipped (opened by the driver, with its client and rate limits): the pool
        # refuses a case that needs it (`Pool.attempt`), not a run whose cases do not.
        recipe = replace(recipe, users=replace(recipe.users, simulator=None, owned=False))
    files = _files_shipped(recipe)
    by_value = [m for m in _users_modules(recipe) if m.__name__ not in files]
    with _by_value(by_value) as pickler:
        try:
            payload: bytes = pickler.dumps(recipe)
        except Exception as exc:
            raise ConfigError(
                f"the agent, its tool mocks or its users cannot be sent to Ray workers: "
                f"{type(exc).__name__}: {exc}",
                hint="load the agent from a reference (agent: my_agent.py:run), or run with "
                "--executor local",
            ) from exc
    # Only the files the recipe names (a scorer's file, say, is the driver's alone).
    named = [(name, *paths) for name, paths in files.items() if name.encode() in payload]
    return Shipment(payload, tuple(named))


def _files_shipped(recipe: TrialRecipe) -> dict[str, tuple[str, str]]:
    """The user's modules loaded from files in the agent's folder when it ships (`_runtime_env`),
    by module name: each file's path here and in that folder."""
    folder = _agent_folder(recipe)
    if folder is None:
        return {}
    files = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if name.startswith("agenteval_user_") and file is not None:
            path = Path(file).resolve()
            if path.is_relative_to(folder):
                files[name] = (str(path), str(path.relative_to(folder)))
    return files


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
