"""The failing trials in the terminal (`agenteval show --verbose`, `run -v`): each trial that
failed or has a failing score, with the reasons, and what its environment adds (the calls a mock
or a replay answered, the final state)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from rich.console import Console
from rich.text import Text

from agenteval.records import TrialResult
from agenteval.trace import Trial

__all__ = ["environment_lines", "print_failing"]


def print_failing(results: Iterable[TrialResult], console: Console | None = None) -> None:
    """Print each trial that failed or has a failing score, with the reasons."""
    console = console or Console()
    header = False
    for result in results:
        trial = result.trial
        failing = {
            name: score
            for name, score in result.scores.items()
            if score.passed is False or score.error is not None
        }
        if trial.failure is None and not failing:
            continue
        if not header:
            console.print(Text("Failing trials", style="bold"))
            header = True
        line = Text.assemble((result.case.id, "bold"), (f" #{trial.trial}", "dim"))
        if trial.failure is not None:
            line.append(f"  {trial.failure.cause.value}: {trial.failure.message}", style="red")
        console.print(line)
        for name, score in failing.items():
            why = score.error or score.reason or ""
            console.print(Text.assemble(("   ✗ ", "red"), (name, ""), (f"  {why}", "dim")))
        for line in environment_lines(trial):
            console.print(line)


_MOCKED_WORDS = {"mock": "mocked", "replay": "replayed"}
_MAX_CALLS_LISTED = 12
_MAX_STATE_CHARS = 400


def _error_kind(error: str) -> str:
    # `InjectedTimeout: charge_card: the call timed out`: the type says enough on this line
    # (the scorers' reasons above quote the message).
    head, sep, _ = error.partition(": ")
    return head if sep and head.isidentifier() else error[:40]


def environment_lines(trial: Trial) -> list[Text]:
    """What a failing trial's environment adds under it: its tool calls when a mock or a replay
    answered any (so a failure is read against the world the agent was given), and the final
    state when it has one (what `state_match` compared)."""
    lines: list[Text] = []
    if any(call.mocked for call in trial.tool_calls):
        line = Text("   calls: ", style="dim")
        for index, call in enumerate(trial.tool_calls[:_MAX_CALLS_LISTED]):
            line.append(", " if index else "", style="dim")
            line.append(call.name)
            notes = [_MOCKED_WORDS[call.mocked]] if call.mocked else []
            if call.error is not None:
                notes.append(f"error: {_error_kind(call.error)}")
            if notes:
                line.append(f" ({'; '.join(notes)})", style="magenta" if call.mocked else "dim")
        extra = len(trial.tool_calls) - _MAX_CALLS_LISTED
        if extra > 0:
            line.append(f", … {extra} more", style="dim")
        lines.append(line)
    if trial.state is not None:
        text = json.dumps(trial.state, ensure_ascii=False, sort_keys=True, default=repr)
        if len(text) > _MAX_STATE_CHARS:
            text = text[: _MAX_STATE_CHARS - 1] + "…"
        lines.append(Text.assemble(("   final state: ", "dim"), (text, "")))
    return lines
