"""`evaluate`: run an agent over cases, score every trial, store it all, return the `Run`.

Also `rescore`: score a stored run again without the agent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from agenteval.agents.calling import Agent
from agenteval.agents.tools import ToolSpec, known_tools, registered_tools
from agenteval.case import EvalCase
from agenteval.datasets import load_cases
from agenteval.engine.scheduler import DEFAULT_CONCURRENCY, EngineSettings, execute, score_trial
from agenteval.engine.trials import RetryPolicy
from agenteval.errors import ConfigError
from agenteval.report.summary import SummaryBuilder
from agenteval.run import Run, RunInfo, RunStatus, TrialResult
from agenteval.scorers.base import scorer_name
from agenteval.scorers.registry import resolve_scorers, scorer_reference
from agenteval.store import DEFAULT_STORE_PATH, RunStore
from agenteval.trace import utc_now

__all__ = ["evaluate", "evaluate_async", "rescore", "rescore_async"]

T = TypeVar("T")


def _run_sync(coro: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()
    raise RuntimeError(
        "evaluate() was called inside a running event loop; use `await evaluate_async(...)`"
    )


def _settings(trials: int, concurrency: int, timeout: float | None, retries: int) -> EngineSettings:
    if trials < 1:
        raise ConfigError(f"trials must be at least 1, got {trials}", field="trials")
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}", field="concurrency")
    if timeout is not None and timeout <= 0:
        raise ConfigError(f"timeout must be positive, got {timeout}", field="timeout")
    if retries < 0:
        raise ConfigError(f"retries must be 0 or more, got {retries}", field="retries")
    return EngineSettings(
        trials=trials,
        concurrency=concurrency,
        timeout_s=timeout,
        retry=RetryPolicy(max_retries=retries),
    )


async def evaluate_async(
    agent: Agent | None,
    cases: Sequence[EvalCase] | str | Path,
    scorers: Sequence[Any] = (),
    *,
    trials: int = 1,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float | None = None,
    retries: int = 2,
    builtins: bool = True,
    store: str | Path = DEFAULT_STORE_PATH,
    tools: Mapping[str, ToolSpec] | None = None,
    resume: str | None = None,
    target: str | None = None,
    agent_ref: str | None = None,
    retry_policy: RetryPolicy | None = None,
    on_start: Callable[[RunInfo, int, int], None] | None = None,
    on_result: Callable[[TrialResult], None] | None = None,
) -> Run:
    """The async form of `evaluate`; the keyword arguments past `store` serve the CLI."""
    settings = _settings(trials, concurrency, timeout, retries)
    if retry_policy is not None:
        settings = replace(settings, retry=retry_policy)
    store_path = Path(store)
    with RunStore(store_path) as run_store:
        if resume is not None:
            info = run_store.get_info(run_store.resolve_run_id(resume))
            case_list = run_store.get_cases(info.run_id)
            # A resumed run keeps its trials and time limit; concurrency may change.
            settings = replace(settings, trials=info.trials, timeout_s=info.timeout_s)
            scorer_refs: Sequence[Any] = [*info.scorers, *scorers]
            builtins = info.builtins
        else:
            case_list = load_cases(cases) if isinstance(cases, str | Path) else list(cases)
            scorer_refs = scorers
        # Tools the agent declares, live: one imported mid-run is known by the time it is scored.
        run_tools: Mapping[str, ToolSpec] = (
            tools if tools is not None else registered_tools() if agent is not None else {}
        )
        resolved = resolve_scorers(scorer_refs, builtins=builtins, tools=run_tools)
        builder = SummaryBuilder(scorer_name(s) for s in resolved)
        if resume is not None:
            done = run_store.finished_keys(info.run_id)
            for result in run_store.iter_results(info.run_id):
                builder.add(result)
        else:
            done = set()
            info = RunInfo(
                target=target,
                agent=agent_ref,
                dataset=str(cases) if isinstance(cases, str | Path) else None,
                trials=settings.trials,
                concurrency=settings.concurrency,
                timeout_s=settings.timeout_s,
                max_retries=settings.retry.max_retries,
                scorers=[ref for ref in map(scorer_reference, scorers) if ref is not None],
                builtins=builtins,
                tools=dict(run_tools) if agent is None else known_tools(),
            )
            run_store.create_run(info, case_list)
        if on_start is not None:
            on_start(info, len(case_list) * settings.trials, len(done))

        def collect(result: TrialResult) -> None:
            builder.add(result)
            if on_result is not None:
                on_result(result)

        await execute(
            agent,
            case_list,
            resolved,
            settings,
            run_store,
            info.run_id,
            done=done,
            on_result=collect,
        )
        info = info.model_copy(
            update={
                "status": RunStatus.FINISHED,
                "finished_at": utc_now(),
                "tools": dict(run_tools) if agent is None else known_tools(),
            }
        )
        run_store.update_info(info)
    return Run(info, builder.build(), store_path)


def evaluate(
    agent: Agent | None,
    cases: Sequence[EvalCase] | str | Path,
    scorers: Sequence[Any] = (),
    *,
    trials: int = 1,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float | None = None,
    retries: int = 2,
    builtins: bool = True,
    store: str | Path = DEFAULT_STORE_PATH,
    tools: Mapping[str, ToolSpec] | None = None,
) -> Run:
    """Run `agent` over `cases`, `trials` times each, score every trial, and store the run.

    `agent` is any callable, sync or async, taking the case input; `None` scores each case's
    recorded `agent_trace` instead. `cases` is a list of `EvalCase` or a case file's path.
    The built-in scorers run wherever they apply; `scorers` adds to them (built-in names,
    scorer objects, functions of `(case, trial)`), and `builtins=False` leaves only `scorers`.
    Infrastructure failures (rate limit, connection, provider 5xx, timeout) are retried up to
    `retries` times. Everything is written to the SQLite `store` as each trial finishes.
    """
    return _run_sync(
        evaluate_async(
            agent,
            cases,
            scorers,
            trials=trials,
            concurrency=concurrency,
            timeout=timeout,
            retries=retries,
            builtins=builtins,
            store=store,
            tools=tools,
        )
    )


async def rescore_async(
    run_id: str,
    scorers: Sequence[Any] = (),
    *,
    builtins: bool | None = None,
    store: str | Path = DEFAULT_STORE_PATH,
    on_result: Callable[[TrialResult], None] | None = None,
) -> Run:
    """Score a stored run's trials again, without the agent; the new scores replace the old.

    With no `scorers`, the run's own scorers run again (the built-ins, and any stored
    references); `scorers` adds to them. `builtins` defaults to what the run used.
    """
    store_path = Path(store)
    with RunStore(store_path) as run_store:
        info = run_store.get_info(run_store.resolve_run_id(run_id))
        use_builtins = info.builtins if builtins is None else builtins
        resolved = resolve_scorers(
            [*info.scorers, *scorers], builtins=use_builtins, tools=info.tools
        )
        builder = SummaryBuilder(scorer_name(s) for s in resolved)
        batch: list[TrialResult] = []
        for result in run_store.iter_results(info.run_id):
            scores = await score_trial(resolved, result.case, result.trial)
            rescored = TrialResult(case=result.case, trial=result.trial, scores=scores)
            builder.add(rescored)
            if on_result is not None:
                on_result(rescored)
            batch.append(rescored)
            if len(batch) >= 500:
                run_store.replace_scores_many(
                    info.run_id, [(r.case.id, r.trial.trial, r.scores) for r in batch]
                )
                batch = []
        if batch:
            run_store.replace_scores_many(
                info.run_id, [(r.case.id, r.trial.trial, r.scores) for r in batch]
            )
        new_refs = [ref for ref in map(scorer_reference, scorers) if ref is not None]
        info = info.model_copy(
            update={
                "scorers": [*info.scorers, *(r for r in new_refs if r not in info.scorers)],
                "builtins": use_builtins,
            }
        )
        run_store.update_info(info)
    return Run(info, builder.build(), store_path)


def rescore(
    run_id: str,
    scorers: Sequence[Any] = (),
    *,
    builtins: bool | None = None,
    store: str | Path = DEFAULT_STORE_PATH,
) -> Run:
    """Score a stored run again without running the agent (see `rescore_async`)."""
    return _run_sync(rescore_async(run_id, scorers, builtins=builtins, store=store))
