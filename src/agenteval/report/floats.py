"""Float sums that can be split and merged to the last bit (a rescore's worker processes).

A summary sums floats in trial order (costs, score values); float addition is not
associative, so summing two halves apart and adding the totals can differ from the sum in
one pass in the last digits. A partial builder keeps every float it adds (`FloatLog`), and
the merge adds them again, one by one, onto the running total: the same additions in the
same order, so the same result. The log holds a part's floats only (a few thousand trials),
never the run's.
"""

from __future__ import annotations

from array import array
from collections.abc import ItemsView

__all__ = ["FloatLog"]


class FloatLog:
    """The floats added to each of a partial summary's sums, in the order added."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, str], array[float]] = {}

    def add(self, key: tuple[str, str], value: float) -> None:
        """Note that `value` was added to the sum `key` (a kind and a name)."""
        values = self._values.get(key)
        if values is None:
            values = self._values[key] = array("d")
        values.append(value)

    def of(self, key: tuple[str, str]) -> array[float]:
        """The floats of the sum `key`, to append to (`add` without looking the key up each
        time: a summary's score sums, ten a trial)."""
        values = self._values.get(key)
        if values is None:
            values = self._values[key] = array("d")
        return values

    def items(self) -> ItemsView[tuple[str, str], array[float]]:
        """Each sum's floats, by key."""
        return self._values.items()

    def extend(self, other: FloatLog) -> None:
        """Add `other`'s floats after this log's (a merged part of a part)."""
        for key, values in other._values.items():
            self._values.setdefault(key, array("d")).extend(values)

    @staticmethod
    def added(start: float | None, values: array[float]) -> float:
        """`start` (None: nothing yet, as 0.0) plus each of `values` in turn, as the sum
        would have been made in one pass."""
        total = 0.0 if start is None else start
        for value in values:
            total += value
        return total
