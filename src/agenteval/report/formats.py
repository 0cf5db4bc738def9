"""Formatting shared by the terminal and the HTML report that no other report module needs
first (here, not in `terminal.py`, so the report modules that `terminal.py` itself uses can
format amounts without importing it)."""

from __future__ import annotations

__all__ = ["format_usd"]


def format_usd(value: float | None) -> str:
    """Dollars: four decimals under $1, else cents; a dash for no price."""
    if value is None:
        return "—"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"
