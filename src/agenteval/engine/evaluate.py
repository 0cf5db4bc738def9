"""`evaluate`: run an agent over cases, score every trial, store it all, return the `Run`.

Also `rescore` (score a stored run again, without the agent) and `judge` (add the LLM judge's
rubric scores to a stored run).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from agenteval.agents.calling import Agent
from agenteval.agents.recorder import watch_unrecorded_calls
from agenteval.agents.tools import ToolSpec, known_tools, registered_tools
from agenteval.case import EvalCase
from agenteval.catalog import SCORER_REFS, resolve_run_scorers, scorer_reference
from agenteval.datasets import load_cases
from agenteval.engine.ownership import claim_run, current_owner
from agenteval.engine.rescoring import score_stored
from agenteval.engine.scheduler import DEFAULT_CONCURRENCY, EngineSettings, execute
from agenteval.errors import ConfigError
from agenteval.judge.rubrics import NO_JUDGE, RUBRICS, JudgeRubric
from agenteval.loading import load_object
from agenteval.pricing import PriceTable
from agenteval.records import PYTHON_TARGET, RunInfo, RunStatus, TrialResult
from agenteval.report.statistics import check_passing
from agenteval.report.summary import SummaryBuilder
from agenteval.retry import RetryPolicy
from agenteval.run import Run
from agenteval.scorers.base import scorer_name, unrenamed
from agenteval.scorers.context import ScoringContext
from agenteval.store import DEFAULT_STORE_PATH, RunStore
from agenteval.trace import Trial, utc_now

if TYPE_CHECKING:
    from agenteval.judge.choice import JudgeChoice
    from agenteval.judge.judge import Judge, JudgeConfig

__all__ = ["evaluate", "evaluate_async", "judge_run", "judge_run_async", "rescore", "rescore_async"]

logger = logging.getLogger("agenteval")

T = TypeVar("T")
Warn = Callable[[str], None]


def _run_sync(coro: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()
    raise RuntimeError("called inside a running event loop; use the `*_async` form with await")


def _settings(
    trials: int,
    concurrency: int,
    timeout: float | None,
    retries: int,
    infrastructure: tuple[type[BaseException], ...] = (),
) -> EngineSettings:
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
        infrastructure=infrastructure,
    )


def _choose_judge(
    judge: Judge | JudgeConfig | str | None,
    stored: Mapping[str, Any] | None,
    *,
    use_cache: bool,
    prices: PriceTable | None,
) -> JudgeChoice:
    from agenteval.judge.choice import choose_judge, config_from_record

    if judge is None and stored is not None:
        judge = config_from_record(stored)
    return choose_judge(judge, use_cache=use_cache, prices=prices)


def _warn_without_judge(scorers: Sequence[Any], choice: JudgeChoice, warn: Warn) -> None:
    """One warning up front when judge scorers will give no score."""
    rubrics = [s.name for s in scorers if isinstance(unrenamed(s), JudgeRubric)]
    if not rubrics:
        return
    if choice.problem is not None:
        warn(f"{choice.problem}; {', '.join(rubrics)} will give no score")
    elif choice.judge is None:
        warn(f"{NO_JUDGE}; {', '.join(rubrics)} will give no score")


def _rubric_refs(rubrics: Sequence[str] | None, choice: JudgeChoice) -> list[str]:
    if rubrics is None:
        return list(RUBRICS) if choice.config is not None else []
    return list(rubrics)


def _given_cases(cases: Iterable[EvalCase] | str | Path) -> Iterable[EvalCase]:
    """The cases to run: a list as given or read from a case file, or a stream (an iterator
    or generator), which is read once, as it comes."""
    found: Iterable[EvalCase]
    if isinstance(cases, str | Path):
        found = load_cases(cases)
    elif isinstance(cases, Sequence):
        found = cast(Sequence[EvalCase], cases)
    else:
        stream = iter(cases)
        first = next(stream, None)
        found = [] if first is None else itertools.chain([first], stream)
    if isinstance(found, Sequence) and not found:
        raise ConfigError("no cases to run", field="cases", hint="give at least one case")
    return found


def _check_unique(cases: Sequence[EvalCase]) -> None:
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise ConfigError(
                f"two cases have the id {case.id!r}",
                field="cases",
                hint="give every case a unique `id`",
            )
        seen.add(case.id)


async def evaluate_async(
    agent: Agent | str | None,
    cases: Iterable[EvalCase] | str | Path,
    scorers: Sequence[Any] = (),
    *,
    trials: int = 1,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float | None = None,
    retries: int = 2,
    builtins: bool = True,
    store: str | Path = DEFAULT_STORE_PATH,
    tools: Mapping[str, ToolSpec] | None = None,
    judge: Judge | JudgeConfig | str | None = None,
    rubrics: Sequence[str] | None = None,
    use_cache: bool = True,
    prices: PriceTable | None = None,
    passing: Sequence[str] | None = None,
    resume: str | None = None,
    target: str | None = None,
    agent_ref: str | None = None,
    retry_policy: RetryPolicy | None = None,
    base_dir: Path | None = None,
    on_start: Callable[[RunInfo, int, int], None] | None = None,
    on_result: Callable[[TrialResult], None] | None = None,
    on_warning: Warn = logger.warning,
    recorded: Mapping[tuple[str, int], Trial] | None = None,
    infrastructure_errors: Sequence[type[BaseException] | str] = (),
) -> Run:
    """The async form of `evaluate`; the keyword arguments past `prices` serve the CLI.

    `recorded` (with `agent=None`): trials recorded elsewhere, by (case id, trial index), to
    score as they are (`agenteval score`).
    """
    if recorded is not None and agent is not None:
        raise ValueError("recorded trials are scored with no agent: pass agent=None")
    run_agent: Agent | None = (
        load_object(agent, base_dir=base_dir) if isinstance(agent, str) else agent
    )
    settings = _settings(
        trials, concurrency, timeout, retries, _declared(infrastructure_errors, base_dir)
    )
    if retry_policy is not None:
        settings = replace(settings, retry=retry_policy)
    store_path = Path(store)
    with RunStore(store_path) as run_store:
        # A damaged store is refused before anything starts (the first write would refuse it).
        run_store.check_undamaged()
        if resume is not None:
            # One transaction: of several processes resuming the run at once, one claims it.
            info = claim_run(run_store, run_store.resolve_run_id(resume))
            case_source: Iterable[EvalCase] | None = None  # read back from the store
            # A resumed run keeps its trials and time limit; concurrency may change.
            settings = replace(settings, trials=info.trials, timeout_s=info.timeout_s)
            scorer_refs: list[Any] = [*info.scorers, *scorers]
            builtins = info.builtins
            stored_judge = info.settings.get("judge")
            passing = info.settings.get("passing")
        else:
            given = _given_cases(cases)
            case_source = given if isinstance(given, Sequence) else None
            scorer_refs = list(scorers)
            stored_judge = None
        new_run: tuple[RunInfo, Sequence[EvalCase]] | None = None
        choice = _choose_judge(judge, stored_judge, use_cache=use_cache, prices=prices)
        try:
            if resume is None:
                scorer_refs += _rubric_refs(rubrics, choice)
            # The agent's tools, live: a tool imported mid-run is known by the time it is scored.
            run_tools: Mapping[str, ToolSpec] = (
                tools if tools is not None else registered_tools() if agent is not None else {}
            )
            if resume is not None and info.settings.get("base_dir"):
                base_dir = Path(info.settings["base_dir"])
            context = ScoringContext(
                tools=run_tools,
                judge=choice.judge,
                judge_problem=choice.problem,
                base_dir=base_dir,
            )
            resolution = resolve_run_scorers(
                scorer_refs,
                builtins=builtins,
                context=context,
                stored=info.settings.get(SCORER_REFS) if resume is not None else None,
            )
            resolved = resolution.scorers
            if resume is None:  # a resumed run keeps the `passing` it was checked with
                check_passing(passing, [scorer_name(s) for s in resolved], field="passing")
            for note in resolution.renamed:
                on_warning(note)
            _warn_without_judge(resolved, choice, on_warning)
            builder = SummaryBuilder(
                (scorer_name(s) for s in resolved),
                prices,
                passing,
                trials_per_case=settings.trials,
            )
            if resume is not None:
                done = run_store.finished_keys(info.run_id)
                for result in run_store.iter_results(info.run_id):
                    builder.add(result)
            else:
                done = set()
                judge_record = choice.record()
                info = RunInfo(
                    target=target if target is not None else _python_target(agent),
                    agent=agent_ref,
                    dataset=str(cases) if isinstance(cases, str | Path) else None,
                    trials=settings.trials,
                    concurrency=settings.concurrency,
                    timeout_s=settings.timeout_s,
                    max_retries=settings.retry.max_retries,
                    scorers=[r for r in map(scorer_reference, scorer_refs) if r is not None],
                    builtins=builtins,
                    tools=dict(run_tools) if agent is None else known_tools(),
                    settings={
                        "owner": current_owner(),
                        SCORER_REFS: resolution.references,
                        **({"expected_trials": len(recorded)} if recorded is not None else {}),
                        **({"passing": list(passing)} if passing is not None else {}),
                        **({"judge": judge_record} if judge_record else {}),
                        **({"base_dir": str(base_dir.resolve())} if base_dir else {}),
                        **(
                            {
                                "infrastructure_errors": list(
                                    map(_class_ref, settings.infrastructure)
                                )
                            }
                            if settings.infrastructure
                            else {}
                        ),
                    },
                )
                if isinstance(given, Sequence):
                    _check_unique(given)
                    case_count = len(given)
                    new_run = (info, given)
                else:
                    # A stream is read once, into the store, and read back from there.
                    case_count = run_store.create_run(info, given)
            if case_source is None:
                case_count = run_store.count_cases(info.run_id)
                case_source = run_store.iter_cases(info.run_id)
            if on_start is not None:
                on_start(info, case_count * settings.trials, len(done))

            def collect(result: TrialResult) -> None:
                builder.add(result)
                if on_result is not None:
                    on_result(result)

            with watch_unrecorded_calls() as unrecorded:
                await execute(
                    run_agent,
                    case_source,
                    resolved,
                    settings,
                    run_store,
                    info.run_id,
                    case_count=case_count,
                    done=done,
                    # Stored by the writer while the first trials run; no trial is stored
                    # before its run and cases are.
                    first_write=(
                        None
                        if new_run is None
                        else functools.partial(run_store.create_run, *new_run)
                    ),
                    on_result=collect,
                    recorded=recorded,
                )
            if unrecorded():
                on_warning(
                    f"{unrecorded()} tool calls ran outside any trial and were not recorded: "
                    "the agent ran them in threads it started itself, which do not carry the "
                    "trial's context; use asyncio.to_thread, or submit "
                    "contextvars.copy_context().run to the executor"
                )
        finally:
            await choice.aclose()
        # Finished only when the store holds every (case, trial): whatever ended a job without
        # a stored result, the run stays resumable and says what it lacks.
        missing = run_store.missing_trials(info.run_id)
        complete = missing.count == 0
        info = info.model_copy(
            update={
                "status": RunStatus.FINISHED if complete else RunStatus.RUNNING,
                "finished_at": utc_now() if complete else None,
                "tools": dict(run_tools) if agent is None else known_tools(),
            }
        )
        run_store.update_info(info)
        if not complete:
            on_warning(f"run {info.run_id} did not finish: {missing.describe()}")
    return Run(info, builder.build(), store_path, missing)


def evaluate(
    agent: Agent | str | None,
    cases: Iterable[EvalCase] | str | Path,
    scorers: Sequence[Any] = (),
    *,
    trials: int = 1,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float | None = None,
    retries: int = 2,
    builtins: bool = True,
    store: str | Path = DEFAULT_STORE_PATH,
    tools: Mapping[str, ToolSpec] | None = None,
    judge: Judge | JudgeConfig | str | None = None,
    rubrics: Sequence[str] | None = None,
    use_cache: bool = True,
    prices: PriceTable | None = None,
    passing: Sequence[str] | None = None,
    infrastructure_errors: Sequence[type[BaseException] | str] = (),
    resume: str | None = None,
) -> Run:
    """Run `agent` over `cases`, `trials` times each, score every trial, and store the run.

    `agent` is any callable, sync or async, taking the case input (or a `module:function` /
    `path/to/file.py:function` reference to one); `None` scores each case's
    recorded `agent_trace` instead. `cases` is a list of `EvalCase`, a case file's path, or
    any iterable of `EvalCase` (a generator, say), which is streamed into the store and never
    held in memory whole, however many cases it yields.
    The built-in scorers run wherever they apply; `scorers` adds to them (names, scorer
    objects, functions of `(case, trial)`), and `builtins=False` leaves only `scorers`.
    Infrastructure failures (rate limit, connection, provider 5xx, timeout) are retried up to
    `retries` times. They are recognised by type only: agenteval's timeout, the provider SDKs'
    and HTTP clients' exceptions, Python's `ConnectionError` and `TimeoutError`,
    `agenteval.InfrastructureError`, and the classes in `infrastructure_errors` (classes or
    `module:Class` references); anything else the agent raises is its own error, scored as a
    failure. Everything is written to the SQLite `store` as each trial finishes.

    `judge` (`"openai:gpt-4o-mini"`, a `JudgeConfig` or a `Judge`; else `AGENTEVAL_JUDGE`) adds
    the LLM judge rubrics, all four unless `rubrics` names some.

    `passing` names the scorers that decide whether a trial passes (for the summary's passing
    trials, pass@k and pass^k, and flaky cases); by default every scorer that applied. It is
    kept with the run.

    `resume` (a run id, or a unique prefix of one) goes on with a stored run that did not
    finish: only its (case, trial) pairs not yet stored run, with its cases, trials and time
    limit as stored. A pytest session's run is refused (the test runs again, as a new run).
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
            judge=judge,
            rubrics=rubrics,
            use_cache=use_cache,
            prices=prices,
            passing=passing,
            infrastructure_errors=infrastructure_errors,
            resume=resume,
        )
    )


def _python_target(agent: Agent | str | None) -> str:
    """What `agenteval runs` lists as the target of a run made from Python: `python:` and the
    agent's name (`python:answer`; a reference as it was given; `python:agent_trace` when the
    cases' recorded traces are scored with no agent)."""
    if agent is None:
        return f"{PYTHON_TARGET}agent_trace"
    if isinstance(agent, str):
        return f"{PYTHON_TARGET}{agent}"
    inner: Any = agent
    while isinstance(inner, functools.partial):
        inner = inner.func
    name = getattr(inner, "__qualname__", None) or type(inner).__qualname__
    return f"{PYTHON_TARGET}{name}"


def _declared(
    refs: Sequence[type[BaseException] | str], base_dir: Path | None
) -> tuple[type[BaseException], ...]:
    if not refs:
        return ()
    # Only when asked: config.py (and the agents it knows) stays out of `import agenteval`.
    from agenteval.config import exception_classes

    return exception_classes(refs, base_dir=base_dir)


def _class_ref(cls: type[BaseException]) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


async def rescore_async(
    run_id: str,
    scorers: Sequence[Any] = (),
    *,
    builtins: bool | None = None,
    store: str | Path = DEFAULT_STORE_PATH,
    judge: Judge | JudgeConfig | str | None = None,
    use_cache: bool = True,
    prices: PriceTable | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_result: Callable[[TrialResult], None] | None = None,
    on_warning: Warn = logger.warning,
) -> Run:
    """Score a stored run's trials again, without the agent; each new score replaces the one of
    the same name, and scores no scorer gives again are kept.

    The run's own scorers run again (the built-ins, stored references and the judge rubrics,
    with the run's judge unless `judge` names another); `scorers` adds to them. `builtins`
    defaults to what the run used. The judge cache makes judging the same trials again free.
    """
    store_path = Path(store)
    with RunStore(store_path, create=False) as run_store:
        info = run_store.get_info(run_store.resolve_run_id(run_id))
        use_builtins = info.builtins if builtins is None else builtins
        choice = _choose_judge(
            judge, info.settings.get("judge"), use_cache=use_cache, prices=prices
        )
        try:
            stored_dir = info.settings.get("base_dir")
            context = ScoringContext(
                tools=info.tools,
                judge=choice.judge,
                judge_problem=choice.problem,
                base_dir=Path(stored_dir) if stored_dir else None,
            )
            resolution = resolve_run_scorers(
                [*info.scorers, *scorers],
                builtins=use_builtins,
                context=context,
                stored=info.settings.get(SCORER_REFS),
            )
            resolved = resolution.scorers
            for note in resolution.renamed:
                on_warning(note)
            _warn_without_judge(resolved, choice, on_warning)
            # Built as the trials are scored: the stored run is read once.
            builder = SummaryBuilder(
                map(scorer_name, resolved),
                prices,
                info.settings.get("passing"),
                trials_per_case=info.trials,
            )
            await score_stored(
                run_store,
                info.run_id,
                resolved,
                concurrency=concurrency,
                # Scores whose scorer cannot be loaded again (a lambda, a function defined in
                # a script) are kept as they were, never dropped.
                merge=True,
                on_result=on_result,
                summary=builder,
            )
        finally:
            await choice.aclose()
        added = [r for r in map(scorer_reference, scorers) if r is not None]
        settings = dict(info.settings)
        settings[SCORER_REFS] = {**settings.get(SCORER_REFS, {}), **resolution.references}
        if choice.record() is not None:
            settings["judge"] = choice.record()
        info = info.model_copy(
            update={
                "scorers": [*info.scorers, *(r for r in added if r not in info.scorers)],
                "builtins": use_builtins,
                "settings": settings,
            }
        )
        run_store.update_info(info)
        # A run scored again is as complete as its stored trials: one with holes says so.
        missing = run_store.missing_trials(info.run_id)
    return Run(info, builder.build(), store_path, missing)


def rescore(
    run_id: str,
    scorers: Sequence[Any] = (),
    *,
    builtins: bool | None = None,
    store: str | Path = DEFAULT_STORE_PATH,
    judge: Judge | JudgeConfig | str | None = None,
    use_cache: bool = True,
    prices: PriceTable | None = None,
) -> Run:
    """Score a stored run again without running the agent (see `rescore_async`)."""
    return _run_sync(
        rescore_async(
            run_id,
            scorers,
            builtins=builtins,
            store=store,
            judge=judge,
            use_cache=use_cache,
            prices=prices,
        )
    )


async def judge_run_async(
    run_id: str,
    judge: Judge | JudgeConfig | str | None,
    *,
    rubrics: Sequence[str | Mapping[str, Any]] = RUBRICS,
    store: str | Path = DEFAULT_STORE_PATH,
    use_cache: bool = True,
    prices: PriceTable | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_result: Callable[[TrialResult], None] | None = None,
    on_warning: Warn = logger.warning,
) -> Run:
    """Score a stored run with the judge's rubrics, without the agent; the rubric scores are
    added to the run's scores (replacing earlier ones of the same name), each marked with the
    judge that gave it."""
    store_path = Path(store)
    with RunStore(store_path, create=False) as run_store:
        info = run_store.get_info(run_store.resolve_run_id(run_id))
        choice = _choose_judge(judge, None, use_cache=use_cache, prices=prices)
        if choice.config is None:
            raise ConfigError(
                "no judge given",
                field="judge",
                hint="pass --judge PROVIDER:MODEL (e.g. openai:gpt-4o-mini) or set AGENTEVAL_JUDGE",
            )
        try:
            context = ScoringContext(
                tools=info.tools, judge=choice.judge, judge_problem=choice.problem
            )
            resolution = resolve_run_scorers(
                list(rubrics),
                builtins=False,
                context=context,
                stored=info.settings.get(SCORER_REFS),
            )
            resolved = resolution.scorers
            for note in resolution.renamed:
                on_warning(note)
            if not all(isinstance(unrenamed(s), JudgeRubric) for s in resolved):
                raise ConfigError(
                    "only judge rubrics can be judged",
                    field="rubric",
                    hint="rubrics: " + ", ".join(RUBRICS),
                )
            _warn_without_judge(resolved, choice, on_warning)
            builder = SummaryBuilder(
                prices=prices, passing=info.settings.get("passing"), trials_per_case=info.trials
            )
            await score_stored(
                run_store,
                info.run_id,
                resolved,
                concurrency=concurrency,
                merge=True,
                on_result=on_result,
                summary=builder,
            )
        finally:
            await choice.aclose()
        refs = [r for r in map(scorer_reference, resolved) if r is not None]
        info = info.model_copy(
            update={
                "scorers": [*info.scorers, *(r for r in refs if r not in info.scorers)],
                "settings": {
                    **info.settings,
                    "judge": choice.record(),
                    SCORER_REFS: {
                        **info.settings.get(SCORER_REFS, {}),
                        **resolution.references,
                    },
                },
            }
        )
        run_store.update_info(info)
        # A run scored again is as complete as its stored trials: one with holes says so.
        missing = run_store.missing_trials(info.run_id)
    return Run(info, builder.build(), store_path, missing)


def judge_run(
    run_id: str,
    judge: Judge | JudgeConfig | str | None,
    *,
    rubrics: Sequence[str | Mapping[str, Any]] = RUBRICS,
    store: str | Path = DEFAULT_STORE_PATH,
    use_cache: bool = True,
    prices: PriceTable | None = None,
) -> Run:
    """Add the judge's rubric scores to a stored run (see `judge_run_async`)."""
    return _run_sync(
        judge_run_async(
            run_id, judge, rubrics=rubrics, store=store, use_cache=use_cache, prices=prices
        )
    )
