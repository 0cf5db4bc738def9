"""A command's run while it runs: its coroutine driven to the end, its progress bar, and the one
line it ends in when Ctrl-C or anything but a user's mistake stops it."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from agenteval.cli.common import (
    FAILURE_EXIT,
    INTERRUPTED_EXIT,
    console,
    debug,
    errors,
    print_error,
)
from agenteval.engine.scheduler import WorkerLostError
from agenteval.errors import AgentEvalError
from agenteval.records import RunInfo, TrialResult

__all__ = ["LiveProgress", "run_async", "stoppable"]

T = TypeVar("T")


class LiveProgress:
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
        where = _executor_words(info.settings.get("executor"))
        console.print(
            f"[dim]{label} run[/] [bold cyan]{info.run_id}[/] [dim]({done} of {total} trials already stored){where}[/]"
            if done
            else f"[dim]run[/] [bold cyan]{info.run_id}[/][dim]{where}[/]"
        )
        self.task = self.progress.add_task("trials", total=total, completed=done, failed=0)

    def advance(self, result: TrialResult) -> None:
        if result.trial.failure is not None:
            self.failed += 1
        if self.task is not None:
            self.progress.update(self.task, advance=1, failed=self.failed)

    def stop(self) -> None:
        self.progress.stop()


def _executor_words(stored: Any) -> str:
    """Where the run's trials run, when not in this process: ` · in 8 worker processes`."""
    if not isinstance(stored, dict) or stored.get("kind") in (None, "local"):
        return ""
    workers = stored.get("workers")
    if stored["kind"] == "process":
        if not workers:
            return " · in worker processes"
        return f" · in {workers} worker process{'es' * (workers != 1)}"
    return f" · on Ray, {workers} worker{'s' * (workers != 1)}" if workers else " · on Ray"


def run_async(make: Callable[[], Any]) -> Any:
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


def stoppable(
    call: Callable[[], T], progress: LiveProgress, *, interrupted: str, stopped: str
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
        raise typer.Exit(INTERRUPTED_EXIT) from None
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
    if debug.on:
        traceback.print_exception(exc)
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
        leaf = leaf.exceptions[0]
    if isinstance(leaf, Exception) and not isinstance(leaf, WorkerLostError):
        then += " (a failure of agenteval's own: `--debug` shows where; please report it)"
    print_error(
        f"the run stopped: {type(leaf).__name__}: {leaf}; every finished trial is stored; {then}"
    )
    return typer.Exit(FAILURE_EXIT)
