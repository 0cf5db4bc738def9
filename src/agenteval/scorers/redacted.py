"""Scoring stored trials again: text that holds the redaction mark cannot be compared.

The store masks every secret on its way in (`agenteval.redaction`): two different keys of one
shape are both stored as `sk-proj-[REDACTED]`, and a value under a secret-named key as
`[REDACTED]`. A rescore reads those stored values, so a comparison whose inputs hold the mark
may come out either way whatever the real values did: an answer giving key B "matches" a case
expecting key A (a false pass), and the same key written in two forms may no longer match (a
false failure). Such a comparison cannot be decided from the store.

So while `scoring_from_store()` is in effect (`agenteval.engine.rescoring` sets it), a scorer
that compares text calls `undecidable(name, *texts)` first; when a text holds the mark it gives
no score marked `UNDECIDABLE`, and the rescore keeps the stored score of that scorer (the live
verdict, made from the real values), noting why, rather than write a new one. Outside a rescore
(a live run scores the real values) nothing changes: an agent that writes `[REDACTED]` itself
is judged on what it wrote. The check is one context-variable read per scorer call, and a
substring search only while rescoring.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass

from agenteval.redaction import REDACTED
from agenteval.scoped import scoped
from agenteval.score import Score

__all__ = [
    "KEPT",
    "UNDECIDABLE",
    "UNDECIDABLE_REASON",
    "StoreScoring",
    "from_store",
    "holds_redacted",
    "is_undecidable",
    "scoring_from_store",
    "undecidable",
    "undecided",
]

UNDECIDABLE = "agenteval.undecidable"
"""The `details` key of a no-score given because the compared text holds the redaction mark."""
UNDECIDABLE_REASON = (
    f"cannot be decided from the store: the compared text holds {REDACTED} (secrets are masked "
    "when stored, so different values may read the same)"
)
"""The reason of that no-score."""
KEPT = "agenteval.kept"
"""The `details` key a rescore adds to a stored score it kept for that reason, saying why."""


@dataclass
class StoreScoring:
    """The state of one rescore: how many undecidable scores were given since the rescore
    last looked (so it looks at a trial's scores only when there is one)."""

    undecided: int = 0


_FROM_STORE: ContextVar[StoreScoring | None] = ContextVar("agenteval_from_store", default=None)


def scoring_from_store() -> AbstractContextManager[StoreScoring]:
    """Within it (and in tasks and threads started from it), scorers are scoring stored,
    redacted values: `undecidable` applies."""
    return scoped(_FROM_STORE, StoreScoring())


def from_store() -> bool:
    """Whether scorers are scoring stored, redacted values (a rescore): for a check that costs
    more than a substring search, made only then."""
    return _FROM_STORE.get() is not None


def holds_redacted(*texts: str | None) -> bool:
    """Whether a rescore is comparing text that holds the redaction mark: False outside a
    rescore whatever the texts hold (a live run compares the real values)."""
    if _FROM_STORE.get() is None:
        return False
    # A loop, not `any()` over a generator: it runs for most scorers on every trial rescored.
    for text in texts:  # noqa: SIM110
        if text and REDACTED in text:
            return True
    return False


def undecided(name: str) -> Score:
    """The `UNDECIDABLE` no-score of scorer `name`, counted for the rescore
    (`StoreScoring.undecided`); give it when `holds_redacted`."""
    state = _FROM_STORE.get()
    if state is not None:
        state.undecided += 1
    return Score(name=name, reason=UNDECIDABLE_REASON, details={UNDECIDABLE: "redacted"})


def undecidable(name: str, *texts: str | None) -> Score | None:
    """`undecided(name)` when a rescore compares text holding the mark (`holds_redacted`), else
    None: the scorer goes on."""
    return undecided(name) if holds_redacted(*texts) else None


def is_undecidable(score: Score) -> bool:
    """Whether `score` is `undecidable`'s no-score."""
    return score.value is None and score.details.get(UNDECIDABLE) == "redacted"
