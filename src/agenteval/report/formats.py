"""Formatting shared by the terminal and the HTML report that no other report module needs
first (here, not in `terminal.py`, so the report modules that `terminal.py` itself uses can
format amounts without importing it)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["format_usd", "usage_missing_note"]


def format_usd(value: float | None) -> str:
    """Dollars: four decimals under $1, else cents; a dash for no price."""
    if value is None:
        return "—"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def usage_missing_note(models: Sequence[str], *, who: str = "") -> str:
    """The note for models whose calls' token usage was not recorded
    (`CostStats.models_without_usage`; `who="judge "` for `judge_models_without_usage`,
    `"simulator "` for `SimulationStats.models_without_usage`): their cost is missing from the
    totals, and how to record it."""
    return (
        f"no token usage recorded for some {who}calls to " + ", ".join(models) + ": their "
        "cost is missing, not zero (a streamed OpenAI chat completion reports its usage only "
        'with stream_options={"include_usage": True}; a server or proxy may leave it out)'
    )
