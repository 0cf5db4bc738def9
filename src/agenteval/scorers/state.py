"""Whether the trial left the environment in the state the case expects: `StateMatch`.

Judging an agent by what it did to the world, not only by what it said (tau-bench's way): the
trial's final state (`Trial.state`, what its tools left in `agenteval.state()`, a case's
`initial_state` changed by the run, an ADK session's state) against the case's
`expected_state`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from agenteval.case import EvalCase
from agenteval.redaction import REDACTED
from agenteval.score import Score
from agenteval.scorers.answer import not_judged
from agenteval.scorers.redacted import from_store, undecided
from agenteval.scorers.scores import binary_score, no_score
from agenteval.trace import Trial

__all__ = ["StateMatch", "state_difference"]

_SHOWN = 80  # characters of a value a reason quotes


@dataclass(frozen=True)
class StateMatch:
    """Every key of the case's `expected_state` is in the trial's final state with an equal
    value, recursively: nested mappings compared key by key the same way, lists element by
    element (same length), other values by `==` (a boolean equals only a boolean: `true` is not
    `1`). Keys the case does not list are ignored, unless `exact` (then, at every level, a key
    the case does not list is a difference too). An empty mapping expects an empty one, at any
    level, as an empty list does: an expectation given as empty is an expectation, never a
    check of nothing (`expected_state: {}` is "the trial leaves no state", `cart: {}` "the cart
    is empty").

    Applies when the case has an `expected_state`, an empty one included. A trial that left no state
    at all (its agent never ran under agenteval's environment) fails, saying so. Not judged when
    the trial failed for an infrastructure reason, nor in a rescore when the compared values hold
    a masked secret (`scorers.redacted`: the rescore keeps the stored verdict). A trial the agent
    failed itself is judged on the state it left. Binary: 1.0 or 0.0; the reason names the first
    difference (its path, the expected and the actual value, or the missing key).
    """

    name: str = "state_match"
    threshold: float = 1.0
    exact: bool = False
    """The state must hold the expected keys and no others (at every level of nesting)."""
    reads: ClassVar[frozenset[str]] = frozenset({"state"})
    """The trial fields it reads (`scorers.recorded`)."""

    def declines(self, case: EvalCase) -> str | None:
        """Why it does not apply to `case`, whatever the trial did (`scorers.recorded`)."""
        return "no expected_state in the case" if case.expected_state is None else None

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        expected = case.expected_state
        if expected is None:
            return no_score(self.name, "no expected_state in the case")
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        details: dict[str, Any] = {"exact": self.exact, "checked": len(expected)}
        if trial.state is None:
            reason = (
                "the trial left no environment state to check against expected_state (its "
                "agent ran outside agenteval's environment, or its framework keeps none)"
            )
            return binary_score(self.name, False, reason, details)
        # A rescore reads masked secrets: two different keys both read `[REDACTED]`.
        if from_store() and _holds_redacted(expected, trial.state):
            return undecided(self.name)
        difference = state_difference(expected, trial.state, exact=self.exact)
        if difference is None:
            listed = f"{len(expected)} expected key{'s' if len(expected) != 1 else ''}"
            if not expected:
                reason = "the state is empty, as expected"
            elif self.exact:
                reason = f"the state is exactly the {listed}"
            else:
                reason = f"the state holds the {listed}"
            return binary_score(self.name, True, reason, details)
        details["difference"] = difference
        return binary_score(self.name, False, difference, details)


def state_difference(
    expected: Any, actual: Any, *, exact: bool = False, path: str = ""
) -> str | None:
    """The first difference between `expected` and `actual` (see `StateMatch`), as a sentence
    naming its path (`state.cart.items[1].sku`), or None when they match."""
    where = path or "state"
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return f"{where}: expected a mapping, got {_shown(actual)}"
        if not expected and actual:
            # Subset semantics would make `{}` hold anything: a vacuous pass.
            empty = "an empty state" if not path else "an empty mapping"
            return f"{where}: expected {empty}, got {_shown(actual)}"
        for key, value in expected.items():
            inner = _child(path, key)
            if key not in actual:
                return f"{inner}: missing (expected {_shown(value)})"
            found = state_difference(value, actual[key], exact=exact, path=inner)
            if found is not None:
                return found
        if exact:
            extra = next((key for key in actual if key not in expected), None)
            if extra is not None:
                return f"{_child(path, extra)}: not expected (exact), got {_shown(actual[extra])}"
        return None
    if isinstance(expected, list | tuple):
        if not isinstance(actual, list | tuple):
            return f"{where}: expected a list, got {_shown(actual)}"
        for index, (want, got) in enumerate(zip(expected, actual, strict=False)):
            found = state_difference(want, got, exact=exact, path=f"{where}[{index}]")
            if found is not None:
                return found
        if len(expected) != len(actual):
            return f"{where}: expected {len(expected)} items, got {len(actual)}"
        return None
    if isinstance(expected, bool) != isinstance(actual, bool) or expected != actual:
        return f"{where}: expected {_shown(expected)}, got {_shown(actual)}"
    return None


def _child(path: str, key: Any) -> str:
    text = str(key)
    if text.isidentifier():
        return f"{path or 'state'}.{text}"
    return f"{path or 'state'}[{json.dumps(text, ensure_ascii=False)}]"


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
    except ValueError:  # a circular value: its repr is cut as well
        text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _holds_redacted(*values: Any) -> bool:
    return any(REDACTED in text for value in values for text in _texts(value))


def _texts(value: Any, depth: int = 0) -> Iterator[str]:
    """Every string in `value` (keys too), down to a depth a stored state cannot pass."""
    if depth > 64:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                yield key
            yield from _texts(item, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item, depth + 1)
