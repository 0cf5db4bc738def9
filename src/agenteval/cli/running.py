"""Making a run: `agenteval run` (an agent over a dataset, new or resumed) and `agenteval score`
(recorded traces, with no agent). `run` builds the run's options once and calls the engine's two
steps in one place (`evaluate_with`: a new or a resumed run's plan, then `run_planned`);
`score` calls `score_traces_async`, which plans after matching the traces to the cases."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from agenteval.catalog import ScorerRef
from agenteval.cli.common import errors, warn
from agenteval.cli.live import LiveProgress, run_async, stoppable
from agenteval.cli.options import Flags, names, with_options
from agenteval.cli.output import check_writable, finish, junit_target
from agenteval.cli.settings import (
    absolute_ref,
    asked_where,
    config_beside,
    judged_settings,
    require_judge,
    require_stored_judge,
    store_flag,
    target_config,
)
from agenteval.config import (
    Target,
    check_scorer_flags,
    check_scorers,
    find_target,
    load_infrastructure_errors,
    resolve_agent,
    resolve_settings,
)
from agenteval.engine.evaluate import Planner, run_planned
from agenteval.engine.ownership import RunInUse, refuse_pytest_resume, running_elsewhere
from agenteval.engine.planning import plan_new, plan_resume
from agenteval.engine.relocation import find_relocated, rehome, relocated
from agenteval.errors import ConfigError
from agenteval.judge.judge import JudgeConfig
from agenteval.records import how_to_complete
from agenteval.run import Run
from agenteval.simulation.choice import simulator_config, simulator_problem
from agenteval.store import RunStore

__all__ = ["require_user_simulator", "run", "score"]


def require_user_simulator(
    config: JudgeConfig | None,
    flag: str | None,
    config_file: Path | None,
    *,
    stored: bool = False,
) -> None:
    """A user simulator asked for (`--user-simulator`, `AGENTEVAL_USER_SIMULATOR`,
    `user_simulator:` in agenteval.yaml, or the one a resumed run stored) that cannot run here
    (its SDK extra, its API key) stops the command (exit 2) before anything runs or is stored,
    said as the judge's is (`judge.choice.judge_problem`)."""
    if config is None:
        return
    problem = simulator_problem(config)
    if problem is None:
        return
    file: Path | None = None
    if stored:
        field = "user_simulator"
        fix = "pass --user-simulator PROVIDER:MODEL to resume with another"
    else:
        file, field, origin = asked_where("user_simulator", flag, config_file)
        fix = f"or remove {origin} and give the cases scripted users (`script:`)"
    raise ConfigError(
        f"the user simulator {config.spec} cannot run: {problem}",
        file=file,
        field=field,
        hint=f"nothing was run or stored; {fix}",
    )


@with_options(
    "scorer no_builtins store json_path junit_path resume judge rubric no_cache verbose "
    "html_path passing config_path otlp_endpoint"
)
def run(
    target: Annotated[
        str,
        typer.Argument(
            metavar="TARGET", help="agenteval.yaml, a folder holding one, or a dataset file."
        ),
    ],
    agent: Annotated[
        str | None,
        typer.Option(
            metavar="REF",
            help="The agent: module:function, path/to/file.py:function, or an HTTP agent's URL.",
        ),
    ] = None,
    trials: Annotated[
        int | None, typer.Option(metavar="N", help="Trials per case (default: 1).")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option(metavar="N", help="Trials in flight at once (default: 16).")
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(metavar="SECONDS", help="Seconds per trial attempt (default: no limit)."),
    ] = None,
    retries: Annotated[
        int | None,
        typer.Option(metavar="N", help="Retries of infrastructure failures (default: 2)."),
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            metavar="[RUN_ID]",
            help="Resume the latest unfinished run of TARGET, or the run given.",
        ),
    ] = None,
    config_path: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="The agenteval.yaml whose settings a case-file TARGET runs with (default: the "
            "one beside the case file, else the current directory's).",
        ),
    ] = None,
    otlp_receiver: Annotated[
        int | None,
        typer.Option(
            "--otlp-receiver",
            metavar="PORT",
            help="Receive OpenTelemetry spans over OTLP/HTTP on 127.0.0.1:PORT while the run "
            "lasts (0: any free port): an agent service's spans join their trial.",
        ),
    ] = None,
    otlp_wait: Annotated[
        float | None,
        typer.Option(
            "--otlp-wait",
            metavar="SECONDS",
            help="With --otlp-receiver: how long a trial waits for its agent service's spans "
            "after the answer (default: 10).",
        ),
    ] = None,
    replay_tools: Annotated[
        str | None,
        typer.Option(
            "--replay-tools",
            metavar="RUN_ID",
            help="Answer every tool call with what the same case's tools returned in this "
            "stored, finished run (an id, a unique prefix, or `latest`: the newest finished run "
            "of TARGET); no tool runs. A call that run never made fails the trial (replay_miss).",
        ),
    ] = None,
    replay_match: Annotated[
        str | None,
        typer.Option(
            "--replay-match",
            metavar="ORDER",
            help="With --replay-tools: in-order (the stored trial's order; calls it made at "
            "once in any order among them) or any-order (default: in-order).",
        ),
    ] = None,
    replay_fallthrough: Annotated[
        bool,
        typer.Option(
            "--replay-fallthrough",
            help="With --replay-tools: a call the replayed run never made runs for real "
            "instead of failing the trial.",
        ),
    ] = False,
    user_simulator: Annotated[
        str | None,
        typer.Option(
            "--user-simulator",
            metavar="PROVIDER:MODEL",
            help="The model that plays the user of cases with a user_simulation and no script "
            "(provider openai, anthropic or google); env AGENTEVAL_USER_SIMULATOR.",
        ),
    ] = None,
    executor: Annotated[
        str | None,
        typer.Option(
            "--executor",
            metavar="KIND",
            help="Where trials run: local, process (worker processes) or ray (a Ray cluster); "
            "env AGENTEVAL_EXECUTOR (default: local).",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Worker processes (--executor process) or Ray actors (--executor ray) "
            "(default: the concurrency for processes, the cluster's CPUs for Ray).",
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            metavar="ADDRESS",
            help="The Ray cluster of --executor ray (default: RAY_ADDRESS, else a local Ray).",
        ),
    ] = None,
    *,
    flags: Flags,
) -> None:
    """Run an agent over a dataset, score every trial, and store the run."""
    junit_target(flags.junit_path)
    found, config_file = target_config(find_target(target), config_path)
    config = found.config
    settings = resolve_settings(
        config,
        found.base_dir,
        trials=trials,
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
        store=str(flags.store) if flags.store else None,
        judge=flags.judge,
        use_cache=not flags.no_cache,
        builtins=False if flags.no_builtins else None,
        rubrics=names(flags.rubric),
        passing=names(flags.passing),
        config_file=config_file,
        otlp_endpoint=flags.otlp_endpoint,
        otlp_receiver=otlp_receiver,
        otlp_wait=otlp_wait,
        user_simulator=user_simulator,
        executor=executor,
        workers=workers,
        ray_address=ray_address,
    )
    require_judge(settings.judge, flags.judge, config_file)
    require_user_simulator(settings.user_simulator, user_simulator, config_file)
    agent_spec = (
        {"url": agent} if agent and agent.startswith(("http://", "https://")) else agent
    ) or config.agent
    if found.dataset is None:
        raise ConfigError(
            "no dataset given",
            file=found.path,
            field="dataset",
            hint="add `dataset: cases.yaml` to the config",
        )
    if agent_spec is None:
        raise ConfigError(
            "no agent given",
            file=config_file,
            hint="pass --agent module:function (or path/to/file.py:function), or set `agent:` in agenteval.yaml",
        )
    agent_base = found.base_dir if agent is None else Path.cwd()
    agent_fn, agent_ref = resolve_agent(
        agent_spec, base_dir=agent_base, given_in="--agent" if agent else config_file
    )
    in_config = found if config_file is None else dataclasses.replace(found, path=config_file)
    # The run's options, built once: the settings resolved above and the exception classes
    # the config declares as infrastructure.
    options = dataclasses.replace(
        settings,
        infrastructure_errors=load_infrastructure_errors(in_config),
        **_replay_flags(replay_tools, replay_match, replay_fallthrough, resumed=resume),
    )
    check_scorers(in_config, flags.scorer or [])
    scorer_refs: list[ScorerRef] = [
        absolute_ref(ref, found.base_dir) if isinstance(ref, str) else ref for ref in config.scorers
    ]
    scorer_refs += [absolute_ref(ref, Path.cwd()) for ref in flags.scorer or []]
    resume_id: str | None = None
    if resume is not None:
        with RunStore(settings.store) as run_store:
            if resume == "latest":
                resume_id = _latest_resumable(run_store, found, agent_ref, target)
            else:
                resume_id = run_store.resolve_run_id(resume)
            stored = run_store.get_info(resume_id)
            refuse_pytest_resume(stored)
            moved = relocated(run_store, stored, found, agent_ref)
            if moved is not None:  # its folder moved here: say so, and re-home it
                errors.print(f"[dim]{escape(moved.describe())}[/]")
                stored = rehome(run_store, moved, found)
        if stored.target != found.key:
            raise ConfigError(
                f"run {resume_id} was started on {stored.target}, not on {target}",
                hint=how_to_complete(stored.target, resume_id),
            )
        if settings.judge is None:  # resumed with the run's own judge, if it has one
            require_stored_judge(stored)
        stored_simulator = stored.settings.get("user_simulator") or {}
        if settings.user_simulator is None and "spec" in stored_simulator:
            require_user_simulator(simulator_config(stored_simulator), None, None, stored=True)
        ignored = [
            flag
            for flag, value in (
                ("--trials", trials),
                ("--timeout", timeout),
                ("--scorer", flags.scorer),
                ("--no-builtins", flags.no_builtins or None),
                ("--rubric", flags.rubric),
                ("--passing", flags.passing),
                ("--replay-tools", replay_tools),
                ("--replay-match", replay_match),
                ("--replay-fallthrough", replay_fallthrough or None),
            )
            if value
        ]
        if ignored:
            warn(f"a resumed run keeps its own settings; ignoring {', '.join(ignored)}")
    check_writable(flags.json_path)
    check_writable(flags.html_path, "--html")
    progress = LiveProgress()

    def evaluate_run() -> Run:
        nonlocal resume_id
        while True:
            try:
                chosen: Run = run_async(functools.partial(evaluate_with, resume_id))
                return chosen
            except RunInUse:
                if resume != "latest":
                    raise
                # Another process claimed the newest stopped run between the pick and the
                # claim: `--resume` alone takes the next one, never refusing for it.
                with RunStore(settings.store) as run_store:
                    resume_id = _latest_resumable(run_store, found, agent_ref, target)

    def evaluate_with(resume_id: str | None) -> Coroutine[Any, Any, Run]:
        planner: Planner = (
            functools.partial(
                plan_resume,
                run_id=resume_id,
                scorers=[],
                options=options,
                agent=agent_fn,
                on_warning=warn,
            )
            if resume_id is not None
            else functools.partial(
                plan_new,
                agent=agent_fn,
                cases=found.dataset or found.path,
                scorers=scorer_refs,
                options=options,
                target=found.key,
                agent_ref=agent_ref,
                on_warning=warn,
            )
        )
        return run_planned(
            options,
            planner,
            on_start=progress.start,
            on_result=progress.advance,
            on_warning=warn,
            on_notice=lambda note: errors.print(f"[dim]{escape(note)}[/]"),
        )

    resume_store = store_flag(settings.store)
    result = stoppable(
        evaluate_run,
        progress,
        interrupted=(
            f"`agenteval run {escape(target)}{escape(resume_store)} --resume` goes on from here"
        ),
        stopped=f"`agenteval run {target}{resume_store} --resume` goes on from here",
    )
    finish(
        result,
        flags,
        f"`agenteval run {target}{resume_store} --resume {result.run_id}` runs the missing ones",
        prices=settings.prices,
        store=settings.store,
        flag=resume_store,
    )


def _replay_flags(
    replay_tools: str | None, match: str | None, fallthrough: bool, *, resumed: str | None
) -> dict[str, Any]:
    """The replay flags as `RunOptions` fields (checked there: `--replay-match` and
    `--replay-fallthrough` need `--replay-tools`); a resumed run keeps its own replay, so the
    flags are ignored then (with a warning, below)."""
    if resumed is not None:
        return {}
    return {
        "replay_tools": replay_tools,
        "replay_match": match if match is not None else "in-order",
        "replay_fallthrough": fallthrough,
    }


def _latest_resumable(
    run_store: RunStore, found: Target, agent_ref: str | None, target: str
) -> str:
    """The newest unfinished run of the target that no live process is running; else one
    whose folder moved here (`relocation`)."""
    resume_id = run_store.latest_unfinished(found.key, skip=running_elsewhere)
    if resume_id is None:
        moved = find_relocated(run_store, found, agent_ref, skip=running_elsewhere)
        resume_id = None if moved is None else moved.run_id
    if resume_id is None:
        raise ConfigError(
            f"no unfinished run of {target} to resume",
            hint="`agenteval runs` lists the stored runs (a run another live process is "
            "running is left to it); run without --resume to start one",
        )
    return resume_id


@with_options("scorer no_builtins store json_path judge rubric no_cache verbose otlp_endpoint")
def score(
    traces: Annotated[
        Path,
        typer.Argument(
            metavar="TRACES",
            help="Recorded traces: OTLP JSON (as the OpenTelemetry Collector's file exporter "
            "writes it), agenteval trial JSONL, or a folder of them.",
        ),
    ],
    cases: Annotated[
        Path, typer.Option("--cases", metavar="FILE", help="The case file the traces answer.")
    ],
    match_attribute: Annotated[
        str,
        typer.Option(
            "--match-attribute",
            metavar="NAME",
            show_default=False,
            help="The root-span attribute naming each trace's case (default: agenteval.case.id).",
        ),
    ] = "agenteval.case.id",
    match_by_order: Annotated[
        bool,
        typer.Option(
            "--match-by-order",
            help="When no trace names its case, match trace i to case i (the file holds one "
            "trace per trial, in case order); without it, that is an error.",
        ),
    ] = False,
    *,
    flags: Flags,
) -> None:
    """Score recorded traces with no agent, and store them as a run."""
    from agenteval.otel.scoring import score_traces_async

    check_scorer_flags(flags.scorer or [])
    refs = [absolute_ref(ref, Path.cwd()) for ref in flags.scorer or []]
    check_writable(flags.json_path)
    # The case file's settings, as `agenteval run CASES` reads them.
    settings = judged_settings(flags, config_beside(cases))
    progress = LiveProgress()
    again = "score the traces again for a whole run (a new run)"
    result: Run = stoppable(
        lambda: run_async(
            lambda: score_traces_async(
                traces,
                cases,
                refs,
                match_attribute=match_attribute,
                match_by_order=match_by_order,
                builtins=not flags.no_builtins,
                store=settings.store,
                judge=settings.judge,
                rubrics=names(flags.rubric),
                use_cache=not flags.no_cache,
                prices=settings.prices,
                base_dir=Path.cwd(),
                on_start=progress.start,
                on_result=progress.advance,
                on_warning=warn,
                otlp_endpoint=settings.otlp_endpoint,
            )
        ),
        progress,
        interrupted=again,
        stopped=again,
    )
    finish(result, flags, again, store=settings.store)
