"""Evaluators of the agent's path: its plan (`PlanQuality`), each step's reasoning
(`StepFaithfulness`), and how directly it got there, recovering from failed calls
(`TrajectoryEfficiency`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from agenteval.case import EvalCase
from agenteval.evaluators.agent_trace import (
    NO_TASK,
    AgentTrace,
    judged_part,
    step_text,
    steps_text,
)
from agenteval.evaluators.base import JudgedEvaluator
from agenteval.evaluators.judging import Question, is_yes, verdicts
from agenteval.score import Score

__all__ = ["RECOVERY_PENALTY", "PlanQuality", "StepFaithfulness", "TrajectoryEfficiency"]

RECOVERY_PENALTY = 0.2
"""Taken off `TrajectoryEfficiency` when tool calls failed and the agent did not recover."""

NO_STEPS = "no steps in the trace to judge"


def _trace_blocks(case: EvalCase, trace: AgentTrace) -> tuple[dict[str, str], int] | str:
    """The task and the rendered trace (with the final answer when there is one), and how many
    steps were left out for length; or why there is nothing to judge."""
    task = trace.task
    if task is None:
        return NO_TASK
    if not trace.steps:
        return NO_STEPS
    text, left_out = steps_text(trace.steps)
    blocks = {"task": task, "trace": text}
    if trace.output:
        blocks["answer"] = trace.output
    return blocks, left_out


@dataclass(frozen=True, kw_only=True)
class PlanQuality(JudgedEvaluator):
    """The quality of the agent's plan, as the judge rates it (0..1): does it address the task,
    are the steps in a logical order, are any unnecessary or redundant, is anything missing.

    No score when there is no trace, no steps, or no judge.
    """

    reads: ClassVar[frozenset[str]] = frozenset({"output", "tool_calls"})

    def questions(self, case: EvalCase, trace: AgentTrace) -> list[Question] | Score:
        found = _trace_blocks(case, trace)
        if isinstance(found, str):
            return self.no_score(found)
        about = {"steps": len(trace.steps), "cut": found[1]}
        return [Question("plan_quality", found[0], about)]

    def score_verdicts(
        self, case: EvalCase, trace: AgentTrace, questions: list[Question], verdicts_: list[Score]
    ) -> Score:
        verdict = verdicts_[0]
        details: dict[str, Any] = {
            "steps": len(trace.steps),
            "steps_left_out": questions[0].about["cut"],
            "verdicts": verdicts(questions, verdicts_),
            "trace_source": trace.source,
        }
        return self.from_verdicts(verdicts_, verdict.value, verdict.reason or "", details)


@dataclass(frozen=True, kw_only=True)
class StepFaithfulness(JudgedEvaluator):
    """Whether each step follows from the task and the steps before it: no invented
    observations, no failure passed over, no action that contradicts an earlier tool result.

    The judge rates each step (0..1) with the task and every earlier step in view; the score is
    the mean. Up to 8 steps are judged, the first 8 (`details["left_out"]` says how many were
    not). No score when there is no trace, no steps, or no judge.
    """

    reads: ClassVar[frozenset[str]] = frozenset({"output", "tool_calls"})

    def questions(self, case: EvalCase, trace: AgentTrace) -> list[Question] | Score:
        task = trace.task
        if task is None:
            return self.no_score(NO_TASK)
        judged = judged_part(trace.steps)
        if not judged:
            return self.no_score(NO_STEPS)
        asked: list[Question] = []
        first_call = 1
        for index, step in enumerate(judged):
            prior = (
                steps_text(trace.steps[:index])[0]
                if index
                else "(none: this is the agent's first step)"
            )
            asked.append(
                Question(
                    "step_faithfulness",
                    {
                        "task": task,
                        "prior_steps": prior,
                        "step": step_text(step, index + 1, first_call),
                    },
                    {"step": index + 1},
                )
            )
            first_call += len(step.tool_calls)
        return asked

    def score_verdicts(
        self, case: EvalCase, trace: AgentTrace, questions: list[Question], verdicts_: list[Score]
    ) -> Score:
        label = "weakest, step {step}"
        return self.mean_per_item(trace, (questions, verdicts_), "steps", label)


_EFFICIENCY_QUESTIONS = (
    "trajectory_efficiency_detours",
    "trajectory_efficiency_proportionate",
    "trajectory_efficiency_repeats",
)
_RECOVERY_QUESTION = "trajectory_efficiency_recovery"


@dataclass(frozen=True, kw_only=True)
class TrajectoryEfficiency(JudgedEvaluator):
    """Whether the agent took an efficient path to its answer, and recovered from failed calls.

    The judge answers three yes/no questions: did the agent complete the task without
    unnecessary detours; is the step count proportionate to the task; did it avoid repeating
    steps it had already completed. The base score is the share of yeses. When a tool call
    failed (it raised, its result reports an error as data, or its result is an error text such
    as `"Error: 404"`: see `agent_trace.failure_of`), the judge is also asked whether the agent
    handled the failure (retried differently, switched approach, or said clearly that it
    failed); a no takes 0.2 off, down to 0.0 at least.

    No score when there is no trace, no steps, or no judge.
    """

    reads: ClassVar[frozenset[str]] = frozenset({"output", "tool_calls"})

    def questions(self, case: EvalCase, trace: AgentTrace) -> list[Question] | Score:
        found = _trace_blocks(case, trace)
        if isinstance(found, str):
            return self.no_score(found)
        blocks, left_out = found
        asked = [
            Question(
                template_id,
                blocks,
                {"question": template_id.rpartition("_")[2], "steps_left_out": left_out},
            )
            for template_id in _EFFICIENCY_QUESTIONS
        ]
        failed = trace.failed_calls
        if failed:
            failures = "\n".join(f"[{i + 1}] {call.name}: {why}" for i, call, why in failed)
            asked.append(
                Question(
                    _RECOVERY_QUESTION, {**blocks, "failures": failures}, {"question": "recovery"}
                )
            )
        return asked

    def score_verdicts(
        self, case: EvalCase, trace: AgentTrace, questions: list[Question], verdicts_: list[Score]
    ) -> Score:
        base_verdicts = verdicts_[: len(_EFFICIENCY_QUESTIONS)]
        yes = sum(is_yes(v) for v in base_verdicts)
        base = yes / len(_EFFICIENCY_QUESTIONS)
        value = base
        reason = f"{yes} of {len(_EFFICIENCY_QUESTIONS)} efficiency questions answered yes"
        noes = [
            f"{q.about['question']}: {v.reason}"
            for q, v in zip(questions, base_verdicts, strict=False)
            if not is_yes(v)
        ]
        recovered: bool | None = None
        if len(verdicts_) > len(_EFFICIENCY_QUESTIONS):
            recovered = is_yes(verdicts_[-1])
            if recovered:
                reason += "; tool calls failed and the agent handled it"
            else:
                value = max(0.0, base - RECOVERY_PENALTY)
                reason += (
                    f"; tool calls failed and the agent did not handle it (-{RECOVERY_PENALTY:g})"
                )
                noes.append(f"recovery: {verdicts_[-1].reason}")
        if noes:
            reason += "; no to " + "; ".join(noes)
        details: dict[str, Any] = {
            "base_score": base,
            "steps_left_out": questions[0].about["steps_left_out"],
            "failed_calls": len(trace.failed_calls),
            "recovered": recovered,
            "penalty": RECOVERY_PENALTY if recovered is False else 0.0,
            "verdicts": verdicts(questions, verdicts_),
            "trace_source": trace.source,
        }
        return self.from_verdicts(verdicts_, value, reason, details)
