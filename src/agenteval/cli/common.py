"""What every command of the `agenteval` CLI shares: the two consoles, the `--debug` switch, the
exit codes, and how a warning, an error and a run with trials missing are written."""

from __future__ import annotations

import dataclasses

import typer
from rich.console import Console
from rich.text import Text

from agenteval.run import Run

__all__ = [
    "FAILURE_EXIT",
    "INCOMPLETE_EXIT",
    "INTERRUPTED_EXIT",
    "MISTAKE_EXIT",
    "DebugSwitch",
    "console",
    "debug",
    "errors",
    "print_error",
    "refuse_incomplete",
    "warn",
]

console = Console()
"""Standard output: summaries, tables, what was written."""
errors = Console(stderr=True)
"""Standard error: warnings, errors, where settings came from."""


@dataclasses.dataclass
class DebugSwitch:
    """`--debug` (anywhere on the line): show tracebacks for every error."""

    on: bool = False


debug = DebugSwitch()


FAILURE_EXIT = 1
"""A gate refusing the candidate run, or a run stopped by something not the user's mistake."""
MISTAKE_EXIT = 2
"""A mistake in the input: a usage error, a bad config or flag, a judge that cannot run."""
INCOMPLETE_EXIT = 3
"""`agenteval run`, `score`, `rescore` and `judge` exit with this when the run they summarise
has trials missing: not a verdict on the agent (0), not a gate refusing (1), not a mistake in
the input (2), not Ctrl-C (130), but a run to resume. (Rescoring such a run is legitimate and
its scores are stored; the exit code only refuses to call the summary a whole run's.)"""
INTERRUPTED_EXIT = 130
"""Ctrl-C: every finished trial is stored."""


def warn(message: str) -> None:
    """`warning: MESSAGE` on standard error."""
    errors.print(Text.assemble(("warning: ", "bold yellow"), message), highlight=False)


def print_error(message: str) -> None:
    """`error: MESSAGE` on standard error (plain text, never markup)."""
    errors.print(Text.assemble(("error: ", "bold red"), message), highlight=False)


def refuse_incomplete(result: Run, hint: str) -> None:
    """Exit 3, saying what is missing, when the run ended without every trial stored."""
    if result.complete:
        return
    missing = result.missing
    what = (
        f"the summary covers {missing.stored} of {missing.expected} trials; {missing.describe()}"
        if missing is not None
        else "it is not finished; the summary covers only the stored trials"
    )
    print_error(f"run {result.run_id} did not finish: {what}\n  hint: {hint}")
    raise typer.Exit(INCOMPLETE_EXIT)
