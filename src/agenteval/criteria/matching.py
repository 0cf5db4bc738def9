"""Optimal alignment of expected items (tool calls, graph nodes) with what an agent did.

Each function takes the expected items, the actual items and `fits(expected, actual)`, the rule
that says whether an actual item can stand for an expected one, and returns the `Alignment`
that matches the most expected items, whatever the order of the expected items or duplicates
among them:

- `align_positions`: item i against item i (same tools in the same positions);
- `align_in_order`: the longest common subsequence under `fits` (the expected items in their
  order, other items in between allowed), by dynamic programming;
- `align_any_order`: a maximum bipartite matching (each actual item stands for at most one
  expected item), by augmenting paths.

Greedy first-fit matching is not enough once `fits` lets one actual item stand for several
expected ones (an expected call with no arguments accepts any call of its tool): taking the
first fit can use up the only item a later expected one could match. These functions never
do that; `fits` need not be symmetric or transitive.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["Alignment", "align_any_order", "align_in_order", "align_positions"]

E = TypeVar("E")
A = TypeVar("A")


@dataclass(frozen=True)
class Alignment:
    """Which expected item each matched actual item stands for.

    `pairs` holds `(expected index, actual index)`, sorted by expected index; each index
    appears at most once.
    """

    pairs: tuple[tuple[int, int], ...]
    expected: int
    """How many items were expected."""
    actual: int
    """How many items there were."""

    @property
    def matched(self) -> int:
        """How many expected items were matched."""
        return len(self.pairs)

    @property
    def missing(self) -> list[int]:
        """The indexes of the expected items left unmatched."""
        used = {e for e, _ in self.pairs}
        return [i for i in range(self.expected) if i not in used]

    @property
    def extra(self) -> list[int]:
        """The indexes of the actual items that stand for no expected item."""
        used = {a for _, a in self.pairs}
        return [j for j in range(self.actual) if j not in used]

    @property
    def recall(self) -> float:
        """Matched over expected (1.0 when nothing was expected)."""
        return self.matched / self.expected if self.expected else 1.0


def align_positions(
    expected: Sequence[E], actual: Sequence[A], fits: Callable[[E, A], bool]
) -> Alignment:
    """Item i of `expected` against item i of `actual`, for every position both have."""
    pairs = tuple(
        (i, i) for i, (e, a) in enumerate(zip(expected, actual, strict=False)) if fits(e, a)
    )
    return Alignment(pairs, len(expected), len(actual))


def align_in_order(
    expected: Sequence[E], actual: Sequence[A], fits: Callable[[E, A], bool]
) -> Alignment:
    """The most expected items matched in their order (a longest common subsequence under
    `fits`); other actual items may come in between. O(len(expected) × len(actual))."""
    n, m = len(expected), len(actual)
    # best[i][j]: the most matches between expected[i:] and actual[j:].
    best = [[0] * (m + 1) for _ in range(n + 1)]
    fit = [[fits(e, a) for a in actual] for e in expected]
    for i in range(n - 1, -1, -1):
        row, below = best[i], best[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = max(below[j], row[j + 1], below[j + 1] + 1 if fit[i][j] else 0)
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if fit[i][j] and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return Alignment(tuple(pairs), n, m)


def align_any_order(
    expected: Sequence[E], actual: Sequence[A], fits: Callable[[E, A], bool]
) -> Alignment:
    """The most expected items matched, each by a different actual item, in any order (a
    maximum bipartite matching): a first-fit pass, then an augmenting path for each expected
    item it left unmatched. O(len(expected) × len(expected) × len(actual)) at worst."""
    candidates = [[j for j, a in enumerate(actual) if fits(e, a)] for e in expected]
    owner: list[int | None] = [None] * len(actual)  # owner[j]: the expected item j stands for
    unmatched: list[int] = []
    for item, options in enumerate(candidates):
        free = next((j for j in options if owner[j] is None), None)
        if free is None:
            unmatched.append(item)
        else:
            owner[free] = item
    for item in unmatched:
        _augment(item, candidates, owner)
    pairs = tuple(sorted((e, j) for j, e in enumerate(owner) if e is not None))
    return Alignment(pairs, len(expected), len(actual))


def _augment(start: int, candidates: list[list[int]], owner: list[int | None]) -> bool:
    """Find an augmenting path from expected item `start` and flip it; whether one was found.

    Iterative depth-first search (no recursion limit): each frame is an expected item that must
    move, the next of its candidates to try, and the actual item it gives up (None for
    `start`). An item takes a free candidate as soon as it has one.
    """
    seen: set[int] = set()
    stack: list[tuple[int, int, int | None]] = [(start, 0, None)]
    while stack:
        item, position, via = stack[-1]
        options = candidates[item]
        free = next((j for j in options if owner[j] is None), None) if position == 0 else None
        if free is not None:
            # Flip the path: each frame's item takes the actual item the frame above gave up.
            taken = free
            for frame_item, _, frame_via in reversed(stack):
                owner[taken] = frame_item
                if frame_via is None:
                    break
                taken = frame_via
            return True
        while position < len(options) and options[position] in seen:
            position += 1
        if position == len(options):
            stack.pop()
            continue
        j = options[position]
        stack[-1] = (item, position + 1, via)
        seen.add(j)
        holder = owner[j]
        assert holder is not None  # free candidates were taken above
        stack.append((holder, 0, j))
    return False
