"""Reading stored runs: `agenteval runs` (the list), `agenteval show` (a run's summary) and
`agenteval report` (its HTML page and JUnit XML)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Column, Table
from rich.text import Text

from agenteval.catalog import scorer_references
from agenteval.cli.common import console, warn
from agenteval.cli.options import Flags, RunIdArgument, names, with_options
from agenteval.cli.output import (
    check_writable,
    junit_target,
    print_run,
    write_junit_of,
    wrote,
    wrote_junit,
)
from agenteval.cli.settings import global_settings, run_prices, store_path
from agenteval.errors import ConfigError
from agenteval.owners import owner_gone
from agenteval.pricing import PriceTable
from agenteval.records import MissingTrials, RunInfo, RunStatus, how_to_complete
from agenteval.report.compare import compare_runs
from agenteval.report.html import write_html
from agenteval.report.junit import write_junit
from agenteval.report.statistics import check_passing
from agenteval.report.summary import Summary, summarize
from agenteval.run import Run
from agenteval.store import RunStore

__all__ = ["list_runs", "report", "show"]


@with_options("store limit")
def list_runs(
    limit: Annotated[
        int,
        typer.Option(
            metavar="N",
            show_default=False,
            help="How many runs to list, newest first (default: 20).",
        ),
    ] = 20,
    *,
    flags: Flags,
) -> None:
    """List the stored runs, newest first."""
    path = store_path(flags.store)
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
            row.shown_status,
            f"{row.trials_done}/{row.trials_total}",
            Text(row.target or ""),  # a path like `cases[v2].yaml` is not markup
        )
    console.print(table)


def _read_run(
    run_store: RunStore, run_id: str, prices: PriceTable | None, passing: list[str] | None
) -> tuple[RunInfo, PriceTable | None, Summary, MissingTrials]:
    """A stored run's record, the prices to report it with (`run_prices`), its summary (by
    `passing`, else the run's own setting) and the trials it lacks."""
    info = run_store.get_info(run_store.resolve_run_id(run_id))
    prices = run_prices(info, prices)
    summary = summarize(
        run_store.iter_results(info.run_id),
        prices=prices,
        passing=passing or info.settings.get("passing"),
    )
    return info, prices, summary, run_store.missing_trials(info.run_id)


@with_options("store json_path junit_path verbose html_path")
def show(run_id: RunIdArgument, *, flags: Flags) -> None:
    """Print a stored run's summary."""
    junit_target(flags.junit_path)
    check_writable(flags.html_path, "--html")
    settings = global_settings(flags.store)
    path = settings.store
    with RunStore(path, create=False) as run_store:
        info, prices, summary, missing = _read_run(run_store, run_id, settings.prices, None)
    note = _missing_note(info, missing)
    if note is not None:
        warn(note)
    shown = Run(info, summary, path, missing)
    print_run(shown, flags, prices)
    if flags.verbose:
        _print_references(info)
    write_junit_of(flags.junit_path, shown)


def _missing_note(info: RunInfo, missing: MissingTrials) -> str | None:
    """What `show` and `report` say about a run with trials missing (None when it has all),
    whatever its stored status says: an older agenteval could mark a run finished with trials
    lost. The hint is a command that works: for a pytest session's run, pytest again."""
    then = how_to_complete(info.target, info.run_id)
    if missing.count:
        owner = info.settings.get("owner")
        state = {
            RunStatus.RUNNING: f"was interrupted (its process {owner['pid']} is gone)"
            if isinstance(owner, dict) and owner_gone(owner)
            else "is unfinished",
            RunStatus.PARTIAL: "is partial (its session ran only some of its cases)",
        }.get(info.status, "is marked finished but")
        return f"run {info.run_id} {state}: {missing.describe()}; {then}"
    if info.status is RunStatus.RUNNING:
        return (
            f"run {info.run_id} is stopped: every trial is stored ({missing.stored}), but it "
            f"was never marked finished (its process stopped after its last trial?); {then} "
            "marks it finished without running a trial"
        )
    return None


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


@with_options("html_path junit_path store passing baseline")
def report(
    run_id: RunIdArgument,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            metavar="RUN_ID",
            help="Show the diff against this run (an id, a unique prefix or `latest`), as "
            "`agenteval compare BASELINE RUN_ID` computes it.",
        ),
    ] = None,
    *,
    flags: Flags,
) -> None:
    """Write a stored run's report: one self-contained HTML page that works offline
    (`--html FILE`), JUnit XML for CI (`--junit FILE`), or both."""
    junit_target(flags.junit_path)
    passing = names(flags.passing)
    if flags.passing:
        with RunStore(store_path(flags.store), create=False) as run_store:
            named = run_store.get_info(run_store.resolve_run_id(run_id))
        known = scorer_references(named)
        if known:  # a run stored before agenteval kept its names is checked by none
            check_passing(passing, known, field="--passing")
    if flags.html_path is None and flags.junit_path is not None:
        _junit_report(run_id, flags.store, flags.junit_path, passing)
        return
    if flags.html_path is None:
        raise ConfigError(
            "no report to write",
            field="--html",
            hint=f"agenteval report {run_id} --html report.html",
        )
    check_writable(flags.html_path, "--html")
    settings = global_settings(flags.store)
    with RunStore(settings.store, create=False) as run_store:
        info, prices, summary, missing = _read_run(run_store, run_id, settings.prices, passing)
        note = _missing_note(info, missing)
        if note is not None:
            warn(f"{note}; the report shows its {summary.trials} stored trials")
        diff = (
            None
            if baseline is None
            # None falls back to this run's own stored `passing`, as the summary did; only
            # names the user gave now are checked against the runs' scorers.
            else compare_runs(run_store, baseline, info.run_id, passing=passing, prices=prices)
        )
        write_html(
            flags.html_path,
            info,
            summary,
            run_store.iter_results(info.run_id),
            prices=prices,
            diff=diff,
            missing=missing,
        )
    wrote(flags.html_path)
    if flags.junit_path is not None:
        _junit_report(run_id, flags.store, flags.junit_path, passing, warn_missing=False)


def _junit_report(
    run_id: str,
    store: Path | None,
    path: Path,
    passing: list[str] | None,
    *,
    warn_missing: bool = True,
) -> None:
    """`agenteval report RUN_ID --junit FILE`: a stored run as JUnit XML, its cases judged by
    `passing` (None: the run's own setting), as the HTML report is (`warn_missing`: say what
    trials the run lacks, unless the HTML report just said it)."""
    with RunStore(store_path(store), create=False) as run_store:
        info = run_store.get_info(run_store.resolve_run_id(run_id))
        missing = run_store.missing_trials(info.run_id)
        note = _missing_note(info, missing) if warn_missing else None
        if note is not None:
            warn(note)
        totals = write_junit(
            path, info, run_store.iter_results(info.run_id), missing, passing or None
        )
    wrote_junit(path, totals)
