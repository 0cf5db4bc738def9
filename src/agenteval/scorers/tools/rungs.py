"""The three rungs of using tools: `ToolSelection` (every needed tool called), `ToolArgumentsValid`
(every call valid against its schema) and `ToolExecution` (every valid call ran without an
error)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from agenteval.case import EvalCase
from agenteval.score import Score
from agenteval.scorers.answer import no_answer_reason, not_judged
from agenteval.scorers.redacted import from_store, holds_redacted, undecided
from agenteval.scorers.scores import binary_score, no_score
from agenteval.scorers.text import EXCERPT_ITEMS, excerpt
from agenteval.scorers.tools.habits import canonical_arguments
from agenteval.scorers.tools.schemas import Validators, argument_problem, known_tools
from agenteval.scorers.tools.verdicts import call_error, calls, calls_or_skip, per_call, times
from agenteval.trace import ToolSpec, Trial

# --- 1. tool_selection ---------------------------------------------------------------------------


def _counts(names: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return counts


@dataclass(frozen=True)
class ToolSelection:
    """The agent called every tool in the case's `expected_tools`, as often as it is listed.

    `expected_tools` is a multiset: a tool listed twice must be called at least twice. Every
    call counts, whether or not it worked (later rungs judge that), and calls of other tools do
    not hurt. Answering from memory, without the calls, fails even when the answer is right.

    Applies when the case sets `expected_tools`; an explicit empty list means the case needs no
    tool, and passes (calls made anyway are `StepEfficiency`'s question, and the reason says
    so). Not judged when the trial failed for an infrastructure reason (`Trial.responded` is
    False); a trial the agent itself failed is judged on the calls it made. Binary: 1.0 or 0.0.
    """

    name: str = "tool_selection"
    threshold: float = 1.0
    reads: ClassVar[frozenset[str]] = frozenset({"tool_calls"})
    """The trial fields it reads (`scorers.recorded`)."""

    def declines(self, case: EvalCase) -> str | None:
        """Why it does not apply to `case`, whatever the trial did (`scorers.recorded`)."""
        return "no expected_tools in the case" if case.expected_tools is None else None

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        if case.expected_tools is None:
            return no_score(self.name, "no expected_tools in the case")
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        # Counted into plain dicts (in first-seen order, as a Counter counts): 2.2 -> 1.6 us.
        needed = _counts(case.expected_tools)
        called = _counts([call.name for call in trial.tool_calls])
        missing = {
            tool: count - called.get(tool, 0)
            for tool, count in needed.items()
            if called.get(tool, 0) < count
        }
        details: dict[str, Any] = {
            "needed": dict(needed),
            "called": dict(called),
            "missing": missing,
        }
        if not needed:
            # Calls nobody needed are not this rung's question; say so, or the pass reads as
            # approval of them. step_efficiency scores them (0 when none were needed).
            made = len(trial.tool_calls)
            reason = "no tools needed"
            if made:
                reason += f"; the {calls(made)} made are step_efficiency's question, not this one"
            return binary_score(self.name, True, reason, details)
        if not missing:
            listed = ", ".join(f"{tool} ({times(count)})" for tool, count in needed.items())
            return binary_score(self.name, True, f"called every needed tool: {listed}", details)
        if not trial.tool_calls:
            listed = ", ".join(f"{tool} ({times(count)})" for tool, count in needed.items())
            if (trial.output or "").strip():
                reason = f"answered without calling any tool; needed {listed}"
            else:
                reason = f"called no tool; needed {listed}; {no_answer_reason(trial)}"
            return binary_score(self.name, False, reason, details)
        shortfalls = [
            f"{tool} never called"
            if called.get(tool, 0) == 0
            else f"{tool} called {times(called[tool])}, needed {needed[tool]}"
            for tool in missing
        ]
        return binary_score(self.name, False, "; ".join(shortfalls), details)


@dataclass(frozen=True)
class ToolArgumentsValid:
    """Every tool call named a known tool, with arguments its JSON schema accepts.

    The known tools are the run's `tools` by name, and for a tool the run does not declare, the
    trial's own `tool_specs` (the tools its trace says the model was offered:
    `gen_ai.tool.definitions`, `llm.tools.*`, ..., live or from a trace file). Their
    `parameters` are JSON schemas, checked with the Draft 2020-12 validator. A call of a tool
    known to neither is invalid.

    Applies when the trial made at least one tool call and some tools are known (without a
    tool list there is no telling a real tool from an invented one; an empty mapping counts as
    unknown). Not judged when the trial failed for an infrastructure reason, nor in a rescore
    when an invalid call's stored arguments hold a masked secret (`scorers.redacted`). Binary:
    1.0 or 0.0; `details["invalid"]` lists each invalid call.
    """

    tools: Mapping[str, ToolSpec] | None = None
    name: str = "tool_arguments_valid"
    threshold: float = 1.0
    reads: ClassVar[frozenset[str]] = frozenset({"tool_calls", "tool_arguments"})
    """The trial fields it reads (`scorers.recorded`)."""
    _validators: Validators = field(default_factory=dict, init=False, repr=False, compare=False)

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        tools = known_tools(self.tools, trial)
        if not tools:
            return Score(
                name=self.name,
                reason="no tool schemas known for this run (nor in the trial's trace)",
            )
        skipped = calls_or_skip(self.name, trial)
        if skipped is not None:
            return skipped
        invalid: list[dict[str, Any]] = []
        for index, call in enumerate(trial.tool_calls):
            problem = argument_problem(call, tools, self._validators)
            if problem is not None:
                # A rescore reads a secret-named argument as the string `[REDACTED]`, whatever
                # it was: an invalid call holding the mark cannot be told from the store.
                if from_store() and holds_redacted(canonical_arguments(call.arguments)):
                    return undecided(self.name)
                # The problem may quote the bad value whole: an excerpt, as every detail.
                invalid.append({"index": index, "name": call.name, "problem": excerpt(problem)})
        total = len(trial.tool_calls)
        details: dict[str, Any] = {"calls": total, "invalid": invalid[:EXCERPT_ITEMS]}
        passed = f"all {total} calls valid"
        return per_call(
            self.name,
            invalid,
            total,
            said="invalid",
            what="problem",
            passed=passed,
            details=details,
        )


@dataclass(frozen=True)
class ToolExecution:
    """Every tool call with valid arguments ran without an error (see `call_error`).

    Calls with invalid arguments are left to `ToolArgumentsValid` (against the run's `tools`,
    and the trial's `tool_specs` for tools the run does not declare); when no tools are known,
    every call counts as having valid arguments.

    A call a mock answered with an error (`error:` in `tool_mocks`) is left out: the case
    injected that failure. Applies when at least one other call had valid arguments. Not judged when the trial failed for an
    infrastructure reason. Binary: 1.0 or 0.0; `details["failed"]` lists each failed call.
    """

    tools: Mapping[str, ToolSpec] | None = None
    name: str = "tool_execution"
    threshold: float = 1.0
    reads: ClassVar[frozenset[str]] = frozenset({"tool_calls", "tool_results"})
    """The trial fields it reads (`scorers.recorded`)."""
    _validators: Validators = field(default_factory=dict, init=False, repr=False, compare=False)

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        skipped = calls_or_skip(self.name, trial)
        if skipped is not None:
            return skipped
        tools = known_tools(self.tools, trial)
        # A mock's injected error is the failure the case asked for, not the agent's: whether
        # the agent handled it is for the answer and the state to show. (A replayed error was
        # the world's in the recorded run, and counts there as here.)
        calls = [
            (index, call)
            for index, call in enumerate(trial.tool_calls)
            if not (call.mocked == "mock" and call.error is not None)
        ]
        checked = [
            (index, call)
            for index, call in calls
            if not tools or argument_problem(call, tools, self._validators) is None
        ]
        if not checked:
            return Score(
                name=self.name,
                reason="no call had valid arguments (tool_arguments_valid reports them)"
                if calls
                else "every call was answered by a mock's injected error (the case's own)",
            )
        failed: list[dict[str, Any]] = []
        for index, call in checked:
            error = call_error(call)
            if error is not None:
                failed.append({"index": index, "name": call.name, "error": excerpt(error)})
        details: dict[str, Any] = {"checked": len(checked), "failed": failed[:EXCERPT_ITEMS]}
        passed = f"all {len(checked)} calls ran without error"
        return per_call(
            self.name,
            failed,
            len(checked),
            said="failed",
            what="error",
            passed=passed,
            details=details,
        )
