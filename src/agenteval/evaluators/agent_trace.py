"""The trace an evaluator reads (`AgentTrace`, `read_trace`), and its text for judge prompts.

A trial's own record comes first: its `steps`, else its flattened `tool_calls` (an agent whose
`@tool` calls were recorded, with no steps of its own). When the trial recorded neither, the
case's `agent_trace` is the trace (the agent evaluators' way: the trace is built beforehand and
the agent, if any, gives the final answer). The final answer is the trial's `output`, else the
last step output of the trace.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from agenteval.case import EvalCase
from agenteval.judge.played import case_question
from agenteval.redaction import masked_json
from agenteval.scorers.tools import call_error
from agenteval.trace import AgentStep, ToolCall, ToolSpec, Trial

__all__ = [
    "MAX_JUDGED",
    "NO_TASK",
    "AgentTrace",
    "call_text",
    "calls_text",
    "failure_of",
    "judged_part",
    "read_trace",
    "step_text",
    "steps_text",
    "task_text",
]

T = TypeVar("T")

NO_TASK = "no input in the case: the judge needs the task"
"""Why a judged evaluator gives no score to a case without an input."""

MAX_JUDGED = 8
"""At most this many tool calls or steps of a trace are judged one by one (as multivon-eval
caps them)."""

MAX_VALUE_CHARS = 2_000
"""Each result, argument list, thought or output is cut to this many characters in a prompt."""
MAX_TRACE_CHARS = 24_000
"""A whole rendered trace is cut to about this many characters (later steps are left out)."""


@dataclass(frozen=True)
class AgentTrace:
    """What the agent did: its steps, in order, and its final answer."""

    steps: tuple[AgentStep, ...]
    output: str | None
    source: Literal["trial", "case"]
    """Where the steps come from: the trial's own record, or the case's `agent_trace`."""
    tool_specs: Mapping[str, ToolSpec] = field(default_factory=dict)
    """The tools the trial's own trace says the model was offered (`Trial.tool_specs`)."""
    task: str | None = None
    """The task the agent was given, as the trial played it (`task_text`): None when the user
    said nothing."""

    @property
    def calls(self) -> list[ToolCall]:
        """Every tool call, in order."""
        return [call for step in self.steps for call in step.tool_calls]

    @property
    def failed_calls(self) -> list[tuple[int, ToolCall, str]]:
        """Each call that failed (see `failure_of`): index, call, why."""
        failed: list[tuple[int, ToolCall, str]] = []
        for index, call in enumerate(self.calls):
            error = failure_of(call)
            if error is not None:
                failed.append((index, call, error))
        return failed


# A text result that is an error report: "Error: 404", "ERROR 500", "Exception: ...", a traceback.
_ERROR_TEXT = re.compile(
    r"^\s*(?:(?:error|exception)\s*(?::|\d|$)|traceback \(most recent call last\))", re.I
)


def failure_of(call: ToolCall) -> str | None:
    """Why a call failed, or None when it worked: `scorers.tools.call_error` (it raised, or its
    result reports an error as data), or a text result that is an error report (`"Error: 404"`,
    as traces recorded from frameworks that turn tool errors into text carry them)."""
    error = call_error(call)
    if error is None and isinstance(call.result, str) and _ERROR_TEXT.match(call.result):
        error = f"result reports an error: {_text(call.result.strip())}"
    return error


def read_trace(case: EvalCase, trial: Trial) -> AgentTrace | None:
    """The trace of this trial (see the module docs), or None when there is none: the trial
    recorded no step, no tool call and no answer, and the case carries no `agent_trace`."""
    steps: tuple[AgentStep, ...]
    source: Literal["trial", "case"] = "trial"
    if trial.steps:
        steps = tuple(trial.steps)
    elif trial.tool_calls:
        steps = (AgentStep(tool_calls=list(trial.tool_calls)),)
    elif case.agent_trace is not None:
        steps, source = tuple(case.agent_trace), "case"
    elif trial.output:
        steps = ()
    else:
        return None
    output = trial.output or next((s.output for s in reversed(steps) if s.output), None)
    return AgentTrace(
        steps=steps,
        output=output,
        source=source,
        tool_specs=trial.tool_specs,
        task=task_text(case, trial),
    )


def _text(value: Any) -> str:
    # Data is masked while it is still data (`masked_json`: the judge's text redaction cannot
    # tell plain words under `password` from any other words) and cut when deep or circular.
    text = value if isinstance(value, str) else masked_json(value)
    if len(text) > MAX_VALUE_CHARS:
        return text[:MAX_VALUE_CHARS] + " …[cut]"
    return text


def call_text(call: ToolCall, number: int) -> str:
    """One call as a prompt shows it: `[n] name({arguments})`, then what it returned or why it
    failed."""
    head = f"[{number}] {call.name}({_text(call.arguments)})"
    error = failure_of(call)
    if call.error is not None:
        return f"{head}\n    failed: {_text(call.error)}"
    if call.result is None:
        return f"{head}\n    returned nothing"
    outcome = "returned (reporting an error)" if error else "returned"
    return f"{head}\n    {outcome}: {_text(call.result)}"


def calls_text(calls: list[ToolCall], *, first_number: int = 1) -> str:
    """Calls as a prompt shows them, numbered from `first_number`."""
    return "\n".join(call_text(call, first_number + i) for i, call in enumerate(calls))


def step_text(step: AgentStep, number: int, first_call: int) -> str:
    """One step: its thought, its calls (numbered from `first_call`) and its output."""
    lines = [f"Step {number}"]
    if step.thought:
        lines.append(f"  thought: {_text(step.thought)}")
    for offset, call in enumerate(step.tool_calls):
        lines.append("  " + call_text(call, first_call + offset).replace("\n", "\n  "))
    if step.output:
        lines.append(f"  output: {_text(step.output)}")
    if len(lines) == 1:
        lines.append("  (an empty step)")
    return "\n".join(lines)


def steps_text(steps: tuple[AgentStep, ...] | list[AgentStep]) -> tuple[str, int]:
    """Steps as a prompt shows them, and how many were left out to keep the text within
    `MAX_TRACE_CHARS`."""
    parts: list[str] = []
    total = 0
    first_call = 1
    for index, step in enumerate(steps):
        part = step_text(step, index + 1, first_call)
        first_call += len(step.tool_calls)
        if parts and total + len(part) > MAX_TRACE_CHARS:
            left_out = len(steps) - index
            parts.append(f"[{left_out} later steps left out for length]")
            return "\n\n".join(parts), left_out
        parts.append(part)
        total += len(part)
    return "\n\n".join(parts), 0


def judged_part(items: Sequence[T]) -> list[T]:
    """The items judged one by one: the first `MAX_JUDGED`."""
    return list(items[:MAX_JUDGED])


def task_text(case: EvalCase, trial: Trial | None = None) -> str | None:
    """The task the agent was given (the case input, or its conversation's user turns; a
    simulated user's messages as `trial` played them: `judge.played.user_words`), or None when
    there is none."""
    text = case_question(case, trial)
    return text if text.strip() else None
