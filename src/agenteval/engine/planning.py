"""Planning a run: everything decided before a trial runs or a stored trial is scored again.

A plan is made one of six ways, each returning one `RunPlan` (`engine/plans.py`) for
`engine.evaluate.execute`:

- `plan_new`: a new run of an agent over cases (`evaluate`, `agenteval run`, `EvalSuite`,
  `AgentEvaluator`);
- `plan_case`: one case of a run several processes write at once (a pytest test's cases, under
  xdist too);
- `plan_recorded`: a new run of trials recorded elsewhere, scored as they are (`score_traces`,
  `agenteval score`);
- `plan_resume`: a stored run that did not finish, claimed, with its cases, trials, time
  limit, scorers and judge as stored, and the (case, trial) pairs it holds already;
- `plan_rescore`, `plan_judging` (in `engine/rescoring.py`): a stored run's trials, scored
  again (`rescore`) or by the judge's rubrics (`judge_run`).

Each resolves the run's scorers (`catalog.resolve_run_scorers`) with its judge chosen, says
once what will give no score, and names the case source (the cases given, or the run's own,
read back from the store) and the keys already done. A plan that cannot be made closes the
judge it opened; a plan made leaves the judge to `execute`, which closes it.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from agenteval.agents.calling import Agent
from agenteval.agents.frameworks import FrameworkAgent
from agenteval.agents.tools import known_tools, registered_tools
from agenteval.case import EvalCase
from agenteval.casefiles.loading import open_cases
from agenteval.casefiles.script_check import check_scripts, checked_scripts
from agenteval.casefiles.streaming import CaseStream
from agenteval.catalog import SCORER_REFS, scorer_reference
from agenteval.engine.agent import load_agent
from agenteval.engine.mock_check import check_resumable, checked_mocks
from agenteval.engine.options import RunOptions
from agenteval.engine.ownership import claim_run
from agenteval.engine.plans import (
    PlanKind,
    RunPlan,
    Warn,
    announce_scoring,
    logger,
    open_store,
    resolve_scorers,
    run_judge_choice,
)
from agenteval.engine.replay import replay_options, with_replay
from agenteval.engine.simulated_users import (
    check_players,
    planned_with,
    with_named_simulator,
    with_users,
)
from agenteval.errors import ConfigError
from agenteval.exception_refs import exception_classes
from agenteval.judge.rubrics import RUBRICS
from agenteval.owners import current_owner
from agenteval.records import RunInfo
from agenteval.report.statistics import check_passing
from agenteval.report.summary import SummaryBuilder
from agenteval.scorers.base import scorer_name
from agenteval.simulation.choice import SimulatorChoice
from agenteval.store import RunStore
from agenteval.tool_mocks import ToolMock
from agenteval.trace import ToolSpec, Trial

if TYPE_CHECKING:
    from agenteval.judge.choice import JudgeChoice

T = TypeVar("T")

__all__ = [
    "PlanKind",
    "RunPlan",
    "Warn",
    "load_agent",
    "open_store",
    "plan_case",
    "plan_new",
    "plan_recorded",
    "plan_resume",
]


def rubric_refs(
    rubrics: Sequence[str | Mapping[str, Any]] | None, choice: JudgeChoice
) -> list[str | Mapping[str, Any]]:
    """The judge rubrics a new run scores with: those named, else all four with a judge."""
    if rubrics is None:
        return list(RUBRICS) if choice.config is not None else []
    return list(rubrics)


def given_cases(cases: Iterable[EvalCase] | str | Path) -> Iterable[EvalCase]:
    """The cases to run: a list as given or read from a case file (a JSONL or CSV file: a
    `CaseStream`, checked whole, then read again a case at a time), or a stream (an iterator or
    generator), which is read once, as it comes."""
    found: Iterable[EvalCase]
    if isinstance(cases, str | Path):
        found = open_cases(cases)
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


def _run_tools(agent: Agent | None, options: RunOptions) -> Mapping[str, ToolSpec]:
    """The agent's tools, live: a tool imported mid-run is known by the time it is scored; a
    framework's agent's, the tools it declares (not every `@tool` the process imported)."""
    if options.tools is not None:
        return options.tools
    if isinstance(agent, FrameworkAgent):
        return agent.tool_specs()
    return registered_tools() if agent is not None else {}


def _live_tools(agent: Agent | None) -> bool:
    """Whether the run's tools are `@tool`'s registry, read when the run ends, rather than
    fixed when it is planned (no agent, or a framework's agent: `_run_tools`)."""
    return agent is not None and not isinstance(agent, FrameworkAgent)


def _declared(options: RunOptions) -> tuple[type[BaseException], ...]:
    if not options.infrastructure_errors:
        return ()
    return exception_classes(options.infrastructure_errors, base_dir=options.base_dir)


def _dumped(mocks: Mapping[str, ToolMock]) -> dict[str, Any]:
    return {name: mock.model_dump(mode="json") for name, mock in mocks.items()}


def _class_ref(cls: type[BaseException]) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


async def plan_new(
    store: RunStore,
    agent: Agent | None,
    cases: Iterable[EvalCase] | str | Path,
    scorers: Sequence[Any],
    options: RunOptions,
    *,
    target: str,
    agent_ref: str | None = None,
    recorded: Mapping[tuple[str, int], Trial] | None = None,
    on_warning: Warn = logger.warning,
    run_id: str | None = None,
    dataset: str | None = None,
    settings_extra: Mapping[str, Any] | None = None,
) -> RunPlan:
    """A new run of `agent` (None: the cases' recorded traces, or `recorded`) over `cases`.

    A list of cases is stored with the run by the first write, and so is a JSONL or CSV
    file's `CaseStream` (read again for the trials, a case at a time); a stream is read once,
    into the store, here, and read back from there as it runs. `target` is what `agenteval runs`
    lists; `run_id` (else a new one), `dataset` (else the case file, if `cases` names one)
    and `settings_extra` are recorded with the run."""
    settings, replayed = with_replay(
        store,
        options,
        replace(options.engine_settings(_declared(options)), agent_ref=agent_ref),
        target=target,
    )
    found = given_cases(cases)
    # A case file streamed (`CaseStream`) is checked by the cases these checks look at, kept
    # from its first read: the same checks, in the same order, as on the file's list.
    given = checked_mocks(
        list(found.notable) if isinstance(found, CaseStream) else found,
        agent,
        options,
        dataset or cases,
    )
    users = SimulatorChoice()  # recorded trials play no user: no simulator opened
    if agent is not None:  # scripted users play only where an agent runs: before any trial
        given = checked_scripts(given, dataset or cases, options.base_dir)
        if isinstance(given, Sequence):
            options = with_named_simulator(options, given)
            check_players(given, options.user_simulator)
        settings, users = with_users(options, settings)
    if isinstance(found, CaseStream):
        given = found
    choice = run_judge_choice(options)

    def make() -> RunPlan:
        refs = [*scorers, *rubric_refs(options.rubrics, choice)]
        tools = _run_tools(agent, options)
        resolution = resolve_scorers(
            refs, choice, builtins=options.builtins, tools=tools, base_dir=options.base_dir
        )
        names = [scorer_name(s) for s in resolution.scorers]
        check_passing(options.passing, names, field="passing")
        announce_scoring(resolution, choice, on_warning)
        stored_judge = choice.stored()
        stored_users = users.stored()
        base_dir = options.base_dir
        info = RunInfo(
            **({"run_id": run_id} if run_id is not None else {}),
            target=target,
            agent=agent_ref,
            dataset=(
                dataset
                if dataset is not None
                else str(cases)
                if isinstance(cases, str | Path)
                else None
            ),
            trials=settings.trials,
            concurrency=settings.concurrency,
            timeout_s=settings.timeout_s,
            max_retries=settings.retry.max_retries,
            scorers=[r for r in map(scorer_reference, refs) if r is not None],
            builtins=options.builtins,
            tools=known_tools() if _live_tools(agent) else dict(tools),
            settings={
                "owner": current_owner(),
                "executor": settings.executor.stored(),
                SCORER_REFS: resolution.references,
                **({"expected_trials": len(recorded)} if recorded is not None else {}),
                **({"passing": list(options.passing)} if options.passing is not None else {}),
                **({"judge": stored_judge} if stored_judge else {}),
                **({"user_simulator": stored_users} if stored_users else {}),
                **({"base_dir": str(base_dir.resolve())} if base_dir else {}),
                **({"tool_mocks": _dumped(options.tool_mocks)} if options.tool_mocks else {}),
                **replayed,
                **(
                    {"infrastructure_errors": list(map(_class_ref, settings.infrastructure))}
                    if settings.infrastructure
                    else {}
                ),
                **(settings_extra or {}),
            },
        )
        plan = RunPlan(
            kind="new" if recorded is None else "recorded",
            info=info,
            scorers=resolution.scorers,
            judge=choice,
            store=options.store,
            summary=SummaryBuilder(
                names, options.prices, options.passing, trials_per_case=settings.trials
            ),
            settings=settings,
            agent=agent,
            recorded=recorded,
            tools=None if _live_tools(agent) else tools,
        )
        if isinstance(given, CaseStream):  # its ids were checked by its first read
            plan.cases, plan.case_count = given, len(given)
            plan.first_write = functools.partial(store.create_run, info, given)
        elif isinstance(given, Sequence):
            _check_unique(given)
            plan.cases, plan.case_count = given, len(given)
            # Stored by the writer while the first trials run; no trial is stored before its
            # run and cases are.
            plan.first_write = functools.partial(store.create_run, info, given)
        else:
            # A stream is read once, into the store, and read back from there.
            store.create_run(info, given)
            plan.case_count = store.count_cases(info.run_id)
            plan.cases = store.iter_cases(info.run_id)
        return plan

    return await planned_with(users, choice, make)


async def plan_recorded(
    store: RunStore,
    recorded: Mapping[tuple[str, int], Trial],
    cases: Iterable[EvalCase] | str | Path,
    scorers: Sequence[Any],
    options: RunOptions,
    *,
    target: str,
    on_warning: Warn = logger.warning,
    settings_extra: Mapping[str, Any] | None = None,
) -> RunPlan:
    """A new run of trials recorded elsewhere (by case id and trial index), scored as they
    are, with no agent; `settings_extra` (how they were matched to cases) is stored with it."""
    return await plan_new(
        store,
        None,
        cases,
        scorers,
        options,
        target=target,
        recorded=recorded,
        on_warning=on_warning,
        settings_extra=settings_extra,
    )


async def plan_case(
    store: RunStore,
    agent: Agent,
    cases: Sequence[EvalCase],
    case: EvalCase,
    scorers: Sequence[Any],
    options: RunOptions,
    *,
    run_id: str,
    target: str,
    agent_ref: str,
    dataset: str | None,
    settings_extra: Mapping[str, Any],
) -> RunPlan:
    """One case of a run whose cases several processes run at once (a pytest session's test,
    under xdist too): `info` is the run as it is stored with all its `cases` by whichever
    process stores it first (`store.create_run`, not done here), and only `case` runs. Its
    notes are not warned about (a test reports its own failures)."""
    plan = await plan_new(
        store,
        agent,
        cases,
        scorers,
        options,
        target=target,
        agent_ref=agent_ref,
        run_id=run_id,
        dataset=dataset,
        settings_extra=settings_extra,
        on_warning=_quiet,
    )
    return replace(plan, kind="case", cases=[case], case_count=1, first_write=None)


def _quiet(note: str) -> None:
    del note


async def plan_resume(
    store: RunStore,
    run_id: str,
    scorers: Sequence[Any],
    options: RunOptions,
    *,
    agent: Agent | None,
    on_warning: Warn = logger.warning,
) -> RunPlan:
    """Go on with a stored run that did not finish (`run_id`, or a unique prefix of one).

    The run is claimed in one transaction (of several processes resuming it at once, one
    gets it); it keeps its cases, trials, time limit, built-ins, `passing` and judge (unless
    `options.judge` names another); concurrency and retries may change."""
    infrastructure = _declared(options)
    info = claim_run(store, store.resolve_run_id(run_id))
    stored_dir = info.settings.get("base_dir")
    options = replace(
        options,
        trials=info.trials,
        timeout=info.timeout_s,
        builtins=info.builtins,
        passing=info.settings.get("passing"),
        base_dir=Path(stored_dir) if stored_dir else options.base_dir,
        tool_mocks=info.settings.get("tool_mocks", options.tool_mocks),  # the run's own
        **replay_options(info.settings),  # the run's own replay, or none
    )
    settings, _ = with_replay(
        store,
        options,
        replace(options.engine_settings(infrastructure), agent_ref=info.agent),
        target=info.target,
    )
    # The executor is the resume's own (where trials run does not change their results).
    info = info.model_copy(
        update={"settings": {**info.settings, "executor": settings.executor.stored()}}
    )
    check_resumable(store.iter_cases(info.run_id), options.tool_mocks)
    stored_users = info.settings.get("user_simulator")
    users = SimulatorChoice()
    if agent is not None:
        check_scripts(store.iter_cases(info.run_id), info.dataset, options.base_dir)
        given = options.user_simulator or (stored_users if "spec" in (stored_users or {}) else None)
        check_players(store.iter_cases(info.run_id), given)
        settings, users = with_users(options, settings, stored_users)
    choice = run_judge_choice(options, info.settings.get("judge"))

    def make() -> RunPlan:
        tools = _run_tools(agent, options)
        resolution = resolve_scorers(
            [*info.scorers, *scorers],
            choice,
            builtins=info.builtins,
            tools=tools,
            base_dir=options.base_dir,
            stored=info.settings.get(SCORER_REFS),
        )
        announce_scoring(resolution, choice, on_warning)
        summary = SummaryBuilder(
            (scorer_name(s) for s in resolution.scorers),
            options.prices,
            options.passing,
            trials_per_case=settings.trials,
        )
        done = store.finished_keys(info.run_id)
        for result in store.iter_results(info.run_id):
            summary.add(result)
        return RunPlan(
            kind="resume",
            info=info,
            scorers=resolution.scorers,
            judge=choice,
            store=options.store,
            summary=summary,
            settings=settings,
            agent=agent,
            cases=store.iter_cases(info.run_id),
            case_count=store.count_cases(info.run_id),
            done=done,
            tools=None if agent is not None else dict(tools),
        )

    return await planned_with(users, choice, make)
