"""Evaluators of what the agent delivered: whether it completed the task (`TaskCompletion`) and
whether its answer uses prior sessions right (`AgentMemoryEval`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from agenteval.case import EvalCase
from agenteval.evaluators.agent_trace import (
    NO_TASK,
    AgentTrace,
    read_trace,
    steps_text,
)
from agenteval.evaluators.base import JudgedEvaluator
from agenteval.evaluators.judging import Question, is_yes, verdicts
from agenteval.score import Score
from agenteval.scorers.answer import not_judged
from agenteval.trace import Trial

__all__ = ["AgentMemoryEval", "TaskCompletion"]


@dataclass(frozen=True, kw_only=True)
class TaskCompletion(JudgedEvaluator):
    """Whether the agent's final output (and, with a trace, what it did) satisfies the task, as
    the judge rates it (0..1).

    With a trace the judge sees every step and the final answer, so a task done by a tool call
    (an event created) counts; without one, it judges the final output alone. No score when
    there is neither an answer nor a step, or no judge.
    """

    reads: ClassVar[frozenset[str]] = frozenset({"output", "tool_calls"})

    def questions(self, case: EvalCase, trace: AgentTrace) -> list[Question] | Score:
        task = trace.task
        if task is None:
            return self.no_score(NO_TASK)
        if not trace.steps and not trace.output:
            return self.no_score("nothing to judge: no answer and no steps")
        blocks = {"task": task}
        left_out = 0
        if trace.steps:
            blocks["trace"], left_out = steps_text(trace.steps)
        if trace.output:
            blocks["answer"] = trace.output
        about = {"steps": len(trace.steps), "steps_left_out": left_out}
        return [Question("task_completion", blocks, about)]

    def score_verdicts(
        self, case: EvalCase, trace: AgentTrace, questions: list[Question], verdicts_: list[Score]
    ) -> Score:
        verdict = verdicts_[0]
        details: dict[str, Any] = {
            **questions[0].about,
            "judged": " and ".join(
                part for part, there in (("trace", trace.steps), ("answer", trace.output)) if there
            ),
            "verdicts": verdicts(questions, verdicts_),
            "trace_source": trace.source,
        }
        return self.from_verdicts(verdicts_, verdict.value, verdict.reason or "", details)


_MEMORY_CHECKS = (
    ("uses_context", "agent_memory_uses_context"),
    ("no_hallucination", "agent_memory_no_hallucination"),
    ("ignores_stale", "agent_memory_ignores_stale"),
)
_EXPECTED_CHECK = ("includes_expected", "agent_memory_expected_output")


@dataclass(frozen=True, kw_only=True)
class AgentMemoryEval(JudgedEvaluator):
    """Whether a multi-session agent's answer uses its prior sessions (the case's `context`)
    right.

    The judge answers yes or no to each check: does the answer use the prior context correctly;
    does it avoid claiming past facts the context does not hold; does it ignore superseded or
    stale information; and, when the case has an `expected_output`, does the answer include
    it. The score is the share of yeses.

    No score when the case has no `context` or no input, the trial has no answer, or there is
    no judge.
    """

    reads: ClassVar[frozenset[str]] = frozenset({"output"})

    async def __call__(self, case: EvalCase, trial: Trial) -> Score:
        # The memory checks need the context and an answer; a trace of steps is not needed.
        if not (case.context or "").strip():
            return self.no_score(
                "no context in the case: AgentMemoryEval needs the prior sessions (`context`)"
            )
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        if read_trace(case, trial) is None:
            return self.no_score("no answer to judge")
        return await super().__call__(case, trial)

    def questions(self, case: EvalCase, trace: AgentTrace) -> list[Question] | Score:
        query = trace.task
        if query is None:
            return self.no_score("no input in the case: the judge needs the current query")
        if not trace.output:
            return self.no_score("no answer to judge")
        blocks = {"query": query, "context": case.context or "", "answer": trace.output}
        asked = [
            Question(template_id, blocks, {"check": check}) for check, template_id in _MEMORY_CHECKS
        ]
        if case.expected_output and case.expected_output.strip():
            check, template_id = _EXPECTED_CHECK
            expected = {**blocks, "expected_output": case.expected_output}
            asked.append(Question(template_id, expected, {"check": check}))
        return asked

    def score_verdicts(
        self, case: EvalCase, trace: AgentTrace, questions: list[Question], verdicts_: list[Score]
    ) -> Score:
        yes = sum(is_yes(v) for v in verdicts_)
        reason = f"{yes} of {len(questions)} memory checks passed"
        failed = [
            f"{q.about['check']}: {v.reason}"
            for q, v in zip(questions, verdicts_, strict=True)
            if not is_yes(v)
        ]
        if failed:
            reason += "; failed " + "; ".join(failed)
        details = {
            "checks": {
                q.about["check"]: is_yes(v) for q, v in zip(questions, verdicts_, strict=True)
            },
            "verdicts": verdicts(questions, verdicts_),
        }
        return self.from_verdicts(verdicts_, yes / len(questions), reason, details)
