"""A tool error the SDK answers the model with by a handler of the user's own (a tool's
`failure_error_function`, its `timeout_error_function`, or the SDK's timeout message): the
SDK's `tool_error_formatter` never sees it, and the model goes on as after a result. The
trial's call still keeps the error, so `tool_execution` fails it and `tool_faithfulness` does
not count the handler's message as a source; what the model sees is unchanged. A call a tool
input guardrail rejected (`reject_content`) never ran: its call keeps the rejection as its
error, not as what the tool returned. A call whose output a tool output guardrail rejected did
run: its call keeps what the tool returned (the model was told the guardrail's message in its
place, which `metadata["tool_output_rejected"]` records), so the scorers reading a tool's
result see the tool's."""

from __future__ import annotations

import asyncio
from typing import Any

from agenteval import EvalCase
from agenteval.agents.frameworks.openai_agents import OpenAIAgentsAgent
from agenteval.scorers.tools.rungs import ToolExecution
from agents import (
    Agent,
    RunContextWrapper,
    ToolGuardrailFunctionOutput,
    function_tool,
    tool_input_guardrail,
    tool_output_guardrail,
)

from . import scripted
from .loopback import ScriptedServer

NOT_FOUND = "Sorry, that city is not available right now."


def polite(context: RunContextWrapper[Any], error: Exception) -> str:
    return NOT_FOUND


@function_tool(name_override="get_weather", failure_error_function=polite)
def politely_failing(city: str) -> str:
    """Today's weather in a city."""
    raise ValueError(f"unknown city: {city}")


async def _never(city: str) -> str:
    await asyncio.Event().wait()  # never set: only the tool's timeout ends it
    return "sunny"


slow = function_tool(_never, name_override="get_weather", timeout=0.01)
slow_and_polite = function_tool(
    _never,
    name_override="get_weather",
    timeout=0.01,
    timeout_error_function=lambda context, error: "The weather service is slow today.",
)


def _agent(server: ScriptedServer, *tools: Any) -> Agent[Any]:
    return Agent(
        name="weather",
        instructions="[agent:weather] Answer questions about the weather.",
        model=scripted.model(server.base_url),
        tools=list(tools),
    )


def _tool_messages(server: ScriptedServer, call_id: str) -> list[str]:
    return [
        m["content"]
        for body in server.requests
        for m in body["messages"]
        if m.get("tool_call_id") == call_id
    ]


async def test_a_tools_own_failure_function_answering_the_model_keeps_the_error(
    server: ScriptedServer,
) -> None:
    agent = _agent(server, politely_failing)
    trial = await OpenAIAgentsAgent(agent).run_case(EvalCase(input="Atlantis #61"))
    [call] = trial.tool_calls
    assert (call.name, call.id, call.error) == (
        "get_weather",
        "call_61_weather",
        "ValueError: unknown city: Atlantis",
    )
    assert call.result is None
    assert trial.output == "I could not find Atlantis (#61)."
    assert _tool_messages(server, "call_61_weather") == [NOT_FOUND]
    assert ToolExecution()(EvalCase(input="Atlantis #61"), trial).passed is False
    # The user's tool is the one they made: its handler is still theirs.
    assert agent.tools == [politely_failing]


async def test_a_tool_that_times_out_keeps_the_timeout_as_its_error(
    server: ScriptedServer,
) -> None:
    for tag, tool, seen in (
        ("62", slow, "timed out after 0.01 seconds"),
        ("63", slow_and_polite, "The weather service is slow today."),
    ):
        trial = await OpenAIAgentsAgent(_agent(server, tool)).run_case(
            EvalCase(input=f"Atlantis #{tag}")
        )
        [call] = trial.tool_calls
        assert call.result is None, tag
        assert call.error is not None and "timed out after 0.01 seconds" in call.error, tag
        assert call.error.startswith("ToolTimeoutError"), tag
        [message] = _tool_messages(server, f"call_{tag}_weather")
        assert seen in message, tag


RAN: list[str] = []


@tool_input_guardrail
def no_atlantis(data: Any) -> ToolGuardrailFunctionOutput:
    if "Atlantis" in data.context.tool_arguments:
        return ToolGuardrailFunctionOutput.reject_content("Atlantis lookups are not allowed.")
    return ToolGuardrailFunctionOutput.allow()


@function_tool(name_override="get_weather", tool_input_guardrails=[no_atlantis])
def guarded(city: str) -> str:
    """Today's weather in a city."""
    RAN.append(city)
    return "sunny, 18 C"


async def test_a_call_a_tool_input_guardrail_rejected_never_ran(server: ScriptedServer) -> None:
    case = EvalCase(input="Atlantis #64")
    trial = await OpenAIAgentsAgent(_agent(server, guarded)).run_case(case)
    [call] = trial.tool_calls
    assert RAN == []
    assert call.result is None
    assert call.error is not None and "Atlantis lookups are not allowed." in call.error
    assert _tool_messages(server, "call_64_weather") == ["Atlantis lookups are not allowed."]
    assert ToolExecution()(case, trial).passed is False
    # A call the guardrail lets through runs and answers as usual.
    agent = _agent(server, guarded, scripted.get_time)
    trial = await OpenAIAgentsAgent(agent).run_case(EvalCase(input="Paris #65"))
    weather = trial.tool_calls[0]
    assert (weather.name, weather.result, weather.error) == ("get_weather", "sunny, 18 C", None)


@tool_output_guardrail
def no_temperatures(data: Any) -> ToolGuardrailFunctionOutput:
    if " C" in str(data.output):
        return ToolGuardrailFunctionOutput.reject_content(
            "Temperatures are confidential.", output_info={"why": "temperature"}
        )
    return ToolGuardrailFunctionOutput.allow()


@function_tool(name_override="get_weather", tool_output_guardrails=[no_temperatures])
def output_guarded(city: str) -> str:
    """Today's weather in a city."""
    RAN.append(city)
    return "sunny, 18 C" if city == "Paris" else "no data"


async def test_a_call_whose_output_a_tool_output_guardrail_rejected_keeps_the_tools_result(
    server: ScriptedServer,
) -> None:
    # Before, the call's result was the guardrail's message: tool_faithfulness and
    # groundedness read "Temperatures are confidential." as what the tool returned.
    RAN.clear()
    agent = _agent(server, output_guarded, scripted.get_time)
    trial = await OpenAIAgentsAgent(agent).run_case(EvalCase(input="Paris #66"))
    weather, time = trial.tool_calls
    assert RAN == ["Paris"]
    assert (weather.name, weather.result, weather.error) == ("get_weather", "sunny, 18 C", None)
    assert (time.name, time.result) == ("get_time", "12:00")
    # The model was told the guardrail's message, and the trial says so.
    assert _tool_messages(server, "call_66_weather") == ["Temperatures are confidential."]
    assert trial.metadata["tool_output_rejected"] == [
        {
            "call_id": "call_66_weather",
            "tool": "get_weather",
            "guardrail": "no_temperatures",
            "message": "Temperatures are confidential.",
            "output_info": {"why": "temperature"},
        }
    ]
    # The user's tool keeps its own guardrail.
    assert output_guarded.tool_output_guardrails == [no_temperatures]
    # A call the guardrail lets through: its result as ever, nothing marked.
    trial = await OpenAIAgentsAgent(agent).run_case(EvalCase(input="Atlantis #67"))
    [call] = trial.tool_calls
    assert (call.result, call.error) == ("no data", None)
    assert _tool_messages(server, "call_67_weather") == ["no data"]
    assert "tool_output_rejected" not in trial.metadata
