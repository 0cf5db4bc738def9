"""How the LLM-judged evaluators use the one judge: which judge an evaluation asks
(`lease_judge`), the questions it asks (`Question`, `ask_all`), and the one `Score` made of
several verdicts (`combined`).

Each question is one structured verdict `{reasoning, score}` from `Judge.score`, with its own
template (`agenteval/judge/templates/`): a graded question scores 0..1, a yes/no question is
answered 1.0 (yes) or 0.0 (no), and a verdict of 0.5 or more reads as yes.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agenteval.judge.rubrics import NO_JUDGE
from agenteval.judge.templates import Template, load_template
from agenteval.score import JudgeRecord, Score
from agenteval.trace import Usage

if TYPE_CHECKING:
    from agenteval.judge.judge import Judge
    from agenteval.scorers.context import ScoringContext

__all__ = [
    "NO_EVALUATOR_JUDGE",
    "JudgeLease",
    "Question",
    "ask_all",
    "combined",
    "is_yes",
    "lease_judge",
    "lowest",
    "mean_value",
    "verdicts",
]

NO_EVALUATOR_JUDGE = f"{NO_JUDGE}, or give the evaluator one (judge='openai:gpt-4o-mini')"
"""Why an evaluator called outside any run, with no judge of its own, gives no score."""


@dataclass(frozen=True)
class JudgeLease:
    """The judge for one evaluation, or why there is none."""

    judge: Judge | None
    problem: str | None = None


@asynccontextmanager
async def lease_judge(
    own: Judge | str | None, run: ScoringContext | None
) -> AsyncIterator[JudgeLease]:
    """The judge an evaluation asks, for the time of the `async with`.

    In order: the evaluator's own (`judge=`: a `Judge`, or a `provider:model` opened here and
    closed after, unless it is the run's judge); else the run's judge (or the reason the run has
    none); else, outside any run, `AGENTEVAL_JUDGE`; else none, with the fix named.
    """
    from agenteval.judge.choice import choose_judge
    from agenteval.judge.judge import Judge

    if isinstance(own, Judge):
        yield JudgeLease(own)
        return
    if own is None and run is not None:
        yield JudgeLease(run.judge, None if run.judge else run.judge_problem or NO_JUDGE)
        return
    if isinstance(own, str) and run is not None and run.judge and run.judge.label == own:
        yield JudgeLease(run.judge)
        return
    choice = choose_judge(own)
    if choice.config is None:
        yield JudgeLease(None, NO_EVALUATOR_JUDGE)
        return
    try:
        if choice.judge is None:
            yield JudgeLease(None, choice.problem or f"judge {choice.config.spec} unavailable")
        else:
            yield JudgeLease(choice.judge)
    finally:
        await choice.aclose()


@dataclass(frozen=True)
class Question:
    """One verdict to ask for: a template, the raw blocks it fills (the judge fences them), and
    what to keep of it in the score's details (`about`)."""

    template_id: str
    blocks: Mapping[str, str]
    about: Mapping[str, Any] = field(default_factory=dict)

    @property
    def template(self) -> Template:
        """The shipped template asked with."""
        return load_template(self.template_id)


async def ask_all(
    judge: Judge, name: str, questions: Sequence[Question], *, num_samples: int
) -> list[Score]:
    """Every question's verdict as a `Score` (in the order asked), asked at once; the judge's
    own limits pace them."""
    return list(
        await asyncio.gather(
            *(
                judge.score(name, q.template, q.blocks, num_samples=num_samples, details=q.about)
                for q in questions
            )
        )
    )


def is_yes(score: Score) -> bool:
    """Whether a yes/no verdict said yes (a score of 0.5 or more)."""
    return score.value is not None and score.value >= 0.5


def mean_value(scores: Sequence[Score]) -> float | None:
    """The mean of the verdicts' values, or None when one has none (it failed)."""
    values = [s.value for s in scores if s.value is not None]
    return statistics.fmean(values) if values and len(values) == len(scores) else None


def lowest(questions: Sequence[Question], scores: Sequence[Score]) -> tuple[Question, Score] | None:
    """The question with the lowest verdict under 1.0, and its verdict (None when every verdict
    is 1.0)."""
    rated = [(q, s, s.value) for q, s in zip(questions, scores, strict=True) if s.value is not None]
    below = [(q, s, v) for q, s, v in rated if v < 1.0]
    if not below:
        return None
    question, score, _ = min(below, key=lambda entry: entry[2])
    return question, score


def verdicts(questions: Sequence[Question], scores: Sequence[Score]) -> list[dict[str, Any]]:
    """What each verdict said, for a score's details: what was asked about, its score and
    reasoning (or its error)."""
    told: list[dict[str, Any]] = []
    for question, score in zip(questions, scores, strict=True):
        entry: dict[str, Any] = {**question.about, "template": question.template_id}
        if score.error is not None:
            entry["error"] = score.error
        else:
            entry.update(score=score.value, reasoning=score.reason)
        told.append(entry)
    return told


def _record(scores: Sequence[Score]) -> JudgeRecord | None:
    records = [s.judge for s in scores if s.judge is not None]
    if not records:
        return None
    first = records[0]
    templates = list(dict.fromkeys(r.template for r in records))
    retries: dict[str, int] = {}
    for record in records:
        for reason, count in record.retries.items():
            retries[reason] = retries.get(reason, 0) + count
    costs = [r.cost_usd for r in records]
    return JudgeRecord(
        judge=first.judge,
        model=next((r.model for r in records if r.model), None),
        template=",".join(templates),
        template_version=max(r.template_version for r in records),
        params=dict(first.params),
        samples=sum(r.samples for r in records),
        failed_samples=sum(r.failed_samples for r in records),
        cached_samples=sum(r.cached_samples for r in records),
        retries=retries,
        cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
        usage_recorded=all(r.usage_recorded for r in records),
    )


def _usage(scores: Sequence[Score]) -> Usage:
    total = Usage()
    for score in scores:
        if score.usage is not None:
            total = total + score.usage
    return total


def combined(
    name: str,
    scores: Sequence[Score],
    *,
    value: float | None,
    threshold: float,
    reason: str,
    details: dict[str, Any],
) -> Score:
    """One score made of several verdicts: their tokens and judge records summed. When a
    verdict failed (every sample of it), the score is that error, with no value: a count or a
    mean over the verdicts that did come back would say something else than the evaluator
    means."""
    failed = [(i, s) for i, s in enumerate(scores) if s.error is not None or s.value is None]
    usage = _usage(scores)
    record = _record(scores)
    if failed:
        index, score = failed[0]
        return Score(
            name=name,
            error=f"verdict {index + 1} of {len(scores)} failed: {score.error or 'no verdict'}",
            details=details,
            usage=usage,
            judge=record,
        )
    return Score(
        name=name,
        value=value,
        passed=None if value is None else value >= threshold,
        reason=reason,
        details=details,
        usage=usage,
        judge=record,
    )
