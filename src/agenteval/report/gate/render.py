"""The gate's verdict for people: each rule with how close it came, then the decision."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from agenteval.report.gate.rules import GateVerdict

__all__ = ["print_verdict"]


def print_verdict(verdict: GateVerdict, console: Console | None = None) -> None:
    """Print each rule with how close it came, then the decision."""
    console = console or Console()
    for outcome in verdict.rules:
        if outcome.ignored:  # shown, never blocking: neither a tick nor a cross
            mark = ("- ", "dim")
        else:
            mark = ("✓ ", "green") if outcome.passed else ("✗ ", "bold red")
        console.print(
            Text.assemble(mark, (outcome.rule, "bold"), ("  " + outcome.detail, "")),
            highlight=False,
        )
    broken = verdict.broken
    checked = [outcome for outcome in verdict.rules if not outcome.ignored]
    ignored = len(verdict.rules) - len(checked)
    aside = f" ({ignored} ignored)" if ignored else ""
    if broken:
        console.print(
            Text.assemble(
                ("gate failed", "bold red"),
                f": {len(broken)} of {len(checked)} rules broken{aside} "
                f"(candidate {verdict.candidate_run} against base {verdict.base_run})",
            ),
            highlight=False,
        )
    else:
        console.print(
            Text.assemble(
                ("gate passed", "bold green"),
                f": all {len(checked)} rules held{aside} "
                f"(candidate {verdict.candidate_run} against base {verdict.base_run})",
            ),
            highlight=False,
        )
