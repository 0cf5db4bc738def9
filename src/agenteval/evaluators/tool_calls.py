"""Evaluators of the agent's tool calls: which tools it called (`ToolCallAccuracy`), with what
arguments (`ToolArgumentAccuracy`), and whether each call was needed (`ToolCallNecessity`)."""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass
from typing import Any

from agenteval.case import EvalCase
from agenteval.criteria.matching import align_any_order, align_in_order
from agenteval.evaluators.agent_trace import (
    NO_TASK,
    AgentTrace,
    call_text,
    calls_text,
    judged_part,
    task_text,
)
from agenteval.evaluators.base import Evaluator, JudgedEvaluator
from agenteval.evaluators.judging import Question, is_yes, lowest, mean_value
from agenteval.score import Score
from agenteval.trace import Trial

__all__ = ["ToolArgumentAccuracy", "ToolCallAccuracy", "ToolCallNecessity"]


@dataclass(frozen=True, kw_only=True)
class ToolCallAccuracy(Evaluator):
    """The share of the case's expected tools (`expected_tool_calls`) that the agent called.

    By default order does not matter: each expected tool is matched by a call of it (a tool
    listed twice needs two calls). With `require_order=True` the expected tools must come in
    their order: the score is the longest common subsequence of the expected and the called
    tools over the number expected, so `[send_email, search, book]` against
    `[search, weather, book]` scores 2/3 (search and book, in order).

    No score when the case has no (or an empty) `expected_tool_calls`, or there is no trace.
    Deterministic: no judge.
    """

    require_order: bool = False

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        expected = case.expected_tools
        if expected is None:
            return self.no_score("no expected_tool_calls in the case")
        if not expected:
            return self.no_score("the case's expected_tool_calls is empty: nothing to match")
        found = self.trace_or_skip(case, trial)
        if isinstance(found, Score):
            return found
        called = [call.name for call in found.calls]
        align = align_in_order if self.require_order else align_any_order
        alignment = align(expected, called, operator.eq)
        missing = [expected[i] for i in alignment.missing]
        details: dict[str, Any] = {
            "expected": list(expected),
            "called": called,
            "matched": alignment.matched,
            "missing": missing,
            "require_order": self.require_order,
            "trace_source": found.source,
        }
        how = " in the expected order" if self.require_order else ""
        reason = f"called {alignment.matched} of {len(expected)} expected tools{how}"
        if missing:
            left = "missing or out of order" if self.require_order else "missing"
            reason += f"; {left}: {', '.join(missing)}"
        return self.scored(alignment.recall, reason, **details)


def _prior_calls(trace: AgentTrace, index: int) -> str:
    prior = trace.calls[:index]
    if not prior:
        return "(none: this is the agent's first tool call)"
    return calls_text(prior)


@dataclass(frozen=True, kw_only=True)
class ToolArgumentAccuracy(JudgedEvaluator):
    """Whether the arguments of each tool call were appropriate for the task and well formed.

    The judge rates each call (0..1) with the task, the calls before it and, when the run knows
    it, the tool's JSON schema in view; the score is the mean. Up to 8 calls are judged, the
    first 8; `details["left_out"]` says how many were not.

    No score when there is no trace or no tool call, or no judge.
    """

    def questions(self, case: EvalCase, trace: AgentTrace) -> list[Question] | Score:
        task = task_text(case)
        if task is None:
            return self.no_score(NO_TASK)
        judged = judged_part(trace.calls)
        if not judged:
            return self.no_score("no tool calls to judge")
        tools = self._run.tools if self._run is not None else {}
        asked: list[Question] = []
        for index, call in enumerate(judged):
            blocks = {
                "task": task,
                "prior_calls": _prior_calls(trace, index),
                "call": call_text(call, index + 1),
            }
            spec = tools.get(call.name)
            if spec is not None:
                blocks["tool_schema"] = json.dumps(spec.parameters, ensure_ascii=False)
            asked.append(
                Question("tool_argument_accuracy", blocks, {"call": index + 1, "tool": call.name})
            )
        return asked

    def score_verdicts(
        self, case: EvalCase, trace: AgentTrace, questions: list[Question], verdicts_: list[Score]
    ) -> Score:
        worst = lowest(questions, verdicts_)
        note = None
        if worst is not None:
            question, verdict = worst
            note = (
                f"lowest, call {question.about['call']} ({question.about['tool']}): "
                f"{verdict.reason}"
            )
        return self.per_item(
            trace,
            questions,
            verdicts_,
            unit="calls",
            total=len(trace.calls),
            value=mean_value(verdicts_),
            summary=f"mean over {len(questions)} judged calls",
            note=note,
        )


@dataclass(frozen=True, kw_only=True)
class ToolCallNecessity(JudgedEvaluator):
    """Whether each tool call was needed, or redundant given what the agent already knew.

    For each call the judge sees the task and every call before it (with what it returned) and
    answers: "Given what the agent already knows from prior tool calls, was calling this tool
    with these arguments strictly necessary to make progress on the task?" The score is the
    calls judged necessary over the calls judged: a search repeated with the same query scores
    0.5. Up to 8 calls are judged, the first 8 (`details["left_out"]` says how many were not).

    1.0 when the trace has no tool call (nothing was called needlessly). No score when there is
    no trace, or no judge.
    """

    def questions(self, case: EvalCase, trace: AgentTrace) -> list[Question] | Score:
        if not trace.calls:
            return self.scored(1.0, "no tool calls made", calls=0, trace_source=trace.source)
        task = task_text(case)
        if task is None:
            return self.no_score(NO_TASK)
        judged = judged_part(trace.calls)
        return [
            Question(
                "tool_call_necessity",
                {
                    "task": task,
                    "prior_calls": _prior_calls(trace, index),
                    "call": call_text(call, index + 1),
                },
                {"call": index + 1, "tool": call.name},
            )
            for index, call in enumerate(judged)
        ]

    def score_verdicts(
        self, case: EvalCase, trace: AgentTrace, questions: list[Question], verdicts_: list[Score]
    ) -> Score:
        necessary = sum(is_yes(v) for v in verdicts_)
        needless = next(
            ((q, v) for q, v in zip(questions, verdicts_, strict=True) if not is_yes(v)), None
        )
        note = None
        if needless is not None:
            question, verdict = needless
            note = (
                f"call {question.about['call']} ({question.about['tool']}) was not: "
                f"{verdict.reason}"
            )
        return self.per_item(
            trace,
            questions,
            verdicts_,
            unit="calls",
            total=len(trace.calls),
            value=necessary / len(questions),
            summary=f"{necessary} of {len(questions)} calls necessary",
            note=note,
            necessary=necessary,
        )
