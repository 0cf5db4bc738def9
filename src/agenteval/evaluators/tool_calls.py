"""Evaluators of the agent's tool calls: which tools it called (`ToolCallAccuracy`), with what
arguments (`ToolArgumentAccuracy`), and whether each call was needed (`ToolCallNecessity`)."""

from __future__ import annotations

import json
import operator
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

from agenteval.case import EvalCase
from agenteval.criteria.matching import align_in_order
from agenteval.evaluators.agent_trace import (
    NO_TASK,
    AgentTrace,
    call_text,
    calls_text,
    judged_part,
)
from agenteval.evaluators.base import Evaluator, JudgedEvaluator
from agenteval.evaluators.judging import Question, is_yes
from agenteval.score import Score
from agenteval.trace import Trial

__all__ = ["ToolArgumentAccuracy", "ToolCallAccuracy", "ToolCallNecessity"]


def _listed(names: list[str]) -> str:
    """Tool names for a reason, each once, with how often it appears when more than once:
    `lookup_order, refund_order ×2`."""
    return ", ".join(n if c == 1 else f"{n} ×{c}" for n, c in Counter(names).items())


@dataclass(frozen=True, kw_only=True)
class ToolCallAccuracy(Evaluator):
    """Whether the agent called the case's expected tools (`expected_tool_calls`).

    By default a set match, as multivon-eval has it: the distinct expected tools that were called
    (at least once), over the distinct expected tools. `[search, search]` against one `search`
    call scores 1.0. With `count_repeats=True` each listing needs a call of its own: a tool
    listed twice needs two calls (0.5 there).

    With `require_order=True` the expected tools must come in their order: the score is the
    longest common subsequence of the expected and the called tools over the number expected,
    so `[send_email, search, book]` against `[search, weather, book]` scores 2/3. An order is a
    sequence, so repeats always count there (`count_repeats` changes nothing).

    Calls of tools the case does not expect are named in the reason. With
    `penalize_unexpected=True` (multivon-eval's strict mode) they also lower the score: matched
    over expected and unexpected together, `matched / |expected ∪ unexpected|`. Expected
    `[lookup_order]` with `lookup_order` and `refund_order` called scores 1/2. Unexpected tools
    are counted the way the expected ones are: each distinct tool once in a set match, every
    call with `count_repeats` or `require_order`. A call of an expected tool made out of order
    is missing, never unexpected.

    An empty `expected_tool_calls` (`[]`) is an expectation: no tool call. It scores 1.0 when
    the agent called no tool and 0.0 when it called any (the reason names them), whatever the
    settings. No score when the case has no `expected_tool_calls`, or when there is no trace
    (without one nothing shows what was called). Deterministic: no judge.
    """

    reads: ClassVar[frozenset[str]] = frozenset({"tool_calls", "tool_arguments"})

    require_order: bool = False
    penalize_unexpected: bool = False
    count_repeats: bool = False

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        expected = case.expected_tools
        if expected is None:
            return self.no_score(
                "no expected_tool_calls in the case (set [] to expect no tool call)"
            )
        found = self.trace_or_skip(case, trial)
        if isinstance(found, Score):
            return found
        called = [call.name for call in found.calls]
        details: dict[str, Any] = {
            "expected": list(expected),
            "called": called,
            "require_order": self.require_order,
            "penalize_unexpected": self.penalize_unexpected,
            "count_repeats": self.count_repeats,
            "trace_source": found.source,
        }
        if not expected:
            details.update(matched=0, missing=[], unexpected=list(dict.fromkeys(called)))
            if not called:
                return self.scored(1.0, "no tools expected, none called", **details)
            return self.scored(0.0, f"no tools expected, but called: {_listed(called)}", **details)
        counted = self.require_order or self.count_repeats
        missing, size = self._missing(expected, called)
        matched = size - len(missing)
        known = set(expected)
        unexpected_calls = [name for name in called if name not in known]
        unexpected = list(dict.fromkeys(unexpected_calls))
        extra = len(unexpected_calls) if counted else len(unexpected)
        out_of = size + extra if self.penalize_unexpected else size
        details.update(matched=matched, missing=missing, unexpected=unexpected, out_of=out_of)

        what = "calls" if counted else "tools"
        how = " in the expected order" if self.require_order else ""
        parts = [f"called {matched} of {size} expected {what}{how}"]
        if missing:
            left_word = "missing or out of order" if self.require_order else "missing"
            parts.append(f"{left_word}: {_listed(missing)}")
        if unexpected:
            shown = _listed(unexpected_calls) if counted else ", ".join(unexpected)
            if self.penalize_unexpected:
                parts.append(
                    f"unexpected: {shown}; scored {matched} of {out_of}, expected and "
                    "unexpected together (penalize_unexpected)"
                )
            else:
                parts.append(f"unexpected: {shown} (not penalized)")
        return self.scored(matched / out_of, "; ".join(parts), **details)

    def _missing(self, expected: list[str], called: list[str]) -> tuple[list[str], int]:
        """The expected tools no call matched, and how many there were to match: every
        listing in order (`require_order`) or in any order (`count_repeats`), else each
        distinct tool once."""
        if self.require_order:
            alignment = align_in_order(expected, called, operator.eq)
            return [expected[i] for i in alignment.missing], len(expected)
        if self.count_repeats:
            left = Counter(called)
            missing = []
            for tool in expected:
                if left[tool]:
                    left[tool] -= 1
                else:
                    missing.append(tool)
            return missing, len(expected)
        wanted = list(dict.fromkeys(expected))
        made = set(called)
        return [tool for tool in wanted if tool not in made], len(wanted)


def _call_question(
    template_id: str, task: str, trace: AgentTrace, index: int, **more: str
) -> Question:
    """The question about the trace's call `index`, with the task and the calls before it in
    view (and `more` blocks)."""
    call = trace.calls[index]
    prior = trace.calls[:index]
    blocks = {
        "task": task,
        "prior_calls": calls_text(prior)
        if prior
        else "(none: this is the agent's first tool call)",
        "call": call_text(call, index + 1),
        **more,
    }
    return Question(template_id, blocks, {"call": index + 1, "tool": call.name})


@dataclass(frozen=True, kw_only=True)
class ToolArgumentAccuracy(JudgedEvaluator):
    """Whether the arguments of each tool call were appropriate for the task and well formed.

    The judge rates each call (0..1) with the task, the calls before it and, when the run knows
    it (or else the trial's trace declares it), the tool's JSON schema in view; the score is the mean. Up to 8 calls are judged, the
    first 8; `details["left_out"]` says how many were not.

    No score when there is no trace or no tool call (even when the case expects none: with no
    call there is no argument to rate, and `ToolCallAccuracy` scores whether calls were
    expected), or no judge.
    """

    reads: ClassVar[frozenset[str]] = frozenset({"tool_calls", "tool_arguments"})

    def questions(self, case: EvalCase, trace: AgentTrace) -> list[Question] | Score:
        task = trace.task
        if task is None:
            return self.no_score(NO_TASK)
        judged = judged_part(trace.calls)
        if not judged:
            return self.no_score(
                "no tool calls to judge: arguments exist only on calls made (whether a call "
                "was expected is tool_call_accuracy's question)"
            )
        tools = self._run.tools if self._run is not None else {}
        asked: list[Question] = []
        for index, call in enumerate(judged):
            spec = tools.get(call.name) or trace.tool_specs.get(call.name)
            schema = (
                {}
                if spec is None
                else {"tool_schema": json.dumps(spec.parameters, ensure_ascii=False)}
            )
            asked.append(_call_question("tool_argument_accuracy", task, trace, index, **schema))
        return asked

    def score_verdicts(
        self, case: EvalCase, trace: AgentTrace, questions: list[Question], verdicts_: list[Score]
    ) -> Score:
        label = "lowest, call {call} ({tool})"
        return self.mean_per_item(trace, (questions, verdicts_), "calls", label)


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

    reads: ClassVar[frozenset[str]] = frozenset({"tool_calls"})

    def questions(self, case: EvalCase, trace: AgentTrace) -> list[Question] | Score:
        if not trace.calls:
            return self.scored(1.0, "no tool calls made", calls=0, trace_source=trace.source)
        task = trace.task
        if task is None:
            return self.no_score(NO_TASK)
        judged = judged_part(trace.calls)
        return [
            _call_question("tool_call_necessity", task, trace, index)
            for index in range(len(judged))
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
