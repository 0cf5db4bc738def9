"""The `agenteval` command itself: the typer app with its root options (`--version`,
`--debug`), its commands in the order `--help` lists them, and `main`, the console script, which
turns a user's mistake into one message (exit 2)."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Annotated

import typer

from agenteval.cli.case_files import schema
from agenteval.cli.common import MISTAKE_EXIT, console, print_error
from agenteval.cli.common import debug as debug_switch
from agenteval.cli.comparing import compare_command, gate_command
from agenteval.cli.reading import list_runs, report, show
from agenteval.cli.rescoring import judge_command, rescore
from agenteval.cli.running import run, score
from agenteval.cli.viewing import view_command
from agenteval.errors import AgentEvalError
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


def _print_version(value: bool) -> None:
    # `is True`: an older typer beside click 8.2+ hands every command click's unset sentinel,
    # which is truthy, and `if value` then ended every command, `gate` too, with exit 0.
    if value is True:
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
    debug_switch.on = debug_switch.on or debug


# The commands, in the order `agenteval --help` lists them.
app.command()(run)
app.command()(rescore)
app.command()(score)
app.command("judge")(judge_command)
app.command("runs")(list_runs)
app.command()(show)
app.command("compare")(compare_command)
app.command("gate")(gate_command)
app.command()(report)
app.command("view")(view_command)
app.command()(schema)


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
        debug_switch.on = True
    return [arg for arg in args if arg != "--debug"]


def main(argv: list[str] | None = None) -> None:
    """The console script: run the app, printing user mistakes as one message (exit 2)."""
    args = _optional_resume_value(_debug_anywhere(sys.argv[1:] if argv is None else argv))
    try:
        # Not standalone: click would turn Ctrl-C into a bare "Aborted!".
        code = app(args=args, prog_name="agenteval", standalone_mode=False)
    except AgentEvalError as exc:
        if debug_switch.on:
            traceback.print_exc()
        print_error(exc.render())
        raise SystemExit(MISTAKE_EXIT) from None
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except Exception as exc:
        # click's usage errors (its exception classes move between typer versions).
        show_error = getattr(exc, "show", None)
        if callable(show_error) and isinstance(getattr(exc, "exit_code", None), int):
            show_error()
            raise SystemExit(exc.exit_code) from None  # type: ignore[attr-defined]
        raise
    if isinstance(code, int) and code != 0:
        raise SystemExit(code)
