"""The page's charts, drawn by the template as inline SVG from what is computed here: a bar per
scorer's pass rate with its interval, the latency histogram (total and excluding waits), and
the cost bars."""

from __future__ import annotations

import math
from dataclasses import dataclass

from agenteval.report.summary import Summary
from agenteval.report.terminal import format_interval, format_usd, rate_verdict

__all__ = ["Bar", "Histogram", "cost_bars", "histogram", "score_bars"]


@dataclass(frozen=True)
class Bar:
    """One scorer's pass rate with its 95% interval, as its bar shows it."""

    label: str
    rate: float
    low: float
    high: float
    text: str
    verdict: str
    """`good`, `warn` or `bad`: the class the score tables give the same rate."""


def score_bars(summary: Summary) -> list[Bar]:
    """A bar per scorer with a pass rate, in the summary's section order."""
    bars = []
    for section in summary.sections:
        for name in section.scorers:
            stats = summary.scorers[name]
            if stats.pass_rate is None or stats.interval is None:
                continue
            bars.append(
                Bar(
                    label=name,
                    rate=stats.pass_rate,
                    low=stats.interval.low,
                    high=stats.interval.high,
                    text=f"{stats.pass_rate:.0%} {format_interval(stats.interval)} n={stats.scored}",
                    verdict=rate_verdict(stats.pass_rate),
                )
            )
    return bars


@dataclass(frozen=True)
class Histogram:
    """The latency histogram: bins, axis ticks and the p50 and p95 markers."""

    bins: list[tuple[float, float, int, int]]
    """(x0, x1, total count, excluding-waits count) in chart units 0..1."""
    ticks: list[tuple[float, str]]
    peak: int
    markers: list[tuple[float, str]]
    log: bool


def _decimals_for(value: float, digits: int = 1) -> int:
    """Decimals that show `digits` significant digits of `value` (none for a whole number)."""
    if value <= 0:
        return 0
    return max(0, digits - 1 - math.floor(math.log10(value)))


@dataclass(frozen=True)
class _Axis:
    """How the latency axis writes seconds: in one unit for the whole axis (ms when every value
    is under a second, else s), so a reader never compares `900 ms` with `1.00 s`. On a linear
    axis every tick has the same decimals, the fewest that tell neighbouring ticks apart; a
    log axis's ticks (1, 2 or 5 times a power of ten) are written exactly."""

    unit: str
    scale: float

    @classmethod
    def for_range(cls, top: float) -> _Axis:
        return cls("ms", 1000.0) if top < 1 else cls("s", 1.0)

    def labels(self, ticks: list[float], log: bool) -> list[str]:
        values = [t * self.scale for t in ticks]
        if log:
            return [f"{v:,.{_decimals_for(v)}f} {self.unit}" for v in values]
        step = (values[-1] - values[0]) / max(1, len(values) - 1)
        decimals = _decimals_for(step)
        while len({f"{v:.{decimals}f}" for v in values}) < len(values) and decimals < 6:
            decimals += 1
        return [f"{v:,.{decimals}f} {self.unit}" for v in values]

    def value(self, seconds: float) -> str:
        """A marked value (p50, p95): three significant digits in the axis's unit."""
        v = seconds * self.scale
        return f"{v:,.{_decimals_for(v, 3)}f} {self.unit}"


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Powers of ten within the range, or 1, 2 and 5 times them when fewer than three fit."""
    exponents = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    for steps in ((1.0,), (1.0, 2.0, 5.0)):
        ticks = [m * 10.0**e for e in exponents for m in steps]
        ticks = [t for t in ticks if lo <= t <= hi]
        if len(ticks) >= 3:
            return ticks
    return ticks if len(ticks) >= 2 else [lo, hi]


def histogram(total: list[float], working: list[float], summary: Summary) -> Histogram | None:
    """The histogram of total and excluding-waits latencies (log scale over a wide range);
    None when no trial has a latency."""
    values = [v for v in [*total, *working] if v > 0]
    if not values:
        return None
    lo, hi = min(values), max(values)
    log = hi / lo > 20
    if hi == lo:
        lo, hi = lo * 0.5, hi * 1.5
    count = 24

    def position(v: float) -> float:
        v = min(max(v, lo), hi)
        if log:
            return (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo))
        return (v - lo) / (hi - lo)

    def slot(v: float) -> int:
        return min(count - 1, int(position(v) * count))

    totals, works = [0] * count, [0] * count
    for v in total:
        if v > 0:
            totals[slot(v)] += 1
    for v in working:
        if v > 0:
            works[slot(v)] += 1
    bins = [(i / count, (i + 1) / count, totals[i], works[i]) for i in range(count)]
    tick_values = _log_ticks(lo, hi) if log else [lo + (hi - lo) * i / 4 for i in range(5)]
    axis = _Axis.for_range(hi)
    markers = [
        (position(value), f"{label} {axis.value(value)}")
        for label, value in (("p50", summary.latency.p50), ("p95", summary.latency.p95))
        if value is not None
    ]
    return Histogram(
        bins=bins,
        ticks=[
            (position(t), text)
            for t, text in zip(tick_values, axis.labels(tick_values, log), strict=True)
        ],
        peak=max(max(totals), max(works), 1),
        markers=markers,
        log=log,
    )


def cost_bars(summary: Summary) -> list[tuple[str, float, str]]:
    """(label, length from 0 to 1, amount) for the agent, the judge, the user simulator (in a
    run that had one) and the total; none without a cost."""
    cost = summary.cost
    items = [
        ("agent", cost.agent_usd),
        ("judge", cost.judge_usd),
        *([("simulator", cost.simulator_usd)] if summary.simulation is not None else []),
        ("total", cost.total_usd),
    ]
    top = max((v for _, v in items if v is not None), default=0.0)
    if top <= 0:
        return []
    return [(label, (v or 0.0) / top, format_usd(v)) for label, v in items]
