"""What a command writes about a run: the summary, the failing trials, the JSON, HTML and JUnit
files (their paths refused up front when they cannot be written), where the run is stored, and
the exit that refuses a run with trials missing."""

from __future__ import annotations

import os
from pathlib import Path

from rich.markup import escape

from agenteval.cli.common import console, refuse_incomplete
from agenteval.cli.options import Flags
from agenteval.cli.settings import store_flag
from agenteval.errors import ConfigError
from agenteval.pricing import PriceTable
from agenteval.report.conversations import print_conversations
from agenteval.report.failing import print_failing
from agenteval.report.json_document import write_run_json
from agenteval.report.junit import JUnitTotals, write_junit
from agenteval.report.terminal import print_summary
from agenteval.run import Run

__all__ = [
    "check_writable",
    "finish",
    "junit_target",
    "print_run",
    "stored_in",
    "write_junit_of",
    "wrote",
    "wrote_junit",
]


def check_writable(path: Path | None, flag: str = "--json") -> None:
    """Refuse an output path up front, rather than after the whole run (None: not asked for)."""
    if path is None:
        return
    if path.is_dir():
        example = "report.html" if flag == "--html" else "run.json"
        raise ConfigError(
            f"{path} is a folder", field=flag, hint=f"give a file name, e.g. {example}"
        )
    folder = path.parent if str(path.parent) else Path()
    if folder.exists() and not os.access(folder, os.W_OK):
        raise ConfigError(f"cannot write in {folder}", field=flag, hint="choose another place")


def junit_target(path: Path | None) -> None:
    """Refuse a `--junit` path up front, rather than after the whole run."""
    if path is not None and path.is_dir():
        raise ConfigError(
            f"{path} is a folder", field="--junit", hint="give a file name, e.g. junit.xml"
        )


def wrote(path: Path) -> None:
    console.print(f"[dim]wrote[/] {escape(str(path))}")


def print_run(run: Run, flags: Flags, prices: PriceTable | None = None) -> None:
    """The summary; with `--verbose` the failing trials and each simulated conversation; with
    `--json` the JSON document; with `--html` the HTML page."""
    print_summary(run.summary, run.info, console)
    if flags.verbose:
        print_failing(run.iter_results(), console)
        print_conversations(run.iter_results(), console)
    if flags.json_path is not None:
        write_run_json(flags.json_path, run.info, run.summary, run.iter_results(), run.missing)
        wrote(flags.json_path)
    if flags.html_path is not None:
        run.to_html(flags.html_path, prices=prices)
        wrote(flags.html_path)


def stored_in(store: Path, run_id: str, flag: str) -> None:
    """Where the run went, and the `agenteval show` that finds it from here (`flag`: the
    `store_flag` of `store`)."""
    show = f"agenteval show {run_id}{flag}"
    console.print(f"[dim]stored in {escape(str(store))} · `{escape(show)}` shows it again[/]")


def write_junit_of(path: Path | None, run: Run) -> None:
    """With `--junit FILE`, the run as JUnit XML: one test case per eval case."""
    if path is None:
        return
    wrote_junit(path, write_junit(path, run.info, run.iter_results(), run.missing))


def wrote_junit(path: Path, totals: JUnitTotals) -> None:
    console.print(
        f"[dim]wrote[/] {escape(str(path))} [dim]({totals.tests} cases: {totals.failures} "
        f"failing, {totals.errors} with errors, {totals.skipped} skipped)[/]"
    )


def finish(
    result: Run,
    flags: Flags,
    hint: str,
    *,
    prices: PriceTable | None = None,
    store: Path | None = None,
    flag: str | None = None,
) -> None:
    """The end of a command that ran or scored a run (`run`, `score`, `rescore`, `judge`): the
    run printed and written as asked, where it is stored (with `store`; `flag`: its
    `store_flag`, when the command has it already), and exit 3 with `hint` when it lacks
    trials."""
    print_run(result, flags, prices)
    if store is not None:
        stored_in(store, result.run_id, store_flag(store) if flag is None else flag)
    write_junit_of(flags.junit_path, result)
    refuse_incomplete(result, hint)
