"""The one scoring interface: anything that takes `(case, trial)` and says how well it did.

A scorer returns a number in 0..1, a bool, a `(value, reason)` pair, a `Score`, or `None` to
skip; it may be sync or async. `to_score` turns any of those into a `Score`. A scorer that
declares the trial fields it reads (`reads`) is not called on a trial whose trace does not
record one of them: it gives no score, with why (`scorers.recorded`).
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

from agenteval.case import EvalCase
from agenteval.interrupts import stops_the_run
from agenteval.score import Score
from agenteval.scorers.recorded import declared_reads, declined, unrecorded
from agenteval.trace import Trial

__all__ = [
    "DEFAULT_THRESHOLD",
    "PreparedScorer",
    "RenamedScorer",
    "Scorer",
    "ScorerFunction",
    "ScorerLike",
    "ScorerResult",
    "prepare_scorer",
    "prepare_scorers",
    "run_scorer",
    "scorer_name",
    "to_score",
    "unrenamed",
]

ScorerResult: TypeAlias = Score | float | int | bool | tuple[Any, str | None] | None
ScorerFunction: TypeAlias = Callable[[EvalCase, Trial], "ScorerResult | Awaitable[ScorerResult]"]

ScorerLike: TypeAlias = "Scorer | ScorerFunction | str | Mapping[str, Any]"
"""What a run takes as a scorer: a scorer object (a built-in scorer, an agent evaluator, a
criterion), a function of `(case, trial)`, a scorer's name (`"exact_match"`, `"module:function"`),
or a name with settings (`{"name": "step_efficiency", "threshold": 0.9}`)."""

DEFAULT_THRESHOLD = 0.5
"""A custom scorer's number passes at or above this, unless the scorer sets `threshold`."""


@runtime_checkable
class Scorer(Protocol):
    """A named scorer object. Built-in scorers are small frozen dataclasses of this shape."""

    @property
    def name(self) -> str:
        """The name its scores carry."""
        ...

    def __call__(self, case: EvalCase, trial: Trial) -> ScorerResult | Awaitable[ScorerResult]:
        """Score one trial of one case."""
        ...


def scorer_name(scorer: object) -> str:
    """The name a scorer's scores carry: its `name` attribute, else its function name."""
    name = getattr(scorer, "name", None)
    if isinstance(name, str) and name:
        return name
    name = getattr(scorer, "__name__", None)
    if isinstance(name, str) and name:
        return name
    return type(scorer).__name__


@dataclass(frozen=True, slots=True)
class RenamedScorer:
    """A scorer applied under another name than its own: the second of two scorers of one name
    in a run (`exact_match_2`, see `agenteval.catalog.resolve_scorers`). Its scores
    carry this name; everything else (its call, its `threshold`, whether it runs in a thread)
    is the scorer's own."""

    scorer: Any
    name: str

    def __call__(self, case: EvalCase, trial: Trial) -> Any:
        return self.scorer(case, trial)

    def __getattr__(self, attr: str) -> Any:
        if attr == "scorer":  # not set yet (a copy being made): no recursion
            raise AttributeError(attr)
        return getattr(self.scorer, attr)


def unrenamed(scorer: Any) -> Any:
    """The scorer itself, whatever name a run gives it."""
    return scorer.scorer if isinstance(scorer, RenamedScorer) else scorer


def _completed(score: Score, threshold: float) -> Score:
    """`score` with the half of its verdict it left out, as a number or a bool returned gets
    it: a `passed` with no `value` takes the value 1.0 or 0.0 (else the verdict would read as
    "did not apply" and a failure be lost); a `value` with no `passed` passes at `threshold`
    (else the summary would fail a 0.9 that the pytest plugin passes)."""
    if score.error is not None or (score.value is None) == (score.passed is None):
        return score
    if score.value is None:
        return score.model_copy(update={"value": 1.0 if score.passed else 0.0})
    return score.model_copy(update={"passed": score.value >= threshold})


def to_score(name: str, result: ScorerResult, *, threshold: float = DEFAULT_THRESHOLD) -> Score:
    """Read whatever a scorer returned as a `Score` named `name` (a `Score` giving only a
    `passed` gets its value, 1.0 or 0.0; one giving only a `value` passes at `threshold`)."""
    if isinstance(result, Score):
        result = _completed(result, threshold)
        return result if result.name == name else result.model_copy(update={"name": name})
    if result is None:
        return Score(name=name, reason="did not apply")
    reason: str | None = None
    value: Any = result
    if isinstance(result, tuple):
        if len(result) != 2:
            raise TypeError(f"expected a (value, reason) pair, got a tuple of {len(result)}")
        value, reason = result
        if value is None:
            return Score(name=name, reason=reason or "did not apply")
    if isinstance(value, bool):
        return Score(name=name, value=1.0 if value else 0.0, passed=value, reason=reason)
    if isinstance(value, int | float):
        number = float(value)
        if math.isnan(number) or not 0.0 <= number <= 1.0:
            raise ValueError(f"a score must be a number from 0 to 1, got {value!r}")
        return Score(name=name, value=number, passed=number >= threshold, reason=reason)
    raise TypeError(
        f"a scorer must return a number from 0 to 1, a bool, a (value, reason) pair, a Score "
        f"or None; got {type(value).__name__}"
    )


def _is_async(scorer: Any) -> bool:
    call = getattr(scorer, "__call__", None)  # noqa: B004 - async callable objects
    return inspect.iscoroutinefunction(scorer) or inspect.iscoroutinefunction(call)


def _error_score(name: str, exc: BaseException) -> Score:
    if stops_the_run(exc):  # a cancellation of the run, a real Ctrl-C: not the scorer's
        raise exc
    return Score(name=name, error=f"{type(exc).__name__}: {exc}")


def _outcome(scorer: Any, case: EvalCase, trial: Trial) -> tuple[Any, BaseException | None]:
    """A thread's scorer call, its exception returned rather than raised: raised in the worker
    thread, a `BaseException` would be thrown into the awaiting task (a `GeneratorExit` closing
    it, a `SystemExit` ending the event loop) instead of becoming the score's error."""
    try:
        return scorer(case, trial), None
    except BaseException as exc:  # a user's scorer may raise anything
        return None, exc


@dataclass(frozen=True, slots=True)
class PreparedScorer:
    """A scorer with what `run_scorer` works out on every call worked out once: its name, its
    threshold, the trial fields it reads, and whether it runs in the event loop or in a worker
    thread.

    A trial whose trace does not record a field the scorer reads (`Trial.not_recorded`) gets
    the no-score of `scorers.recorded.unrecorded` without the scorer being called, unless the
    scorer declines the case anyway (`scorers.recorded.declined`): then its own no-score.

    Scoring many trials with the same scorers (a rescore, a run) prepares them once
    (`prepare_scorers`) and calls `call` or `run` per trial; the scores are the ones
    `run_scorer` gives.
    """

    scorer: Any
    name: str
    threshold: float
    inline: bool
    """Runs in the event loop (async scorers and agenteval's own); else in a worker thread."""
    synchronous: bool
    """Inline and not async: `call` gives its `Score` at once (unless it returns an awaitable)."""
    reads: frozenset[str] = frozenset()
    """The trial fields the scorer declares it reads (`scorers.recorded.declared_reads`)."""

    def call(self, case: EvalCase, trial: Trial) -> Score | Awaitable[Score]:
        """Score an inline scorer's trial without the event loop: the `Score` itself, or an
        awaitable of it when the scorer is async (or returned an awaitable)."""
        if self.reads and trial.not_recorded:
            unknown = self._unrecorded(case, trial)
            if unknown is not None:
                return unknown
        try:
            result = self.scorer(case, trial)
            if type(result) is Score and result.name == self.name:
                # The built-ins' own result, as `to_score` would return it.
                if (result.value is None) != (result.passed is None):
                    return to_score(self.name, result, threshold=self.threshold)
                return result
            if inspect.isawaitable(result):
                return self._finish(result)
            return to_score(self.name, result, threshold=self.threshold)
        except BaseException as exc:  # a user's scorer may raise anything; it must not end the run
            return _error_score(self.name, exc)

    async def run(self, case: EvalCase, trial: Trial) -> Score:
        """Score one trial, as `run_scorer` does."""
        if not self.inline:
            if self.reads and trial.not_recorded:
                unknown = self._unrecorded(case, trial)
                if unknown is not None:
                    return unknown
            # A user's sync scorer may be slow (a regex over a long answer, a model of its
            # own): it runs in a worker thread so the other trials go on meanwhile.
            result, error = await asyncio.to_thread(_outcome, self.scorer, case, trial)
            if error is not None:
                return _error_score(self.name, error)
            if inspect.isawaitable(result):
                return await self._finish(result)
            try:
                return to_score(self.name, result, threshold=self.threshold)
            except Exception as exc:  # what it returned is no score
                return _error_score(self.name, exc)
        score = self.call(case, trial)
        return score if isinstance(score, Score) else await score

    def _unrecorded(self, case: EvalCase, trial: Trial) -> Score | None:
        """The score given without calling the scorer on a trial whose trace does not record a
        field it reads: its own "does not apply" when it declines the case (so only a scorer
        the case is judged by says "not scored"), else `unrecorded`'s no-score; None when
        everything it reads is recorded."""
        unknown = unrecorded(self.name, self.reads, trial)
        if unknown is None:
            return None
        return declined(self.scorer, self.name, case) or unknown

    async def _finish(self, pending: Awaitable[ScorerResult]) -> Score:
        try:
            return to_score(self.name, await pending, threshold=self.threshold)
        except BaseException as exc:
            return _error_score(self.name, exc)


def prepare_scorer(scorer: Any) -> PreparedScorer:
    """`scorer` with its name, threshold and way of running worked out once."""
    name = scorer_name(scorer)
    scorer = unrenamed(scorer)  # called as itself: only its scores' name differs
    is_async = _is_async(scorer)
    # Async scorers, and agenteval's own (quick) ones, run in the event loop.
    inline = is_async or type(scorer).__module__.startswith("agenteval.")
    return PreparedScorer(
        scorer=scorer,
        name=name,
        threshold=getattr(scorer, "threshold", DEFAULT_THRESHOLD),
        inline=inline,
        synchronous=inline and not is_async,
        reads=declared_reads(scorer),
    )


def prepare_scorers(scorers: Iterable[Any]) -> list[PreparedScorer]:
    """Each scorer prepared once, in order (see `PreparedScorer`)."""
    return [prepare_scorer(scorer) for scorer in scorers]


async def run_scorer(scorer: Any, case: EvalCase, trial: Trial) -> Score:
    """Run one scorer on one trial; an exception becomes an error on that score, not a crash."""
    return await prepare_scorer(scorer).run(case, trial)
