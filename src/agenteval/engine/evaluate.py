"""`evaluate`: run an agent over cases, score every trial, store it all, return the `Run`.

Also `rescore` (score a stored run again, without the agent) and `judge_run` (add the LLM
judge's rubric scores to a stored run).

Every door here, like every face above (the CLI, `EvalSuite`, `AgentEvaluator`,
`score_traces`, the pytest plugin), builds the run's settings once (`RunOptions`), plans the
run (`engine.planning`: new, recorded, resumed, rescored or judged) and runs the plan
(`execute`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.agents.calling import Agent
from agenteval.agents.recorder import watch_unrecorded_calls
from agenteval.agents.tools import known_tools
from agenteval.case import EvalCase
from agenteval.engine.agent import load_agent, python_target
from agenteval.engine.gc_thresholds import raised_gc_thresholds
from agenteval.engine.options import DEFAULT_CONCURRENCY, DEFAULT_RETRIES, RunOptions
from agenteval.engine.planning import (
    RunPlan,
    Warn,
    open_store,
    plan_new,
    plan_resume,
)
from agenteval.engine.rescoring import plan_judging, plan_rescore, score_stored
from agenteval.engine.scheduler import execute as run_jobs
from agenteval.engine.sync import sync_form
from agenteval.judge.rubrics import RUBRICS
from agenteval.otel.live import DEFAULT_REMOTE_WAIT_S
from agenteval.pricing import PriceTable
from agenteval.records import RunInfo, RunStatus, TrialResult
from agenteval.retry import RetryPolicy
from agenteval.run import Run
from agenteval.scorers.base import ScorerLike
from agenteval.store import DEFAULT_STORE_PATH, RunStore
from agenteval.trace import ToolSpec, Trial, utc_now

if TYPE_CHECKING:
    from agenteval.judge.judge import Judge, JudgeConfig

__all__ = [
    "Planner",
    "evaluate",
    "evaluate_async",
    "execute",
    "judge_run",
    "judge_run_async",
    "rescore",
    "rescore_async",
    "run_planned",
]

logger = logging.getLogger("agenteval")


async def execute(
    store: RunStore,
    plan: RunPlan,
    *,
    on_start: Callable[[RunInfo, int, int], None] | None = None,
    on_result: Callable[[TrialResult], None] | None = None,
    on_warning: Warn = logger.warning,
) -> Run:
    """Run any plan on the open `store` it was made with, close its judge, and return the run.

    A new, recorded or resumed run, or one case of a shared run (`plan_case`), runs its jobs
    not done (`on_start` gets the run, its job
    count and how many are done; `on_result` each result as it is stored) and ends finished
    only when the store holds every (case, trial): whatever ended a job without a stored
    result, the run stays resumable and says what it lacks (`on_warning`). A rescore or a
    judging scores the stored trials and stores the run's updated settings.
    """
    rescoring = plan.kind in ("rescore", "judge")
    try:
        if rescoring:
            await score_stored(
                store,
                plan.info.run_id,
                plan.scorers,
                concurrency=plan.settings.concurrency,
                # Scores whose scorer cannot be loaded again (a lambda, a function defined in
                # a script) are kept as they were, never dropped.
                merge=True,
                on_result=on_result,
                summary=plan.summary,
            )
        else:
            await _run_jobs(store, plan, on_start, on_result, on_warning)
    finally:
        try:
            await plan.judge.aclose()
        finally:
            if plan.settings.users is not None:  # the simulator, when the run opened it
                await plan.settings.users.aclose()
    if plan.kind == "case":
        return _finish_shared(store, plan)
    # A run is as complete as its stored trials: one with holes says so.
    missing = store.missing_trials(plan.info.run_id)
    info = plan.info
    if not rescoring:
        complete = missing.count == 0
        info = info.model_copy(
            update={
                "status": RunStatus.FINISHED if complete else RunStatus.RUNNING,
                "finished_at": utc_now() if complete else None,
                "tools": dict(plan.tools) if plan.tools is not None else known_tools(),
            }
        )
    store.update_info(info)
    if not rescoring and missing.count:
        on_warning(f"run {info.run_id} did not finish: {missing.describe()}")
    return Run(info, plan.summary.build(), plan.store, missing)


Planner = Callable[[RunStore], Awaitable[RunPlan]]
"""Makes a plan in the open store it is given (`plan_new` and the others, their arguments
but the store given)."""


async def run_planned(
    options: RunOptions,
    planner: Planner,
    *,
    stored: bool = False,
    on_start: Callable[[RunInfo, int, int], None] | None = None,
    on_result: Callable[[TrialResult], None] | None = None,
    on_warning: Warn = logger.warning,
    on_notice: Warn = logger.info,
) -> Run:
    """The two steps, in the options' store: plan (`planner`), then `execute`.

    The store is made when it does not exist and refused when damaged (`open_store`); with
    `stored` (a rescore, a judging), it must exist already. With `options.otlp_endpoint`, each
    trial's scores are also sent there as they are stored (`otel.results`), and what is queued
    is flushed when the run ends, however it ends. With `options.otlp_receiver`, an OTLP
    receiver listens for the whole of it (`on_notice` says where), and is stopped however it
    ends. The collector's thresholds are raised while it runs (`gc_thresholds`)."""
    receiver: AbstractContextManager[object] = contextlib.nullcontext()
    if options.otlp_receiver is not None:  # an HTTP server: loaded only when a run asks
        from agenteval.otel.receiver import receiving

        receiver = receiving(options.otlp_receiver, announce=on_notice, warn=on_warning)
    export = None
    if options.otlp_endpoint is not None:  # the OpenTelemetry SDK is loaded only then
        from agenteval.otel.results import ScoreExport

        export = ScoreExport.open(options.otlp_endpoint, on_warning)
    try:
        with (
            raised_gc_thresholds(),
            receiver,
            RunStore(options.store, create=False) if stored else open_store(options) as store,
        ):
            plan = await planner(store)
            if export is not None:
                again = plan.kind in ("rescore", "judge")
                on_result = export.sending(plan.info.run_id, on_result, again=again)
            return await execute(
                store, plan, on_start=on_start, on_result=on_result, on_warning=on_warning
            )
    finally:
        if export is not None:
            export.close()


def _finish_shared(store: RunStore, plan: RunPlan) -> Run:
    """A run several processes write (a pytest session's) is marked finished once its every
    (case, trial) is stored, by the one that sees it so; else left as it is, for the others
    (and the end of the session) to finish."""
    missing = store.missing_trials(plan.info.run_id, examples=0)
    info = store.get_info(plan.info.run_id)
    if not missing.count and info.status is not RunStatus.FINISHED:
        info = info.model_copy(
            update={
                "status": RunStatus.FINISHED,
                "finished_at": utc_now(),
                "tools": {**info.tools, **known_tools()},
            }
        )
        store.update_info(info)
    return Run(info, plan.summary.build(), plan.store, missing)


async def _run_jobs(
    store: RunStore,
    plan: RunPlan,
    on_start: Callable[[RunInfo, int, int], None] | None,
    on_result: Callable[[TrialResult], None] | None,
    on_warning: Warn,
) -> None:
    if on_start is not None:
        on_start(plan.info, plan.case_count * plan.settings.trials, len(plan.done))

    unseen = _UnseenCalls()

    def collect(result: TrialResult) -> None:
        plan.summary.add(result)
        unseen.add(result)
        if on_result is not None:
            on_result(result)

    with watch_unrecorded_calls() as unrecorded:
        await run_jobs(
            plan.agent,
            plan.cases if plan.cases is not None else store.iter_cases(plan.info.run_id),
            plan.scorers,
            plan.settings,
            store,
            plan.info.run_id,
            case_count=plan.case_count,
            done=plan.done,
            first_write=plan.first_write,
            on_result=collect,
            recorded=plan.recorded,
        )
    if unseen.all_unseen:
        on_warning(unseen.warning())
    if unrecorded():
        on_warning(
            f"{unrecorded()} tool calls ran outside any trial and were not recorded: "
            "the agent ran them in threads it started itself, which do not carry the "
            "trial's context; use asyncio.to_thread, or submit "
            "contextvars.copy_context().run to the executor"
        )


class _UnseenCalls:
    """Counts the trials whose case expects tool calls, and those of them that recorded no
    tool call and no model call at all. When that is every one of them, the agent is most
    likely invisible to agenteval (a plain callable with no `@tool` and no tracing, or an
    instrumentation that does not cover its API: openai-v2 has no span for the Responses
    API), and each "answered without calling any tool" is a gap, not the agent's choice."""

    def __init__(self) -> None:
        self.expecting = 0
        self.unseen = 0

    def add(self, result: TrialResult) -> None:
        case, trial = result.case, result.trial
        if trial.failure is not None or not (case.expected_tools or case.expected_trajectory):
            return
        self.expecting += 1
        if (
            not trial.tool_calls
            and not trial.model_calls
            and "tool_calls" not in trial.not_recorded
        ):
            self.unseen += 1

    @property
    def all_unseen(self) -> bool:
        return self.expecting > 0 and self.unseen == self.expecting

    def warning(self) -> str:
        return (
            f"none of the {self.expecting} trials whose case expects tool calls recorded a tool "
            "call or a model call, so their tool scores judge what agenteval could not see: "
            "decorate the agent's tools with @agenteval.tool, or trace it (OpenTelemetry: "
            "openai-v2 has no span for the Responses API; OpenInference and OpenLLMetry do)"
        )


async def evaluate_async(
    agent: Agent | str | None,
    cases: Iterable[EvalCase] | str | Path,
    scorers: Sequence[ScorerLike] = (),
    *,
    trials: int = 1,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float | None = None,
    retries: int = DEFAULT_RETRIES,
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
    target: str | None = None,
    agent_ref: str | None = None,
    retry_policy: RetryPolicy | None = None,
    base_dir: Path | None = None,
    on_start: Callable[[RunInfo, int, int], None] | None = None,
    on_result: Callable[[TrialResult], None] | None = None,
    on_warning: Warn = logger.warning,
    recorded: Mapping[tuple[str, int], Trial] | None = None,
    otlp_endpoint: str | None = None,
    otlp_receiver: int | None = None,
    otlp_wait: float = DEFAULT_REMOTE_WAIT_S,
    tool_mocks: Mapping[str, Any] | None = None,
    replay_tools: str | None = None,
    replay_match: str = "in-order",
    replay_fallthrough: bool = False,
    user_simulator: JudgeConfig | str | Any = None,
    executor: str = "local",
    workers: int | None = None,
    ray_address: str | None = None,
    worker_memory_mb: int | None = None,
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

    `tools` names the agent's tools (their schemas) for the scorers that check tool calls; by
    default, the tools registered with `@agenteval.tool`. `use_cache=False` judges every
    trial afresh instead of reading the judge cache. `prices` (a `PriceTable`) prices the
    run's tokens; by default, the shipped table.

    The rest serve the CLI and the other doors: `target` is what `agenteval runs` lists as
    the run's target (by default `python:` and the agent's name), `agent_ref` the reference
    the run records for its agent, `retry_policy` a whole retry policy (waits included) in
    place of `retries`, `base_dir` the folder references (the agent, scorers, exception
    classes) are relative to. `on_start(run, jobs, done)` is called once the run is planned,
    `on_result` with each trial's result as it is stored, `on_warning` with each warning
    (by default the `agenteval` logger). `recorded` (with `agent=None`) holds trials recorded
    elsewhere, by (case id, trial index), to score as they are (`agenteval score`).

    `otlp_endpoint` (an OTLP/HTTP base URL, `http://localhost:4318`) also sends each score
    there as a `gen_ai.evaluation.result` event parented to its trial's span (needs the
    `opentelemetry` extra); an endpoint that is down costs one warning, never the run.
    `otlp_receiver` (a port; 0 for any free one, logged) receives OpenTelemetry spans over
    OTLP/HTTP on 127.0.0.1 while the run lasts: an agent service in another process (or
    language) that continues the `traceparent` the HTTP agent sends exports its spans there,
    and each joins its trial; a trial whose service answered waits up to `otlp_wait` seconds
    for them.

    `tool_mocks` (tool name to its mock: `{"get_weather": {"result": {"celsius": 14}}}`, a
    list of rules with `when`, or `{"sequence": [...]}`; a `result` may be a function of the
    call's arguments) answers those tools' calls in every case instead of running them; a
    case's own `tool_mocks` of a tool win. They are stored with the run, so a resume keeps them.

    `replay_tools` (a stored, finished run's id, a unique prefix, or `"latest"`: the newest
    finished run of the same `target`) answers every tool call with what the same case's tools
    returned in that run: matched by tool name and equal arguments, in the stored trial's order
    (`replay_match="any-order"` relaxes it). A call the stored run never made fails the trial
    (`replay_miss`, naming the call) unless `replay_fallthrough=True` runs it for real. The run
    records which run it replayed, and a resume keeps replaying it (`engine/replay.py`).

    `user_simulator` plays the user of cases with a `user_simulation` that have no `script`:
    a model, `"openai:gpt-4o-mini"` (any judge provider) or a `JudgeConfig` for its settings,
    asked through the judge's clients, limits, retries and cache (`use_cache=False` asks it
    afresh); or an object with a `label` and an async `reply(request)`
    (`agenteval.agents.users.User`). A case that needs one when the run has none, or a model
    that cannot run here (no API key, no SDK extra), is a `ConfigError` before the run starts.

    `executor` says where trials run: `"local"` (the default: tasks of this event loop),
    `"process"` (a pool of `workers` processes, default `concurrency`; one whose agent exits,
    crashes or passes `worker_memory_mb` is replaced and its trial recorded `worker_crashed`)
    or `"ray"` (Ray tasks on the cluster at `ray_address`, else `RAY_ADDRESS`, else a local
    Ray instance). Scoring, the judge and the store stay in this process whatever runs the
    trials; the run records its executor.

    `evaluate_async` is the same, to await; `evaluate` refuses to run inside an event loop.
    """
    if recorded is not None and agent is not None:
        raise ValueError("recorded trials are scored with no agent: pass agent=None")
    options = RunOptions(
        trials=trials,
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
        builtins=builtins,
        store=Path(store),
        judge=judge,
        rubrics=rubrics,
        use_cache=use_cache,
        prices=prices,
        passing=passing,
        tools=tools,
        infrastructure_errors=infrastructure_errors,
        retry_policy=retry_policy,
        base_dir=base_dir,
        otlp_endpoint=otlp_endpoint,
        otlp_receiver=otlp_receiver,
        otlp_wait=otlp_wait,
        tool_mocks=tool_mocks,
        replay_tools=replay_tools,
        replay_match=replay_match,
        replay_fallthrough=replay_fallthrough,
        user_simulator=user_simulator,
        executor=executor,
        workers=workers,
        ray_address=ray_address,
        worker_memory_mb=worker_memory_mb,
    )
    run_agent = load_agent(agent, options)
    planner: Planner = (
        # One transaction: of several processes resuming the run at once, one claims it.
        functools.partial(
            plan_resume,
            run_id=resume,
            scorers=scorers,
            options=options,
            agent=run_agent,
            on_warning=on_warning,
        )
        if resume is not None
        else functools.partial(
            plan_new,
            agent=run_agent,
            cases=cases,
            scorers=scorers,
            options=options,
            target=target if target is not None else python_target(agent),
            agent_ref=agent_ref,
            recorded=recorded,
            on_warning=on_warning,
        )
    )
    return await run_planned(
        options, planner, on_start=on_start, on_result=on_result, on_warning=on_warning
    )


evaluate = sync_form(evaluate_async)


async def rescore_async(
    run_id: str,
    scorers: Sequence[ScorerLike] = (),
    *,
    builtins: bool | None = None,
    store: str | Path = DEFAULT_STORE_PATH,
    judge: Judge | JudgeConfig | str | None = None,
    use_cache: bool = True,
    prices: PriceTable | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_result: Callable[[TrialResult], None] | None = None,
    on_warning: Warn = logger.warning,
    otlp_endpoint: str | None = None,
) -> Run:
    """Score a stored run's trials again, without the agent; each new score replaces the one of
    the same name, and scores no scorer gives again are kept.

    `run_id` is a run id or a unique prefix of one. The run's own scorers run again (the
    built-ins, stored references and the judge rubrics, with the run's judge unless `judge`
    names another); `scorers` adds to them. `builtins` defaults to what the run used. The
    judge cache makes judging the same trials again free (`use_cache=False` judges afresh);
    `prices` prices the run's tokens in the summary. `concurrency` bounds the trials scored
    at once by async scorers (the judge); `on_result` gets each trial with its new scores,
    `on_warning` each warning; `otlp_endpoint` also sends the new scores there (as `evaluate`
    does). `rescore` is the same, for code that is not async.
    """
    options = RunOptions(
        store=Path(store),
        judge=judge,
        use_cache=use_cache,
        prices=prices,
        concurrency=concurrency,
        otlp_endpoint=otlp_endpoint,
    )
    planner = functools.partial(
        plan_rescore,
        run_id=run_id,
        scorers=scorers,
        options=options,
        builtins=builtins,
        on_warning=on_warning,
    )
    return await run_planned(
        options, planner, stored=True, on_result=on_result, on_warning=on_warning
    )


rescore = sync_form(
    rescore_async, doc="Score a stored run again without running the agent (see `rescore_async`)."
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
    judge that gave it.

    `run_id` is a run id or a unique prefix of one; `judge` is `"provider:model"`, a
    `JudgeConfig` or a `Judge` (else `AGENTEVAL_JUDGE`; with neither, a `ConfigError`);
    `rubrics` names the rubrics (all four by default) or gives them as mappings. The other
    arguments are `rescore_async`'s. `judge_run` is the same, for code that is not async.
    """
    options = RunOptions(
        store=Path(store),
        judge=judge,
        rubrics=rubrics,
        use_cache=use_cache,
        prices=prices,
        concurrency=concurrency,
    )
    planner = functools.partial(plan_judging, run_id=run_id, options=options, on_warning=on_warning)
    return await run_planned(
        options, planner, stored=True, on_result=on_result, on_warning=on_warning
    )


judge_run = sync_form(
    judge_run_async, doc="Add the judge's rubric scores to a stored run (see `judge_run_async`)."
)
