"""A scorer gives no score when its trial's trace does not record what it reads (`unrecorded`).

An OpenTelemetry instrumentation that captures no message content (the official openai-v2's
default) says that a model answered, or asked for tools, without saying what: the trial's
`not_recorded` names those fields (`output`, `tool_calls`) with why. An empty answer or an
empty call list read from such a trace is a gap in the trace, not the agent's choice, so a
scorer judging it would fail (or vacuously pass) an agent for what nobody saw.

Each built-in scorer, judge rubric, criterion and agent evaluator declares the trial fields it
reads (`reads`, a frozenset of `Trial` field names); the run applies `unrecorded` before calling
it (`scorers.base.PreparedScorer`, the one place every run, rescore and `run_scorer` scores
through), so no scorer checks this itself. A scorer of the user's is left alone unless it
declares what it reads too: `@reads("output")` on a function or class, or a `reads` attribute.

A scorer that would not apply to the case anyway (`tool_selection` on a case with no
`expected_tools`) gives its own "does not apply" no-score instead, so that only the scorers a
case would have been judged by say "not scored" (and hold a pytest test, a JUnit case, a trial's
verdict undecided): a scorer says so, without reading the trial, by a `declines(case)` method
returning its reason (`declined`). One without it counts as applying.

A trial that failed for an infrastructure reason keeps today's rule (`scorers.answer.not_judged`
names the cause): the check applies to trials the agent got to answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from agenteval.case import EvalCase
from agenteval.errors import ScorerError
from agenteval.score import Score
from agenteval.trace import Trial

__all__ = [
    "FIELD_WORDS",
    "NOT_RECORDED",
    "declared_reads",
    "declined",
    "is_not_recorded",
    "reads",
    "unrecorded",
]

NOT_RECORDED = "agenteval.not_recorded"
"""The `details` key of the no-score `unrecorded` gives: the fields the trace does not record,
so reports can count these apart from scores a scorer declined for reasons of its own."""

FIELD_WORDS = {  # how a no-score's reason and the run summary name each field
    "output": "the answer",
    "tool_calls": "the tool calls",
    "tool_arguments": "the tool calls' arguments",
    "usage": "the token usage",
    "tool_results": "the tool calls' results",
}
# Not a Trial field: a trace may name the calls (and ids) but leave their arguments out
# (pydantic-ai's `include_content=False`, openai-v2's legacy events without content), so the
# scorers that compare arguments read it besides `tool_calls`.
TOOL_ARGUMENTS = "tool_arguments"
# Likewise the calls' results: named in a model's response, but the requests that carried the
# results back were not recorded (OpenInference hiding inputs), so the scorers that read what
# the tools returned read it besides `tool_calls`.
TOOL_RESULTS = "tool_results"

_S = TypeVar("_S")


def reads(*fields: str) -> Callable[[_S], _S]:
    """Declare the trial fields a scorer of yours reads (`"output"`, `"tool_calls"`, any
    `Trial` field, `"tool_arguments"` or `"tool_results"`), so a run gives it no score, with
    the reason, when the trial's trace does not record one of them (`Trial.not_recorded`), instead of calling it on an absence::

        @reads("output")
        def mentions_refund(case, trial):
            return "refund" in (trial.output or "")

    A misspelt field is a `ScorerError` naming it.
    """
    known = {*Trial.model_fields, TOOL_ARGUMENTS, TOOL_RESULTS}
    unknown = [name for name in fields if name not in known]
    if unknown or not fields:
        raise ScorerError(
            f"reads({', '.join(map(repr, fields))}): "
            + (f"{unknown[0]!r} is not a trial field" if unknown else "name at least one field"),
            hint="name the Trial fields the scorer reads, such as 'output' or 'tool_calls'",
        )
    declared = frozenset(fields)

    def mark(scorer: _S) -> _S:
        scorer.reads = declared  # type: ignore[attr-defined]
        return scorer

    return mark


def declared_reads(scorer: object) -> frozenset[str]:
    """The trial fields `scorer` says it reads (its `reads`: a set, tuple or list of field
    names); empty when it declares none, or declares something else under that name. A `reads`
    that raises declares nothing: the scorer runs, and its own call reports what is wrong."""
    try:
        value: Any = getattr(scorer, "reads", None)
    except Exception:  # a property of the user's, or a rubric whose template is missing
        return frozenset()
    if isinstance(value, str) or not isinstance(value, Iterable):
        return frozenset()
    try:
        names = frozenset(value)
    except TypeError:  # not hashable items: not a declaration
        return frozenset()
    return names if all(isinstance(name, str) for name in names) else frozenset()


def declined(scorer: object, name: str, case: EvalCase) -> Score | None:
    """The no-score of `scorer` (named `name`) on a case it does not apply to whatever its trial
    did: its `declines(case)`'s reason; None when it may apply, or declares no `declines`.
    Asked only when a field the scorer reads is not recorded, and cheap (no judge is called):
    a `declines` that raises declines nothing, and the trial stays not scored."""
    try:
        method: Any = getattr(scorer, "declines", None)
        reason = method(case) if callable(method) else None
    except Exception:  # a scorer of the user's: not scored is the safe side
        return None
    return Score(name=name, reason=reason) if isinstance(reason, str) and reason else None


def unrecorded(name: str, fields: frozenset[str], trial: Trial) -> Score | None:
    """The no-score of scorer `name`, which reads `fields`, when the trial's trace does not
    record one of them: `"not scored: the trace does not record the tool calls — <why>"`; None
    when the scorer is to be called (everything it reads is recorded, or the trial failed for an
    infrastructure reason, which the scorer itself reports)."""
    gaps = trial.not_recorded
    if not gaps or not trial.responded:
        return None
    missing = [field for field in gaps if field in fields]
    if not missing:
        return None
    said = "; ".join(
        f"{FIELD_WORDS.get(field, field)} — {gaps[field]}"
        if gaps[field]
        else FIELD_WORDS.get(field, field)
        for field in missing
    )
    return Score(
        name=name,
        reason=f"not scored: the trace does not record {said}",
        details={NOT_RECORDED: missing},
    )


def is_not_recorded(score: Score) -> bool:
    """Whether `score` is `unrecorded`'s no-score."""
    return score.value is None and score.error is None and NOT_RECORDED in score.details
