"""`tool_arguments_valid` (and `tool_execution`, which leaves invalid calls to it) check each call
against the run's tools and, for a tool the run does not declare, against the trial's own
`tool_specs`: the tools its trace says the model was offered. So it applies to trace files and
live OpenTelemetry capture, where the schemas come from the spans.

The first test failed before: with no run tools, the scorer said "no tool schemas known".
"""

from __future__ import annotations

from agenteval.case import EvalCase
from agenteval.scorers.builtin import builtin_scorer
from agenteval.trace import ToolCall, ToolSpec, Trial

WEATHER = ToolSpec(
    name="get_weather",
    description="Weather for a city",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)
TIME = ToolSpec(
    name="get_time", parameters={"type": "object", "properties": {"tz": {"type": "string"}}}
)
CASE = EvalCase(input="Weather in Paris?")


def traced(*calls: ToolCall) -> Trial:
    return Trial(
        output="sunny",
        tool_calls=list(calls),
        tool_specs={"get_weather": WEATHER, "get_time": TIME},
    )


def test_calls_are_checked_against_the_tools_the_trace_declares() -> None:
    scorer = builtin_scorer("tool_arguments_valid")  # the run declares no tools
    good = traced(ToolCall(name="get_weather", arguments={"city": "Paris"}))
    assert scorer(CASE, good).value == 1.0
    bad = traced(ToolCall(name="get_weather", arguments={"city": 75}))
    result = scorer(CASE, bad)
    assert result.value == 0.0
    assert (
        result.reason
        == "1 of 1 calls invalid; call 1 (get_weather): city: 75 is not of type 'string'"
    )
    invented = traced(ToolCall(name="get_wether", arguments={"city": "Paris"}))
    result = scorer(CASE, invented)
    assert result.value == 0.0
    assert "unknown tool 'get_wether' (did you mean 'get_weather'?)" in (result.reason or "")


def test_the_runs_own_tools_win_and_the_trace_fills_in_the_rest() -> None:
    # The run declares get_weather with an integer city; the trace's string schema is not used.
    run_weather = WEATHER.model_copy(
        update={"parameters": {"type": "object", "properties": {"city": {"type": "integer"}}}}
    )
    scorer = builtin_scorer("tool_arguments_valid", {"get_weather": run_weather})
    trial = traced(
        ToolCall(name="get_weather", arguments={"city": 75}),
        ToolCall(name="get_time", arguments={"tz": "CET"}),  # known from the trace only
    )
    assert scorer(CASE, trial).value == 1.0
    wrong_time = traced(ToolCall(name="get_time", arguments={"tz": 1}))
    assert scorer(CASE, wrong_time).value == 0.0


def test_without_a_schema_anywhere_the_scorer_does_not_apply_as_before() -> None:
    scorer = builtin_scorer("tool_arguments_valid")
    result = scorer(CASE, Trial(tool_calls=[ToolCall(name="get_weather")]))
    assert result.value is None
    assert result.reason == "no tool schemas known for this run (nor in the trial's trace)"


def test_each_trial_brings_its_own_copy_of_a_tool_and_is_checked_against_it() -> None:
    scorer = builtin_scorer("tool_arguments_valid")
    loose = WEATHER.model_copy(update={"parameters": {"type": "object"}})
    first = traced(ToolCall(name="get_weather", arguments={"city": 1}))
    second = Trial(
        tool_calls=[ToolCall(name="get_weather", arguments={"city": 1})],
        tool_specs={"get_weather": loose},
    )
    third = traced(ToolCall(name="get_weather", arguments={"city": 1}))
    assert [scorer(CASE, t).value for t in (first, second, third)] == [0.0, 1.0, 0.0]


def test_tool_execution_leaves_calls_invalid_against_the_trace_to_tool_arguments_valid() -> None:
    scorer = builtin_scorer("tool_execution")
    trial = traced(
        ToolCall(name="get_weather", arguments={"city": 75}, error="TypeError: not a city"),
        ToolCall(name="get_time", arguments={"tz": "CET"}, result="12:00"),
    )
    result = scorer(CASE, trial)
    assert result.value == 1.0
    assert result.reason == "all 1 calls ran without error"
