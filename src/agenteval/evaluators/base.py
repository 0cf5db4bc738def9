"""What every evaluator shares: `Evaluator` (a scorer named after its class and settings, bound
to a run with `for_run`) and `JudgedEvaluator` (one scored by the LLM judge).

An evaluator is a scorer of agenteval's one scoring layer: called with `(case, trial)` it gives
a `Score`, so it goes into `agenteval.evaluate(scorers=[...])`, `EvalSuite.add_evaluators`,
`agenteval.yaml` (`scorers:`) and `--scorer` alike.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Awaitable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Self

from agenteval.case import EvalCase
from agenteval.evaluators.agent_trace import MAX_JUDGED, AgentTrace, read_trace
from agenteval.evaluators.judging import (
    Question,
    ask_all,
    combined,
    lease_judge,
    lowest,
    mean_value,
    verdicts,
)
from agenteval.evaluators.naming import settings_name, snake_case
from agenteval.score import Score
from agenteval.scorers.answer import not_judged
from agenteval.scorers.scores import threshold_score
from agenteval.trace import Trial

if TYPE_CHECKING:
    from agenteval.judge.judge import Judge
    from agenteval.scorers.context import ScoringContext

__all__ = ["DEFAULT_THRESHOLD", "NO_TRACE", "Evaluator", "JudgedEvaluator"]

DEFAULT_THRESHOLD = 0.7
"""The pass mark of every agent evaluator (multivon-eval's default)."""

NO_TRACE = "no agent trace: the trial recorded no steps, tool calls or answer, and the case has no agent_trace"

# Fields that are not settings: they never go into the name.
_NOT_SETTINGS = frozenset({"name", "judge"})


@dataclass(frozen=True, kw_only=True)
class Evaluator(ABC):
    """An agent evaluator: a scorer of `(case, trial)` that reads the agent's trace.

    Its scores are named after the class in snake_case (`tool_call_accuracy`), with the
    settings that differ from the defaults in brackets (`tool_call_accuracy[require_order]`),
    so two instances with different settings keep apart in a report; `name=` sets another name.
    A score passes at `threshold` (0.7 by default).
    """

    reads: ClassVar[frozenset[str]] = frozenset()
    """The trial fields it reads: a run gives no score, with why, when the trial's trace does
    not record one of them (`agenteval.scorers.recorded`). Each built-in evaluator names its
    own; an evaluator of yours is called as it is unless it names them."""

    threshold: float = DEFAULT_THRESHOLD
    name: str = ""
    _run: ScoringContext | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"threshold must be from 0 to 1, got {self.threshold}")
        if not self.name:
            object.__setattr__(self, "name", self.default_name())

    def settings(self) -> dict[str, Any]:
        """The settings that differ from the class defaults, in field order."""
        changed: dict[str, Any] = {}
        for f in fields(self):
            if not f.init or f.name in _NOT_SETTINGS:
                continue
            value = getattr(self, f.name)
            if value != f.default:
                changed[f.name] = value
        return changed

    def default_name(self) -> str:
        """The class name in snake_case, with `settings()` in brackets."""
        return settings_name(snake_case(type(self).__name__), self.settings())

    def for_run(self, context: ScoringContext) -> Self:
        """This evaluator as a run applies it, with the run's context (its judge and tools)."""
        bound = copy.copy(self)
        object.__setattr__(bound, "_run", context)
        return bound

    def no_score(self, reason: str, **details: Any) -> Score:
        """No score, with the reason (the evaluator does not apply)."""
        return Score(name=self.name, reason=reason, details=details)

    def scored(self, value: float, reason: str, **details: Any) -> Score:
        """A score passing at `threshold`."""
        return threshold_score(self.name, value, self.threshold, reason, details)

    def trace_or_skip(self, case: EvalCase, trial: Trial) -> AgentTrace | Score:
        """The trial's trace, or the score to give without one: no score for a trial that
        failed for an infrastructure reason, or that has no trace at all."""
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        trace = read_trace(case, trial)
        return self.no_score(NO_TRACE) if trace is None else trace

    @abstractmethod
    def __call__(self, case: EvalCase, trial: Trial) -> Score | Awaitable[Score]:
        """Score one trial of one case."""


@dataclass(frozen=True, kw_only=True)
class JudgedEvaluator(Evaluator):
    """An evaluator scored by the LLM judge.

    The judge is `judge` (a `Judge`, or `provider:model` such as `openai:gpt-4o-mini`), else
    the run's (`agenteval.evaluate(..., judge=...)`, `--judge`, `agenteval.yaml`), else, outside
    any run, `AGENTEVAL_JUDGE`. With none, the score is no score, with a reason that names the
    fix (never a made-up number). `num_samples` verdicts are averaged for each question.
    """

    judge: Judge | str | None = None
    num_samples: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_samples < 1:
            raise ValueError(f"num_samples must be at least 1, got {self.num_samples}")
        if isinstance(self.judge, str):
            from agenteval.judge.judge import parse_spec

            parse_spec(self.judge)

    async def __call__(self, case: EvalCase, trial: Trial) -> Score:
        found = self.trace_or_skip(case, trial)
        if isinstance(found, Score):
            return found
        questions = self.questions(case, found)
        if isinstance(questions, Score):
            return questions
        if not questions:
            return self.no_score("nothing to judge")
        async with lease_judge(self.judge, self._run) as lease:
            if lease.judge is None:
                return self.no_score(lease.problem or "no judge")
            verdicts = await ask_all(
                lease.judge, self.name, questions, num_samples=self.num_samples
            )
        return self.score_verdicts(case, found, questions, verdicts)

    @abstractmethod
    def questions(self, case: EvalCase, trace: AgentTrace) -> list[Question] | Score:
        """The questions to ask the judge about this trace, or the score to give without
        asking (no score when the case lacks what the evaluator needs)."""

    @abstractmethod
    def score_verdicts(
        self,
        case: EvalCase,
        trace: AgentTrace,
        questions: list[Question],
        verdicts: list[Score],
    ) -> Score:
        """The score made of the judge's verdicts on `questions` (see `judging.combined`)."""

    def from_verdicts(
        self, verdicts_: list[Score], value: float | None, reason: str, details: dict[str, Any]
    ) -> Score:
        """The score made of the judge's verdicts (see `judging.combined`), passing at
        `threshold`."""
        return combined(
            self.name,
            verdicts_,
            value=value,
            threshold=self.threshold,
            reason=reason,
            details=details,
        )

    def mean_per_item(
        self, trace: AgentTrace, asked: tuple[list[Question], list[Score]], unit: str, label: str
    ) -> Score:
        """`per_item` over `asked` (the questions and their verdicts, one per call or step,
        `unit` being the trace's `"calls"` or `"steps"`) scored as the mean verdict, the reason
        naming the lowest one (`label` formatted with its question's `about`)."""
        questions, verdicts_ = asked
        worst = lowest(questions, verdicts_)
        note = None if worst is None else f"{label.format(**worst[0].about)}: {worst[1].reason}"
        total = len(trace.calls) if unit == "calls" else len(trace.steps)
        return self.per_item(
            trace,
            questions,
            verdicts_,
            unit=unit,
            total=total,
            value=mean_value(verdicts_),
            summary=f"mean over {len(questions)} judged {unit}",
            note=note,
        )

    def per_item(
        self,
        trace: AgentTrace,
        questions: list[Question],
        verdicts_: list[Score],
        *,
        unit: str,
        total: int,
        value: float | None,
        summary: str,
        note: str | None,
        **details: Any,
    ) -> Score:
        """The score over one verdict per call or step (the first `MAX_JUDGED` of `total`):
        `summary`, how many were left out, and `note` as the reason; the counts, `details` and
        every verdict in the details."""
        left_out = total - len(questions)
        reason = summary
        if left_out:
            reason += f" ({left_out} of {total} left out: at most {MAX_JUDGED} are judged)"
        if note:
            reason += f"; {note}"
        return self.from_verdicts(
            verdicts_,
            value,
            reason,
            {
                unit: total,
                "judged": len(questions),
                "left_out": left_out,
                **details,
                "verdicts": verdicts(questions, verdicts_),
                "trace_source": trace.source,
            },
        )
