"""Simulated conversations in the terminal: the summary's section (end reasons, user turns,
turns to goal, the simulator's tokens and cost) and, with `--verbose` (`agenteval show -v`,
`run -v`), each conversation turn by turn, every user message marked by who wrote it.

Everything shown is `Text`, never console markup, so a message holding `[red]` prints as
written; control characters (an escape sequence a simulated message could carry) are shown as
`\\xNN` rather than sent to the terminal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.console import Console
from rich.text import Text

from agenteval.records import TrialResult
from agenteval.report.formats import format_usd
from agenteval.report.simulation import END_REASON_WORDS, SimulationStats, turn_tool_calls
from agenteval.report.summary import Summary
from agenteval.trace import SimulatedConversation

__all__ = ["conversation_lines", "print_conversations", "simulation_lines"]

MAX_SHOWN = 20
"""Conversations `--verbose` prints in full; the rest are counted (the HTML report has all)."""
_MAX_MESSAGE = 600
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SOURCE_STYLE = {"written": "dim", "simulated": "magenta", "scripted": "cyan"}


def _plain(text: str, limit: int = _MAX_MESSAGE) -> str:
    """`text` safe for a terminal line: control characters escaped, clipped to `limit`."""
    shown = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    if len(shown) > limit:
        shown = shown[:limit] + f"… ({len(shown) - limit:,} more characters)"
    return shown


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def simulation_lines(summary: Summary) -> list[Text]:
    """The summary's "Simulated conversations" section; no line without one."""
    stats = summary.simulation
    if stats is None:
        return []
    lines = [
        Text("Simulated conversations", style="bold"),
        Text(
            f"  {_plural(stats.trials, 'conversation')} · user turns: mean {_number(stats.user_turns_mean)}, "
            f"max {stats.user_turns_max} · users: " + ", ".join(_plain(u, 80) for u in stats.users)
        ),
        _reasons_line(stats),
        Text.assemble(
            f"  turns to goal: mean {_number(stats.turns_to_goal_mean)}, median "
            f"{_number(stats.turns_to_goal_median)}",
            (
                f"  (over the {stats.goal_achieved} conversations that reached their goal; "
                "reported, never a pass or a fail)",
                "dim",
            ),
        ),
        _simulator_line(stats, summary),
    ]
    return lines


def _reasons_line(stats: SimulationStats) -> Text:
    line = Text("  ended: ")
    for index, (reason, count) in enumerate(stats.end_reasons.items()):
        line.append(", " if index else "")
        style = "green" if reason == "goal_achieved" and count else "dim" if not count else ""
        line.append(f"{reason} {count}", style=style)
    return line


def _simulator_line(stats: SimulationStats, summary: Summary) -> Text:
    tokens = stats.usage
    if not stats.model_calls and not stats.cached_calls and stats.cost_usd is None:
        # Scripted users (or user objects) only: no model played a user, nothing was spent.
        return Text("  simulator: no model calls (scripted users)", style="dim")
    cached = f", {stats.cached_calls} from its cache" if stats.cached_calls else ""
    return Text.assemble(
        f"  simulator: {stats.model_calls} model calls{cached}, {tokens.input_tokens:,} tokens "
        f"in, {tokens.output_tokens:,} out, {format_usd(stats.cost_usd)}",
        (
            "  (apart from the agent's and the judge's; the run's total cost "
            f"{format_usd(summary.cost.total_usd)} includes it)",
            "dim",
        ),
    )


def conversation_lines(result: TrialResult) -> list[Text]:
    """One trial's simulated conversation, turn by turn; no line when it had none."""
    trial = result.trial
    conversation = trial.simulation
    if conversation is None:
        return []
    lines = [
        Text.assemble(
            (_plain(result.case.id, 120), "bold"),
            (f" #{trial.trial}", "dim"),
            ("  user ", "dim"),
            _plain(conversation.user, 120),
            (f"  ·  {_plural(len(conversation.turns), 'user turn')}", "dim"),
        )
    ]
    simulation = result.case.user_simulation
    if simulation is not None and simulation.goal:
        lines.append(Text.assemble(("   goal: ", "dim"), _plain(simulation.goal)))
    calls = turn_tool_calls(trial)
    for index, turn in enumerate(conversation.turns):
        lines.append(
            Text.assemble(
                (f"   {index + 1}. user ", "bold"),
                (f"[{turn.source}]", _SOURCE_STYLE.get(turn.source, "")),
                " ",
                _plain(turn.user),
            )
        )
        if calls is not None and calls[index]:
            names = ", ".join(
                _plain(call.name, 80) + ("" if call.ok else " (error)") for call in calls[index]
            )
            lines.append(Text.assemble(("      tools: ", "dim"), names))
        answer = "(no answer)" if turn.agent is None else _plain(turn.agent)
        lines.append(Text.assemble(("      agent: ", "dim"), answer))
    lines.append(_end_line(conversation))
    return lines


def _end_line(conversation: SimulatedConversation) -> Text:
    reason = conversation.end_reason
    line = Text("   ended: ", style="dim")
    if reason is None:
        line.append("no end reason recorded")
        return line
    line.append(reason.value, style="green" if reason.value == "goal_achieved" else "yellow")
    line.append(f" ({END_REASON_WORDS.get(reason.value, reason.value)})", style="dim")
    if conversation.end_detail:
        # A failed trial's detail is its failure's cause; any other is the user's own word.
        failed = reason.value == "trial_failed"
        line.append(" · failure: " if failed else " · the user: ", style="dim")
        line.append(_plain(conversation.end_detail))
    return line


def print_conversations(results: Iterable[TrialResult], console: Console | None = None) -> None:
    """Print each trial's simulated conversation (the first `MAX_SHOWN`, the rest counted);
    nothing for a run without one."""
    console = console or Console()
    shown = more = 0
    for result in results:
        if result.trial.simulation is None:
            continue
        if shown >= MAX_SHOWN:
            more += 1
            continue
        if not shown:
            console.print()
            console.print(Text("Simulated conversations, turn by turn", style="bold"))
        shown += 1
        for line in conversation_lines(result):
            console.print(line)
    if more:
        console.print(
            Text(f"… {more} more conversations: the HTML report (--html) shows them all", "dim")
        )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
