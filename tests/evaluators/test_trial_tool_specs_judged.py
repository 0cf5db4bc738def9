"""`ToolArgumentAccuracy` shows the judge the schema of a tool the run does not declare when the
trial's own trace declares it (`Trial.tool_specs`); the run's own schema wins."""

from __future__ import annotations

from tests.evaluators.conftest import Script, block

from agenteval import EvalCase, ToolArgumentAccuracy, ToolCall, Trial
from agenteval.judge.judge import Judge
from agenteval.scorers.context import ScoringContext
from agenteval.trace import ToolSpec

CASE = EvalCase(input="Search")


def _spec(kind: str) -> ToolSpec:
    return ToolSpec(
        name="search", parameters={"type": "object", "properties": {"query": {"type": kind}}}
    )


async def test_the_traces_tool_schema_is_shown_when_the_run_has_none(
    script: Script, judge: Judge
) -> None:
    script.set(tool_argument_accuracy=1.0)
    trial = Trial(
        tool_calls=[ToolCall(name="search", arguments={"query": "x"})],
        tool_specs={"search": _spec("string")},
    )
    bound = ToolArgumentAccuracy().for_run(ScoringContext(judge=judge))
    assert (await bound(CASE, trial)).value == 1.0
    assert '"string"' in (block(script.asked[0][1], "tool_schema") or "")


async def test_the_runs_tool_schema_wins(script: Script, judge: Judge) -> None:
    script.set(tool_argument_accuracy=1.0)
    trial = Trial(tool_calls=[ToolCall(name="search")], tool_specs={"search": _spec("string")})
    context = ScoringContext(tools={"search": _spec("integer")}, judge=judge)
    assert (await ToolArgumentAccuracy().for_run(context)(CASE, trial)).value == 1.0
    shown = block(script.asked[0][1], "tool_schema") or ""
    assert '"integer"' in shown and '"string"' not in shown
