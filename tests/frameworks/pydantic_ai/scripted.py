"""pydantic-ai agents on a scripted `FunctionModel` (offline), as the adapter's tests run them.

The model reads the user prompt of the current turn and what the tools answered so far, and
plays the same script for the same prompt, so concurrent trials are comparable:
- first, one `get_weather` call per city the prompt names, all in one response (parallel);
  "badargs" in the prompt sends `{"town": ...}` instead of `{"city": ...}` (invalid arguments);
  "crash" then calls `explode`, whose tool raises, once the other calls answered;
- a call the framework answered `retried` (a `ModelRetry`, invalid arguments) is made again
  with the city capitalised, under its own argument name;
- then the answer, from what the tools returned (or, for the memory agent, from the history).

`get_weather` raises `ModelRetry` for a city written in lower case: the model then retries it.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

WEATHER = {"Paris": "sunny", "Rome": "rainy", "Oslo": "snowy", "Lisbon": "windy", "Porto": "misty"}
CITY = re.compile(r"\b(paris|rome|oslo|lisbon|porto)\b", re.IGNORECASE)
MODEL = "acme-mini"
"""The model name every scripted response carries (priced in the tests)."""


def usage_of(step: int) -> RequestUsage:
    """What the scripted model reports for the `step`-th response of a turn."""
    return RequestUsage(
        input_tokens=100 + 10 * step,
        output_tokens=5 + step,
        cache_read_tokens=4 * step,
        details={"reasoning_tokens": step},
    )


def _turn(messages: list[ModelMessage]) -> tuple[str, list[ModelMessage]]:
    """The current turn's user prompt and the messages since it."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content, messages[index + 1 :]
    return "", []


def _fixed(call: ToolCallPart) -> ToolCallPart:
    """The call made again, with the city capitalised and under the right argument name."""
    args = call.args_as_dict()
    city = str(args.get("city") or args.get("town") or "").capitalize()
    return ToolCallPart(call.tool_name, {"city": city}, tool_call_id=f"{call.tool_call_id}-again")


async def weather_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The weather script (see the module's docstring)."""
    await asyncio.sleep(random.uniform(0, 0.003))  # let concurrent trials interleave
    prompt, since = _turn(messages)
    step = sum(isinstance(m, ModelResponse) for m in since)
    if step == 0:
        key = "town" if "badargs" in prompt else "city"
        parts: list[Any] = [
            ToolCallPart("get_weather", {key: city}, tool_call_id=f"w{n}-{city}")
            for n, city in enumerate(CITY.findall(prompt))
        ]
        if parts:
            return ModelResponse(parts=parts, usage=usage_of(step), model_name=MODEL)
    calls = {
        part.tool_call_id: part
        for message in since
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    }
    returns = [
        part
        for message in since
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == "get_weather"
    ]
    latest = since[-1].parts if since and isinstance(since[-1], ModelRequest) else []
    retried = [
        part
        for part in latest
        if isinstance(part, ToolReturnPart)
        and part.tool_name == "get_weather"
        and part.outcome == "retried"
    ]
    if retried and step < 3:
        again = [_fixed(calls[r.tool_call_id]) for r in retried if r.tool_call_id in calls]
        return ModelResponse(parts=again, usage=usage_of(step), model_name=MODEL)
    if "crash" in prompt:
        boom = ToolCallPart("explode", {}, tool_call_id="boom")
        return ModelResponse(parts=[boom], usage=usage_of(step), model_name=MODEL)
    said = [str(r.content) for r in returns if r.outcome == "success"]
    if info.output_tools:  # a structured answer, through the output tool
        name = info.output_tools[0].name
        celsius: Any = "warm" if step < 2 else 21
        city = CITY.findall(prompt)[0].capitalize()
        answer = ToolCallPart(name, {"city": city, "celsius": celsius}, tool_call_id=f"out{step}")
        return ModelResponse(parts=[answer], usage=usage_of(step), model_name=MODEL)
    text = "; ".join(said) if said else "I have no forecast."
    return ModelResponse(parts=[TextPart(text)], usage=usage_of(step), model_name=MODEL)


class Forecast(BaseModel):
    """A structured answer."""

    city: str
    celsius: int


def weather_agent(
    *, output_type: Any = str, name: str = "weather", capabilities: Sequence[Any] = ()
) -> Agent[None, Any]:
    """The weather agent: `get_weather` (async), `explode` (sync, raises)."""
    agent: Agent[None, Any] = Agent(
        FunctionModel(weather_model, model_name=MODEL),
        name=name,
        output_type=output_type,
        capabilities=list(capabilities),
    )

    @agent.tool_plain
    async def get_weather(city: str) -> str:
        """Today's weather in a city, by its name."""
        await asyncio.sleep(random.uniform(0, 0.002))
        if city != city.capitalize():
            raise ModelRetry(f"write the city's name capitalised, not {city!r}")
        return f"{city}: {WEATHER.get(city, 'unknown')}"

    @agent.tool_plain
    def explode() -> str:
        """Calls the forecast service, which is down."""
        raise RuntimeError("the forecast service is down")

    return agent


def memory_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Answers from the whole history: the name the user gave, and how many messages it saw."""
    prompt, _ = _turn(messages)
    names = [
        match.group(1)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
        for match in [re.search(r"[Mm]y name is (\w+)", part.content)]
        if match
    ]
    if "name" in prompt and "?" in prompt:
        text = f"Your name is {names[-1]}." if names else "I do not know your name."
    else:
        text = f"Hello {names[-1]}." if names else "Hello."
    text += f" ({len(messages)} messages)"
    return ModelResponse(parts=[TextPart(text)], usage=usage_of(0), model_name=MODEL)


def memory_agent() -> Agent[None, str]:
    """An agent with no tools that answers from the conversation so far."""
    return Agent(FunctionModel(memory_model, model_name=MODEL), name="memory")


@dataclass
class Ledger:
    """A trial's deps: the cities its tool was asked about (one ledger per trial)."""

    cities: list[str] = field(default_factory=list)


def ledger_agent() -> Agent[Ledger, str]:
    """An agent that needs deps: its tool writes each city into the trial's `Ledger`."""
    agent: Agent[Ledger, str] = Agent(
        FunctionModel(weather_model, model_name=MODEL), name="ledger", deps_type=Ledger
    )

    @agent.tool
    async def get_weather(ctx: RunContext[Ledger], city: str) -> str:
        """Today's weather in a city, noted in the ledger."""
        await asyncio.sleep(random.uniform(0, 0.002))
        ctx.deps.cities.append(city)
        return f"{city}: {WEATHER.get(city, 'unknown')} (asked {len(ctx.deps.cities)})"

    return agent


class KeepRuns(AbstractCapability[Any]):
    """A capability of the user's own, on the agent: keeps every run's `all_messages()` by its
    prompt, as pydantic-ai's own record to compare agenteval's with."""

    def __init__(self) -> None:
        self.runs: dict[str, list[list[ModelMessage]]] = {}

    async def after_run(self, ctx: RunContext[Any], *, result: Any) -> Any:
        self.runs.setdefault(str(ctx.prompt), []).append(list(result.all_messages()))
        return result
