"""How the agent used its tools, one rung and one habit per scorer.

The rungs each fail for a different reason:

1. `ToolSelection`: it called every tool the case needs, as often as needed.
2. `ToolArgumentsValid`: every call named a real tool, with arguments its schema accepts.
3. `ToolExecution`: every call with valid arguments ran without an error.

And how it got there: `TrajectoryOrder` (the expected calls, in order), `StepEfficiency` (calls
needed over calls made) and `RedundantCalls` (no repeat of a call that already worked).

A call failed when it raised (`ToolCall.error` is set) or when its result reports an error
itself: a dict result (or a string holding a JSON object, as many tool wrappers return) with a
truthy `"error"` key, or with `"isError": true` (as MCP tools report errors). `call_error`
applies that rule.

None of them judges a trial that failed for an infrastructure reason (timeout, rate limit,
provider or connection error): each gives no score, with the cause (see
`agenteval.scorers.answer.not_judged`). A trial the agent itself failed is judged on the calls it
made.

The package, by job: `rungs` (the three rungs and `call_error`), `schemas` (checking a call's
arguments against its tool's JSON schema), `habits` (order, efficiency and repeats, with
`canonical_arguments`) and `verdicts` (the verdict of the per-call rungs, `call_error`, and the wording they share).
"""

from agenteval.scorers.tools.habits import (
    RedundantCalls,
    StepEfficiency,
    TrajectoryOrder,
    canonical_arguments,
)
from agenteval.scorers.tools.rungs import (
    ToolArgumentsValid,
    ToolExecution,
    ToolSelection,
)
from agenteval.scorers.tools.verdicts import call_error

__all__ = [
    "RedundantCalls",
    "StepEfficiency",
    "ToolArgumentsValid",
    "ToolExecution",
    "ToolSelection",
    "TrajectoryOrder",
    "call_error",
    "canonical_arguments",
]
