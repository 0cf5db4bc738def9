"""Replaying a stored run's tool results (`--replay-tools RUN_ID`, `evaluate(replay_tools=)`).

A run that replays another answers every tool call of a case with what the same case's tools
returned in the stored run, so an agent change is evaluated against yesterday's world with no
live system touched. The engine's part is here: which run is replayed (`replayed_run`: an id,
a unique prefix, or `latest`, the newest finished run of the same target; an unknown or
unfinished run is one clear `ConfigError`), the `EnvironmentPlan.replay` factory each trial's
environment asks for its `ReplayBook` (`with_replay`), what the run records of it
(`RunInfo.settings["replay"]`: run id, match, fallthrough) and how a resume reads that back
(`replay_options`). Matching a call to a recorded one is the book's (`agents/environment.py`).

Which stored trial a trial replays: the one of the same case and index when the stored run
has it, else the case's first stored trial (a run of 3 trials replaying a run of 1 replays
its one trial three times). A case the stored run does not have gets an empty book: every
call misses (or runs for real with fallthrough). Each attempt reads its trial from the store
afresh (one row, in a thread: the event loop is never blocked, and the run is never held in
memory whole), so a retried attempt starts its book from the beginning.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from agenteval.agents.environment import EnvironmentPlan, ReplayBook
from agenteval.engine.options import RunOptions
from agenteval.engine.scheduler import EngineSettings
from agenteval.errors import ConfigError, StoreError
from agenteval.records import RunStatus
from agenteval.store import RunStore

__all__ = ["REPLAY", "ReplayBooks", "replay_options", "replayed_run", "with_replay"]

REPLAY = "replay"
"""The key of `RunInfo.settings` that says which run a run replayed, and how."""

_RUNS_HINT = "`agenteval runs` lists the stored runs"


def replayed_run(store: RunStore, given: str, target: str | None) -> str:
    """The full id of the finished run `given` names (an id, a unique prefix, or `latest`:
    the newest finished run on `target`); a `ConfigError` naming it and the fix otherwise."""
    wanted = given.strip()
    if wanted == "latest":
        found = store.latest_finished(target) if target is not None else None
        if found is None:
            raise ConfigError(
                f"no finished run of {target} to replay (--replay-tools latest)",
                field="replay_tools",
                hint=f"run it once without --replay-tools to record one; {_RUNS_HINT}",
            )
        return found
    try:
        run_id = store.resolve_run_id(wanted)
    except StoreError as exc:
        raise ConfigError(
            f"cannot replay run {given!r}: {exc.message}",
            field="replay_tools",
            hint=f"give --replay-tools a finished run's id or a unique prefix of one; {_RUNS_HINT}",
        ) from None
    info = store.get_info(run_id)
    missing = store.missing_trials(run_id, examples=0)
    if missing.count or info.status is not RunStatus.FINISHED:
        raise ConfigError(
            f"cannot replay run {run_id}: it did not finish ({missing.stored} of "
            f"{missing.expected} trials stored), so its tool results are not a whole run's",
            field="replay_tools",
            hint=f"finish it first (`agenteval run TARGET --resume {run_id}`), or replay a "
            f"finished run; {_RUNS_HINT}",
        )
    return run_id


def with_replay(
    store: RunStore, options: RunOptions, settings: EngineSettings, *, target: str | None
) -> tuple[EngineSettings, dict[str, Any]]:
    """The engine settings with the replay `options` asks for (none: as given), and what the
    run records of it (`{"replay": {...}}`, to merge into its settings)."""
    if options.replay_tools is None:
        return settings, {}
    run_id = replayed_run(store, options.replay_tools, target)
    any_order = options.replay_match == "any-order"
    plan = replace(
        settings.environment or EnvironmentPlan(),
        replay=_books(store, run_id, any_order=any_order),
        replay_fallthrough=options.replay_fallthrough,
    )
    recorded = {
        "run_id": run_id,
        "match": options.replay_match,
        "fallthrough": options.replay_fallthrough,
    }
    return replace(settings, environment=plan), {REPLAY: recorded}


def replay_options(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The replay a stored run made (its `settings`), as `RunOptions` fields: a resumed run
    keeps replaying the same run, the same way (and one that replayed none, none)."""
    stored = settings.get(REPLAY)
    if not isinstance(stored, Mapping):
        return {"replay_tools": None, "replay_match": "in-order", "replay_fallthrough": False}
    return {
        "replay_tools": str(stored["run_id"]),
        "replay_match": str(stored.get("match", "in-order")),
        "replay_fallthrough": bool(stored.get("fallthrough", False)),
    }


def _books(store: RunStore, run_id: str, *, any_order: bool) -> ReplayBooks:
    """The factory of each attempt's book: its stored trial read in a thread."""
    return ReplayBooks(store, run_id, any_order)


class ReplayBooks:
    """Each attempt's `ReplayBook`, read from `store`. Sent to a worker process (the
    `process` executor pickles the run's environment) as the store's path, the run and the
    order: the worker opens the file itself, as an open SQLite connection cannot be sent."""

    def __init__(self, store: RunStore, run_id: str, any_order: bool) -> None:
        self._store = store
        self._run_id = run_id
        self._any_order = any_order

    def __reduce__(self) -> tuple[Any, tuple[str, str, bool]]:
        return (_reopened, (str(self._store.path), self._run_id, self._any_order))

    async def __call__(self, case_id: str, index: int) -> ReplayBook:
        store, run_id, any_order = self._store, self._run_id, self._any_order
        stored = await asyncio.to_thread(store.replay_trial, run_id, case_id, index)
        if stored is None:
            return ReplayBook(
                (),
                run_id=run_id,
                any_order=any_order,
                absent=f"the replayed run {run_id} has no case {case_id!r}, so every call "
                "of it misses (--replay-fallthrough runs them for real)",
            )
        return ReplayBook(
            stored.tool_calls,
            run_id=run_id,
            any_order=any_order,
            trial=stored.trial,
            stored_form=store.stored_arguments,
        )


def _reopened(path: str, run_id: str, any_order: bool) -> ReplayBooks:
    """`ReplayBooks` in the process that unpickled it, on the store file opened there (kept
    open for the process's life: a worker reads it for each of its trials)."""
    return ReplayBooks(RunStore(path, create=False), run_id, any_order)
