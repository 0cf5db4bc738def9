"""The `agenteval` command: run, rescore, score, runs, show, schema."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import os
import shlex
import sys
import traceback
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column, Table
from rich.text import Text

from agenteval.catalog import ScorerRef, scorer_references
from agenteval.config import (
    CONFIG_NAMES,
    ProjectConfig,
    RunSettings,
    Target,
    check_scorer_flags,
    check_scorers,
    find_target,
    load_infrastructure_errors,
    resolve_agent,
    resolve_settings,
)
from agenteval.datasets import case_file_schema
from agenteval.engine.evaluate import evaluate_async, judge_run_async, rescore_async
from agenteval.engine.ownership import RunInUse, refuse_pytest_resume, running_elsewhere
from agenteval.engine.relocation import find_relocated, rehome, relocated
from agenteval.engine.scheduler import WorkerLostError
from agenteval.errors import AgentEvalError, ConfigError
from agenteval.judge.choice import config_from_record, judge_problem
from agenteval.judge.judge import JudgeConfig
from agenteval.judge.rubrics import RUBRICS
from agenteval.pricing import PriceTable
from agenteval.records import (
    MissingTrials,
    RunInfo,
    RunStatus,
    TrialResult,
    how_to_complete,
    pytest_test_of,
)
from agenteval.report.compare import (
    compare_runs,
    comparison_markdown,
    print_comparison,
    write_comparison_json,
)
from agenteval.report.gate import GatePolicy, evaluate_gate, load_policy, print_verdict
from agenteval.report.html import write_html
from agenteval.report.json_document import write_run_json
from agenteval.report.junit import JUnitTotals, write_junit
from agenteval.report.statistics import check_passing
from agenteval.report.summary import summarize
from agenteval.report.terminal import print_failing, print_summary
from agenteval.run import Run
from agenteval.store import RunStore
from agenteval.version import __version__

__all__ = ["app", "main"]

app = typer.Typer(
    name="agenteval",
    help="Evaluate tool-using LLM agents: run, score, store and report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Help as click writes it: `-h` as well as `--help`, a flag with no value placeholder, an
    # option's value named by its metavar (typer's rich panels label every flag `<bool>`).
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
console = Console()
errors = Console(stderr=True)
_state = {"debug": False}

T = TypeVar("T")

StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store",
        metavar="FILE",
        help="The SQLite run store; env AGENTEVAL_STORE (default: .agenteval/runs.db).",
    ),
]


ScorerOption = Annotated[
    list[str] | None,
    typer.Option(
        "--scorer",
        metavar="NAME",
        help="Add a scorer: a built-in name or module:function (repeatable).",
    ),
]
NoBuiltinsOption = Annotated[
    bool, typer.Option("--no-builtins", help="Leave out the built-in scorers.")
]
JsonOption = Annotated[
    Path | None, typer.Option("--json", metavar="FILE", help="Write the run as JSON to FILE.")
]
PassingOption = Annotated[
    list[str] | None,
    typer.Option(
        "--passing",
        metavar="NAME",
        help="The scorers that decide whether a trial passes (repeatable or comma-separated) "
        "(default: every scorer that applied).",
    ),
]
HtmlOption = Annotated[
    Path | None,
    typer.Option(
        "--html", metavar="FILE", help="Write the run as one self-contained HTML page to FILE."
    ),
]
JunitOption = Annotated[
    Path | None,
    typer.Option(
        "--junit",
        metavar="FILE",
        help="Write the run as JUnit XML to FILE: one test case per eval case.",
    ),
]
VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="Also list failing trials with their reasons.")
]
JudgeOption = Annotated[
    str | None,
    typer.Option(
        "--judge",
        metavar="PROVIDER:MODEL",
        help="The LLM judge (provider openai, anthropic or google); env AGENTEVAL_JUDGE.",
    ),
]
RubricOption = Annotated[
    list[str] | None,
    typer.Option(
        "--rubric",
        metavar="NAME",
        help="Judge rubrics to score (repeatable or comma-separated) (default: all four).",
    ),
]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Ask the judge again instead of using its cache.")
]
RunIdArgument = Annotated[
    str,
    typer.Argument(metavar="RUN_ID", help="The run: an id, a unique prefix of one, or `latest`."),
]


def _print_version(value: bool) -> None:
    if value:
        console.print(f"agenteval {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks for every error.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_print_version
        ),
    ] = False,
) -> None:
    _state["debug"] = _state["debug"] or debug


class _LiveProgress:
    """A progress bar: trials done / total, failures, time left."""

    def __init__(self) -> None:
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.task: TaskID | None = None
        self.failed = 0

    def start(self, info: RunInfo, total: int, done: int) -> None:
        self.progress.start()
        label = "resuming" if done else "running"
        console.print(
            f"[dim]{label} run[/] [bold cyan]{info.run_id}[/] [dim]({done} of {total} trials already stored)[/]"
            if done
            else f"[dim]run[/] [bold cyan]{info.run_id}[/]"
        )
        self.task = self.progress.add_task("trials", total=total, completed=done, failed=0)

    def advance(self, result: TrialResult) -> None:
        if result.trial.failure is not None:
            self.failed += 1
        if self.task is not None:
            self.progress.update(self.task, advance=1, failed=self.failed)

    def stop(self) -> None:
        self.progress.stop()


def _store_flag(store: Path) -> str:
    """` --store PATH` when `store` is not the one a command run here reads by default (a
    `--store` flag, or the `store:` of a case file's agenteval.yaml in another folder), so a
    command a hint suggests finds the run; else nothing."""
    try:
        usual: Path | None = _global_settings(None).store
    except AgentEvalError:  # the current folder's config is broken: name the store outright
        usual = None
    if usual is not None and Path(usual).resolve() == Path(store).resolve():
        return ""
    return f" --store {shlex.quote(str(store))}"


def _stored_in(store: Path, run_id: str) -> None:
    """Where the run went, and the `agenteval show` that finds it from here."""
    show = f"agenteval show {run_id}{_store_flag(store)}"
    console.print(f"[dim]stored in {escape(str(store))} · `{escape(show)}` shows it again[/]")


def _global_settings(
    store: Path | None,
    *,
    judge: str | None = None,
    use_cache: bool = True,
    config_file: Path | None = None,
) -> RunSettings:
    """Settings for commands on stored runs: flags, then environment, then the agenteval.yaml
    of the current directory (if any; `config_file` names another), then defaults."""
    config = ProjectConfig()
    config_file = config_file or _cwd_config()
    if config_file is not None:
        config = find_target(config_file).config
    return resolve_settings(
        config,
        config_file.parent.resolve() if config_file is not None else Path.cwd(),
        store=str(store) if store else None,
        judge=judge,
        use_cache=use_cache,
        config_file=config_file,
    )


def _require_stored_judge(info: RunInfo) -> None:
    """A stored run judged by a judge that cannot run here (no key, no SDK extra) is not
    rescored or resumed with it: its rubrics would give no score, and a rescore would replace
    the verdicts it holds with nothing. Exit 2, naming what to set, or to pass `--judge`."""
    record = info.settings.get("judge")
    if not record:
        return
    config = config_from_record(record)
    problem = judge_problem(config)
    if problem is not None:
        raise ConfigError(
            f"run {info.run_id} is judged by {config.spec}, which cannot run here: {problem}",
            hint="nothing was changed: without its judge, its verdicts would be replaced by no "
            "score; or pass --judge PROVIDER:MODEL to judge it with another",
        )


def _cwd_config() -> Path | None:
    """The current directory's agenteval.yaml, if it has one."""
    return next((Path(n) for n in CONFIG_NAMES if Path(n).is_file()), None)


def _config_beside(case_file: Path) -> Path | None:
    """The agenteval.yaml a case file runs with: the one in its folder (the project the cases
    belong to), else the current directory's."""
    for folder in (case_file.parent, Path()):
        for name in CONFIG_NAMES:
            if (folder / name).is_file():
                return folder / name
    return None


def _target_config(found: Target, given: Path | None) -> tuple[Target, Path | None]:
    """The target with the settings it runs with, and the agenteval.yaml they come from. A
    config (or a folder holding one) is its own; a case file runs with `--config FILE`, else
    the agenteval.yaml beside it, else the current directory's (so a hint to add something to
    agenteval.yaml can be followed), with the case file as its dataset and the config's folder
    as the base of the paths in it. The run is still the case file's (`--resume` finds it by
    the case file)."""
    if found.dataset != found.path:
        if given is not None:
            raise ConfigError(
                f"{found.path} is a config already",
                field="--config",
                hint="--config is for a case-file TARGET; run the config you mean instead",
            )
        return found, found.path
    if given is not None and not given.is_file():
        raise ConfigError(
            f"no such file: {given}", field="--config", hint="give the path of an agenteval.yaml"
        )
    path = given if given is not None else _config_beside(found.path)
    if path is None:
        return found, None
    read = find_target(path)
    if read.dataset == read.path:  # a case file, not a config
        raise ConfigError(
            f"{path} is not an agenteval.yaml",
            field="--config",
            hint="give a config file (settings such as trials:, prices:, judge:)",
        )
    if given is None:
        errors.print(f"[dim]settings from {escape(str(path))}[/]")
    return dataclasses.replace(read, path=found.path, dataset=found.dataset), read.path


def _store_path(store: Path | None) -> Path:
    return _global_settings(store).store


def _require_judge(judge: JudgeConfig | None, flag: str | None, config_file: Path | None) -> None:
    """A judge the user asked for (`--judge`, `AGENTEVAL_JUDGE`, `judge:` in agenteval.yaml)
    that cannot run here stops the command with one message (exit 2) before anything runs or is
    stored: its rubrics would otherwise give no score on every trial, and a rescore would
    replace stored verdicts with nothing. With no judge asked for, this does nothing (the
    rubrics give no score, with one warning)."""
    if judge is None:
        return
    problem = judge_problem(judge)
    if problem is None:
        return
    file: Path | None = None
    if flag:
        field = origin = "--judge"
    elif os.environ.get("AGENTEVAL_JUDGE"):
        field = origin = "AGENTEVAL_JUDGE"
    else:
        file, field = config_file, "judge"
        origin = f"`judge:` from {config_file or CONFIG_NAMES[0]}"
    raise ConfigError(
        f"the judge {judge.spec} cannot run: {problem}",
        file=file,
        field=field,
        hint=f"nothing was run or stored; or remove {origin} to run without the judge",
    )


def _run_async(make: Callable[[], Any]) -> Any:
    """Run a command's coroutine to its end, as `asyncio.run` does, but leave nothing behind
    whatever stops it.

    A KeyboardInterrupt raised inside a task (a second Ctrl-C lands wherever the main thread
    is) or any other BaseException a task lets out escapes the event loop at once, leaving
    the main task pending and the failed task's error unretrieved; `asyncio.run` then printed
    "Task was destroyed but it is pending!" and tracebacks after the command's own message.
    Here every task is cancelled and waited for before the loop closes.
    """
    runner = asyncio.Runner()
    try:
        return runner.run(make())
    finally:
        _close_quietly(runner)


def _close_quietly(runner: asyncio.Runner) -> None:
    loop = runner.get_loop()
    if not loop.is_closed():
        # What is still running is being stopped on purpose, and the command says why:
        # asyncio's own reports (a task never awaited, an error never retrieved) are noise.
        loop.set_exception_handler(lambda _loop, _context: None)
        for _ in range(100):
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            if not pending:
                break
            for task in pending:
                task.cancel()
            try:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            except BaseException:  # a task raised KeyboardInterrupt again: go round
                continue
    runner.close()


def _stoppable(
    call: Callable[[], T], progress: _LiveProgress, *, interrupted: str, stopped: str
) -> T:
    """`call()` (a command's whole run), ending in one line on Ctrl-C (exit 130, then
    `interrupted`, rich markup) or on anything else that stops it but a user's mistake (exit 1,
    then `stopped`, plain text): a BaseException that is not an Exception, a worker lost, a
    failure of agenteval's own. `agenteval run` and `score` stop alike."""
    try:
        return call()
    except KeyboardInterrupt:
        progress.stop()
        errors.print(f"[yellow]interrupted[/]: every finished trial is stored; {interrupted}")
        raise typer.Exit(130) from None
    except (AgentEvalError, typer.Exit):
        raise  # a user's mistake: one message (`main`)
    except BaseException as exc:
        progress.stop()
        raise _stopped(exc, stopped) from None
    finally:
        progress.stop()


def _stopped(exc: BaseException, then: str) -> typer.Exit:
    """One message for what ended the run, not a user's mistake (a BaseException that is not an
    Exception, a scorer's or an agent's own kind of stop; a worker lost; agenteval's own
    failure): what it was, and what to do next (`then`); exit 1."""
    if _state["debug"]:
        traceback.print_exception(exc)
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
        leaf = leaf.exceptions[0]
    if isinstance(leaf, Exception) and not isinstance(leaf, WorkerLostError):
        then += " (a failure of agenteval's own: `--debug` shows where; please report it)"
    errors.print(
        Text.assemble(
            ("error: ", "bold red"),
            f"the run stopped: {type(leaf).__name__}: {leaf}; every finished trial is stored; "
            f"{then}",
        ),
        highlight=False,
    )
    return typer.Exit(1)


@app.command()
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
    scorer: ScorerOption = None,
    no_builtins: NoBuiltinsOption = False,
    store: StoreOption = None,
    json_path: JsonOption = None,
    junit_path: JunitOption = None,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            metavar="[RUN_ID]",
            help="Resume the latest unfinished run of TARGET, or the run given.",
        ),
    ] = None,
    judge: JudgeOption = None,
    rubric: RubricOption = None,
    no_cache: NoCacheOption = False,
    verbose: VerboseOption = False,
    html_path: HtmlOption = None,
    passing: PassingOption = None,
    config_path: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="The agenteval.yaml whose settings a case-file TARGET runs with (default: the "
            "one beside the case file, else the current directory's).",
        ),
    ] = None,
) -> None:
    """Run an agent over a dataset, score every trial, and store the run."""
    _junit_target(junit_path)
    found, config_file = _target_config(find_target(target), config_path)
    config = found.config
    settings = resolve_settings(
        config,
        found.base_dir,
        trials=trials,
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
        store=str(store) if store else None,
        judge=judge,
        use_cache=not no_cache,
        config_file=config_file,
    )
    _require_judge(settings.judge, judge, config_file)
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
    infrastructure = load_infrastructure_errors(in_config)
    check_scorers(in_config, scorer or [])
    scorer_refs: list[ScorerRef] = [
        _absolute_ref(ref, found.base_dir) if isinstance(ref, str) else ref
        for ref in config.scorers
    ]
    scorer_refs += [_absolute_ref(ref, Path.cwd()) for ref in scorer or []]
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
            _require_stored_judge(stored)
        ignored = [
            flag
            for flag, value in (
                ("--trials", trials),
                ("--timeout", timeout),
                ("--scorer", scorer),
                ("--no-builtins", no_builtins or None),
                ("--rubric", rubric),
                ("--passing", passing),
            )
            if value
        ]
        if ignored:
            _warn(f"a resumed run keeps its own settings; ignoring {', '.join(ignored)}")
    if json_path is not None:
        _check_writable(json_path)
    if html_path is not None:
        _check_writable(html_path, "--html")
    progress = _LiveProgress()

    def evaluate_run() -> Run:
        nonlocal resume_id
        while True:
            try:
                chosen: Run = _run_async(functools.partial(evaluate_with, resume_id))
                return chosen
            except RunInUse:
                if resume != "latest":
                    raise
                # Another process claimed the newest stopped run between the pick and the
                # claim: `--resume` alone takes the next one, never refusing for it.
                with RunStore(settings.store) as run_store:
                    resume_id = _latest_resumable(run_store, found, agent_ref, target)

    def evaluate_with(resume_id: str | None) -> Coroutine[Any, Any, Run]:
        return evaluate_async(
            agent_fn,
            found.dataset or found.path,
            scorer_refs if resume_id is None else [],
            trials=settings.trials,
            concurrency=settings.concurrency,
            timeout=settings.timeout,
            retries=settings.retries,
            builtins=config.builtins and not no_builtins,
            store=settings.store,
            judge=settings.judge,
            rubrics=_rubrics(rubric) or config.rubrics,
            use_cache=not no_cache,
            prices=settings.prices,
            passing=_rubrics(passing),
            resume=resume_id,
            target=found.key,
            agent_ref=agent_ref,
            base_dir=found.base_dir,
            on_start=progress.start,
            on_result=progress.advance,
            on_warning=_warn,
            infrastructure_errors=infrastructure,
        )

    resume_store = _store_flag(settings.store)
    result = _stoppable(
        evaluate_run,
        progress,
        interrupted=(
            f"`agenteval run {escape(target)}{escape(resume_store)} --resume` goes on from here"
        ),
        stopped=f"`agenteval run {target}{resume_store} --resume` goes on from here",
    )
    _report(
        result, verbose=verbose, json_path=json_path, html_path=html_path, prices=settings.prices
    )
    _stored_in(settings.store, result.run_id)
    _write_junit(junit_path, result)
    _refuse_incomplete(
        result,
        f"`agenteval run {target}{resume_store} --resume {result.run_id}` runs the missing ones",
    )


INCOMPLETE_EXIT = 3
"""`agenteval run`, `score`, `rescore` and `judge` exit with this when the run they summarise
has trials missing: not a verdict on the agent (0), not a gate refusing (1), not a mistake in
the input (2), not Ctrl-C (130), but a run to resume. (Rescoring such a run is legitimate and
its scores are stored; the exit code only refuses to call the summary a whole run's.)"""


def _refuse_incomplete(result: Run, hint: str) -> None:
    """Exit 3, saying what is missing, when the run ended without every trial stored."""
    if result.complete:
        return
    missing = result.missing
    what = (
        f"the summary covers {missing.stored} of {missing.expected} trials; {missing.describe()}"
        if missing is not None
        else "it is not finished; the summary covers only the stored trials"
    )
    errors.print(
        Text.assemble(
            ("error: ", "bold red"),
            f"run {result.run_id} did not finish: {what}\n  hint: {hint}",
        ),
        highlight=False,
    )
    raise typer.Exit(INCOMPLETE_EXIT)


def _missing_note(info: RunInfo, missing: MissingTrials) -> str | None:
    """What `show` and `report` say about a run with trials missing (None when it has all),
    whatever its stored status says: an older agenteval could mark a run finished with trials
    lost. The hint is a command that works: for a pytest session's run, pytest again."""
    then = how_to_complete(info.target, info.run_id)
    if missing.count:
        state = {
            RunStatus.RUNNING: "is unfinished",
            RunStatus.PARTIAL: "is partial (its session ran only some of its cases)",
        }.get(info.status, "is marked finished but")
        return f"run {info.run_id} {state}: {missing.describe()}; {then}"
    if info.status is RunStatus.RUNNING:
        return (
            f"run {info.run_id} is unfinished ({missing.stored} of {missing.expected} trials "
            f"stored); {then}"
        )
    return None


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


def _check_writable(path: Path, flag: str = "--json") -> None:
    """Refuse an output path up front, rather than after the whole run."""
    if path.is_dir():
        example = "report.html" if flag == "--html" else "run.json"
        raise ConfigError(
            f"{path} is a folder", field=flag, hint=f"give a file name, e.g. {example}"
        )
    folder = path.parent if str(path.parent) else Path()
    if folder.exists() and not os.access(folder, os.W_OK):
        raise ConfigError(f"cannot write in {folder}", field=flag, hint="choose another place")


def _warn(message: str) -> None:
    errors.print(Text.assemble(("warning: ", "bold yellow"), message), highlight=False)


def _rubrics(values: list[str] | None) -> list[str] | None:
    """`--rubric a,b --rubric c` (or `--passing`) as [a, b, c]; None when not given."""
    if not values:
        return None
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def _report(
    run: Run,
    *,
    verbose: bool,
    json_path: Path | None,
    html_path: Path | None = None,
    prices: PriceTable | None = None,
) -> None:
    """The summary; with `verbose` the failing trials; with `json_path` the JSON document;
    with `html_path` the HTML page."""
    print_summary(run.summary, run.info, console)
    if verbose:
        print_failing(run.iter_results(), console)
    if json_path is not None:
        write_run_json(json_path, run.info, run.summary, run.iter_results(), run.missing)
        console.print(f"[dim]wrote[/] {escape(str(json_path))}")
    if html_path is not None:
        run.to_html(html_path, prices=prices)
        console.print(f"[dim]wrote[/] {escape(str(html_path))}")


def _absolute_ref(ref: str, base: Path) -> str:
    """A file reference made absolute, so a rescore from elsewhere loads the same file."""
    module, sep, attr = ref.rpartition(":")
    if sep and (module.endswith(".py") or "/" in module):
        path = Path(module)
        return f"{(path if path.is_absolute() else base / path).resolve()}:{attr}"
    return ref


@app.command()
def rescore(
    run_id: RunIdArgument,
    scorer: ScorerOption = None,
    no_builtins: NoBuiltinsOption = False,
    store: StoreOption = None,
    json_path: JsonOption = None,
    junit_path: JunitOption = None,
    judge: JudgeOption = None,
    no_cache: NoCacheOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Score a stored run again, without running the agent (the judge's cache makes judging
    the same trials again free)."""
    _junit_target(junit_path)
    check_scorer_flags(scorer or [])
    refs = [_absolute_ref(ref, Path.cwd()) for ref in scorer or []]
    if json_path is not None:
        _check_writable(json_path)
    settings = _global_settings(store, judge=judge, use_cache=not no_cache)
    _require_judge(settings.judge, judge, _cwd_config())
    if settings.judge is None:  # the run's own judge, if it has one
        with RunStore(settings.store, create=False) as run_store:
            _require_stored_judge(run_store.get_info(run_store.resolve_run_id(run_id)))
    result: Run = _run_async(
        lambda: rescore_async(
            run_id,
            refs,
            builtins=False if no_builtins else None,
            store=settings.store,
            judge=settings.judge,
            use_cache=not no_cache,
            prices=settings.prices,
            on_warning=_warn,
        )
    )
    _report(result, verbose=verbose, json_path=json_path)
    _write_junit(junit_path, result)
    _refuse_incomplete(result, _rescored_hint(result))


def _rescored_hint(result: Run) -> str:
    """What to do about a run scored again with trials missing: resume it, then score again."""
    then = how_to_complete(result.info.target, result.run_id)
    if pytest_test_of(result.info.target) is not None:
        return f"its stored trials are scored; {then}"
    return f"its stored trials are scored; {then}, then score it again"


@app.command()
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
            help="The root-span attribute naming each trace's case; when no trace carries it, "
            "traces are matched to cases by order (default: agenteval.case.id).",
        ),
    ] = "agenteval.case.id",
    scorer: ScorerOption = None,
    no_builtins: NoBuiltinsOption = False,
    store: StoreOption = None,
    json_path: JsonOption = None,
    judge: JudgeOption = None,
    rubric: RubricOption = None,
    no_cache: NoCacheOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Score recorded traces with no agent, and store them as a run."""
    from agenteval.otel.scoring import score_traces_async

    check_scorer_flags(scorer or [])
    refs = [_absolute_ref(ref, Path.cwd()) for ref in scorer or []]
    if json_path is not None:
        _check_writable(json_path)
    # The case file's settings, as `agenteval run CASES` reads them.
    config_file = _config_beside(cases)
    settings = _global_settings(store, judge=judge, use_cache=not no_cache, config_file=config_file)
    _require_judge(settings.judge, judge, config_file)
    progress = _LiveProgress()
    again = "score the traces again for a whole run (a new run)"
    result: Run = _stoppable(
        lambda: _run_async(
            lambda: score_traces_async(
                traces,
                cases,
                refs,
                match_attribute=match_attribute,
                builtins=not no_builtins,
                store=settings.store,
                judge=settings.judge,
                rubrics=_rubrics(rubric),
                use_cache=not no_cache,
                prices=settings.prices,
                base_dir=Path.cwd(),
                on_start=progress.start,
                on_result=progress.advance,
                on_warning=_warn,
            )
        ),
        progress,
        interrupted=again,
        stopped=again,
    )
    _report(result, verbose=verbose, json_path=json_path)
    _stored_in(settings.store, result.run_id)
    _refuse_incomplete(result, "score the traces again for a whole run (a new run)")


@app.command("judge")
def judge_command(
    run_id: RunIdArgument,
    judge: JudgeOption = None,
    rubric: RubricOption = None,
    store: StoreOption = None,
    no_cache: NoCacheOption = False,
    json_path: JsonOption = None,
    junit_path: JunitOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Score a stored run with an LLM judge's rubrics, without running the agent."""
    _junit_target(junit_path)
    if json_path is not None:
        _check_writable(json_path)
    settings = _global_settings(store, judge=judge, use_cache=not no_cache)
    _require_judge(settings.judge, judge, _cwd_config())
    result: Run = _run_async(
        lambda: judge_run_async(
            run_id,
            settings.judge,
            rubrics=_rubrics(rubric) or RUBRICS,
            store=settings.store,
            use_cache=not no_cache,
            prices=settings.prices,
            on_warning=_warn,
        )
    )
    _report(result, verbose=verbose, json_path=json_path)
    _write_junit(junit_path, result)
    _refuse_incomplete(result, _rescored_hint(result))


@app.command("runs")
def list_runs(
    store: StoreOption = None,
    limit: Annotated[
        int,
        typer.Option(
            metavar="N",
            show_default=False,
            help="How many runs to list, newest first (default: 20).",
        ),
    ] = 20,
) -> None:
    """List the stored runs, newest first."""
    path = _store_path(store)
    if not path.exists():
        console.print(f"[dim]no runs yet ({escape(str(path))} does not exist)[/]")
        return
    with RunStore(path, create=False) as run_store:
        rows = run_store.list_runs(limit=limit)
    table = Table(
        Column("run", no_wrap=True, style="cyan"),
        *(Column(header, no_wrap=True) for header in ("created (UTC)", "status", "trials")),
        Column("target", overflow="fold"),  # a long path wraps in its cell, never cut
    )
    for row in rows:
        table.add_row(
            row.run_id,
            f"{row.created_at:%Y-%m-%d %H:%M:%S}",
            # Finished means every trial stored, whatever an older agenteval marked.
            "incomplete" if row.status is RunStatus.FINISHED and not row.complete else row.status,
            f"{row.trials_done}/{row.trials_total}",
            Text(row.target or ""),  # a path like `cases[v2].yaml` is not markup
        )
    console.print(table)


@app.command()
def show(
    run_id: RunIdArgument,
    store: StoreOption = None,
    json_path: JsonOption = None,
    junit_path: JunitOption = None,
    verbose: VerboseOption = False,
    html_path: HtmlOption = None,
) -> None:
    """Print a stored run's summary."""
    _junit_target(junit_path)
    if html_path is not None:
        _check_writable(html_path, "--html")
    settings = _global_settings(store)
    path = settings.store
    with RunStore(path, create=False) as run_store:
        info = run_store.get_info(run_store.resolve_run_id(run_id))
        prices = _run_prices(info, settings.prices)
        summary = summarize(
            run_store.iter_results(info.run_id),
            prices=prices,
            passing=info.settings.get("passing"),
        )
        missing = run_store.missing_trials(info.run_id)
    note = _missing_note(info, missing)
    if note is not None:
        _warn(note)
    shown = Run(info, summary, path, missing)
    _report(shown, verbose=verbose, json_path=json_path, html_path=html_path, prices=prices)
    if verbose:
        _print_references(info)
    _write_junit(junit_path, shown)


def _print_references(info: RunInfo) -> None:
    """Each scorer name of the run with the code its scores came from (what a rescore loads)."""
    references = scorer_references(info)
    if not references:
        return
    console.print(Text("Scorers (what each score came from)", style="bold"))
    # A grid, not padded lines: long names and references fold inside the terminal's width.
    grid = Table.grid(padding=(0, 2), pad_edge=True)
    grid.add_column(overflow="fold")
    grid.add_column(overflow="fold", style="dim")
    for name, text in references.items():
        grid.add_row(Text(name), Text(text))
    console.print(grid)


def _junit_target(path: Path | None) -> None:
    """Refuse a `--junit` path up front, rather than after the whole run."""
    if path is not None and path.is_dir():
        raise ConfigError(
            f"{path} is a folder", field="--junit", hint="give a file name, e.g. junit.xml"
        )


def _write_junit(path: Path | None, run: Run) -> None:
    """With `--junit FILE`, the run as JUnit XML: one test case per eval case."""
    if path is None:
        return
    _wrote_junit(path, write_junit(path, run.info, run.iter_results(), run.missing))


def _junit_report(run_id: str, store: Path | None, path: Path, *, warn: bool = True) -> None:
    """`agenteval report RUN_ID --junit FILE`: a stored run as JUnit XML (`warn`: say what
    trials the run lacks, unless the HTML report just said it)."""
    with RunStore(_store_path(store), create=False) as run_store:
        info = run_store.get_info(run_store.resolve_run_id(run_id))
        missing = run_store.missing_trials(info.run_id)
        note = _missing_note(info, missing) if warn else None
        if note is not None:
            _warn(note)
        totals = write_junit(path, info, run_store.iter_results(info.run_id), missing)
    _wrote_junit(path, totals)


def _wrote_junit(path: Path, totals: JUnitTotals) -> None:
    console.print(
        f"[dim]wrote[/] {escape(str(path))} [dim]({totals.tests} cases: {totals.failures} "
        f"failing, {totals.errors} with errors, {totals.skipped} skipped)[/]"
    )


BaseRunArgument = Annotated[
    str,
    typer.Argument(
        metavar="BASE_RUN", help="The base run: an id, a unique prefix of one, or `latest`."
    ),
]
CandidateRunArgument = Annotated[
    str,
    typer.Argument(
        metavar="CANDIDATE_RUN",
        help="The candidate run: an id, a unique prefix of one, or `latest`.",
    ),
]


@app.command("compare")
def compare_command(
    base_run: BaseRunArgument,
    candidate_run: CandidateRunArgument,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print a Markdown table for a pull-request comment.")
    ] = False,
    json_path: Annotated[
        Path | None,
        typer.Option("--json", metavar="FILE", help="Write the comparison as JSON to FILE."),
    ] = None,
    trial_passes: Annotated[
        list[str] | None,
        typer.Option(
            "--passing",
            metavar="NAME",
            help="The scorers that decide whether a trial passes (repeatable or "
            "comma-separated) (default: the candidate's setting, else every scorer that "
            "applied).",
        ),
    ] = None,
    store: StoreOption = None,
) -> None:
    """Compare a candidate run with a base run: per scorer the change with its 95% interval and
    a paired test over the shared cases, new failures and fixes case by case, cost and latency."""
    if json_path is not None and json_path.is_dir():
        raise ConfigError(
            f"{json_path} is a folder", field="--json", hint="give a file name, e.g. compare.json"
        )
    settings = _global_settings(store)
    with RunStore(settings.store, create=False) as run_store:
        candidate = run_store.get_info(run_store.resolve_run_id(candidate_run))
        comparison = compare_runs(
            run_store,
            base_run,
            candidate.run_id,
            passing=_rubrics(trial_passes),
            prices=_run_prices(candidate, settings.prices),
        )
    if markdown:
        sys.stdout.write(comparison_markdown(comparison))
    else:
        print_comparison(comparison, console)
    if json_path is not None:
        write_comparison_json(json_path, comparison)
        # With --markdown, stdout is the comment itself: say it elsewhere.
        (errors if markdown else console).print(f"[dim]wrote[/] {escape(str(json_path))}")


@app.command("gate")
def gate_command(
    base_run: BaseRunArgument,
    candidate_run: CandidateRunArgument,
    policy: Annotated[
        Path | None,
        typer.Option(
            "--policy",
            metavar="FILE",
            help="A gate policy (YAML): thresholds per scorer, cost, latency, significance.",
        ),
    ] = None,
    allow_subset: Annotated[
        bool,
        typer.Option(
            "--allow-subset",
            help="The candidate was run on a subset of the base's cases on purpose: cases it "
            "did not run are not counted as unjudged (it must still judge the ones it ran).",
        ),
    ] = False,
    store: StoreOption = None,
) -> None:
    """Exit 1, saying why, when the candidate run may not replace the base: a case newly fails
    avoids_forbidden_text, a scorer regressed significantly, the candidate judged fewer cases
    than the base (its trials timed out, or it left cases out), or a policy threshold is
    broken. Exit 0 otherwise, saying how close each rule came."""
    rules = load_policy(policy) if policy is not None else GatePolicy()
    if allow_subset:
        rules = rules.model_copy(update={"allow_subset": True})
    settings = _global_settings(store)
    with RunStore(settings.store, create=False) as run_store:
        candidate = run_store.get_info(run_store.resolve_run_id(candidate_run))
        comparison = compare_runs(
            run_store,
            base_run,
            candidate.run_id,
            passing=rules.trial_passes,
            prices=_run_prices(candidate, settings.prices),
            passing_field="trial_passes",
        )
    verdict = evaluate_gate(comparison, rules)
    print_verdict(verdict, console)
    if not verdict.passed:
        raise typer.Exit(1)


@app.command()
def report(
    run_id: RunIdArgument,
    html_path: HtmlOption = None,
    junit_path: JunitOption = None,
    store: StoreOption = None,
    passing: PassingOption = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            metavar="RUN_ID",
            help="Show the diff against this run (an id, a unique prefix or `latest`), as "
            "`agenteval compare BASELINE RUN_ID` computes it.",
        ),
    ] = None,
) -> None:
    """Write a stored run's report: one self-contained HTML page that works offline
    (`--html FILE`), JUnit XML for CI (`--junit FILE`), or both."""
    _junit_target(junit_path)
    if passing:
        with RunStore(_store_path(store), create=False) as run_store:
            named = run_store.get_info(run_store.resolve_run_id(run_id))
        known = scorer_references(named)
        if known:  # a run stored before agenteval kept its names is checked by none
            check_passing(_rubrics(passing), known, field="--passing")
    if html_path is None and junit_path is not None:
        _junit_report(run_id, store, junit_path)
        return
    if html_path is None:
        raise ConfigError(
            "no report to write",
            field="--html",
            hint=f"agenteval report {run_id} --html report.html",
        )
    _check_writable(html_path, "--html")
    settings = _global_settings(store)
    with RunStore(settings.store, create=False) as run_store:
        info = run_store.get_info(run_store.resolve_run_id(run_id))
        prices = _run_prices(info, settings.prices)
        summary = summarize(
            run_store.iter_results(info.run_id),
            prices=prices,
            passing=_rubrics(passing) or info.settings.get("passing"),
        )
        missing = run_store.missing_trials(info.run_id)
        note = _missing_note(info, missing)
        if note is not None:
            _warn(f"{note}; the report shows its {summary.trials} stored trials")
        diff = (
            None
            if baseline is None
            # None falls back to this run's own stored `passing`, as the summary did; only
            # names the user gave now are checked against the runs' scorers.
            else compare_runs(
                run_store, baseline, info.run_id, passing=_rubrics(passing), prices=prices
            )
        )
        write_html(
            html_path,
            info,
            summary,
            run_store.iter_results(info.run_id),
            prices=prices,
            diff=diff,
            missing=missing,
        )
    console.print(f"[dim]wrote[/] {escape(str(html_path))}")
    if junit_path is not None:
        _junit_report(run_id, store, junit_path, warn=False)


def _run_prices(info: RunInfo, prices: PriceTable | None) -> PriceTable | None:
    """The prices to report a stored run with: the current directory's agenteval.yaml, else
    the config the run was started from (for a case file, the agenteval.yaml beside it), when
    it is still there."""
    if any(Path(name).is_file() for name in CONFIG_NAMES) or not info.target:
        return prices
    target = Path(info.target)
    if info.dataset is not None and Path(info.dataset).name == target.name:  # a case file
        target = _config_beside(target) or target
    if not (target.is_file() and target.name in CONFIG_NAMES):
        return prices
    found = find_target(target)
    return resolve_settings(found.config, found.base_dir, config_file=found.path).prices


@app.command()
def schema() -> None:
    """Print the JSON Schema of a case file."""
    sys.stdout.write(json.dumps(case_file_schema(), indent=2) + "\n")


def _optional_resume_value(args: list[str]) -> list[str]:
    """`--resume` alone means the latest unfinished run; `--resume RUN_ID` names one. What
    follows `--resume` is a run id unless it is an option or an existing file or folder (then
    it is the TARGET)."""
    out = list(args)
    for i, arg in enumerate(out):
        if arg != "--resume":
            continue
        following = out[i + 1] if i + 1 < len(out) else None
        if following is None or following.startswith("-") or Path(following).exists():
            out[i] = "--resume=latest"
    return out


def _debug_anywhere(args: list[str]) -> list[str]:
    """`--debug` works wherever it is written, before or after the command."""
    if "--debug" in args:
        _state["debug"] = True
    return [arg for arg in args if arg != "--debug"]


def main(argv: list[str] | None = None) -> None:
    """The console script: run the app, printing user mistakes as one message (exit 2)."""
    args = _optional_resume_value(_debug_anywhere(sys.argv[1:] if argv is None else argv))
    try:
        # Not standalone: click would turn Ctrl-C into a bare "Aborted!".
        code = app(args=args, prog_name="agenteval", standalone_mode=False)
    except AgentEvalError as exc:
        if _state["debug"]:
            traceback.print_exc()
        errors.print(Text.assemble(("error: ", "bold red"), exc.render()), highlight=False)
        raise SystemExit(2) from None
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except Exception as exc:
        # click's usage errors (its exception classes move between typer versions).
        show = getattr(exc, "show", None)
        if callable(show) and isinstance(getattr(exc, "exit_code", None), int):
            show()
            raise SystemExit(exc.exit_code) from None  # type: ignore[attr-defined]
        raise
    if isinstance(code, int) and code != 0:
        raise SystemExit(code)


if __name__ == "__main__":
    main()
