"""A pydantic-ai agent, evaluated by agenteval as it is: no wrapper, no decorator.

`agent` is an ordinary pydantic-ai `Agent` with two tools. So that this example runs offline,
with no API key, its model is a `FunctionModel` that plays the part of an LLM: it reads the
question, asks for the tools it needs (several at once when the question names several cities),
and answers from what they returned. To evaluate the same agent on a real model, build it with
one instead: `Agent("openai:gpt-4o-mini", ...)`; nothing else changes.

agenteval reads everything from pydantic-ai's own messages: each tool call with its arguments
and result, the calls a tool sent back with `ModelRetry`, every model response's tokens, and
the tools' JSON schemas from their definitions.
"""

from __future__ import annotations

import re

from pydantic_ai import Agent, ModelRetry
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

MODEL = "forecast-sim-1"
FORECASTS = {"Paris": "sunny, 21 C", "Rome": "rainy, 17 C", "Oslo": "snow, -2 C"}
RATES = {("EUR", "USD"): 1.08, ("USD", "EUR"): 0.93, ("EUR", "NOK"): 11.6}
CITY = re.compile(r"\b(paris|rome|oslo|atlantis)\b", re.IGNORECASE)
MONEY = re.compile(r"(\d+(?:\.\d+)?) ([A-Z]{3}) (?:in|to) ([A-Z]{3})")

agent = Agent(
    # The stand-in for an LLM, `_model`, is at the end of this file.
    FunctionModel(lambda messages, info: _model(messages, info), model_name=MODEL),
    name="forecaster",
    instructions="Answer weather and currency questions with the tools.",
)


@agent.tool_plain
def get_forecast(city: str) -> str:
    """Today's forecast for a city, by its name."""
    if city not in FORECASTS:
        raise ModelRetry(f"no forecast for {city!r}: ask about Paris, Rome or Oslo")
    return FORECASTS[city]


@agent.tool_plain
def convert(amount: float, source: str, target: str) -> float:
    """Convert an amount of money from one currency (ISO code) to another."""
    return round(amount * RATES[(source, target)], 2)


# --- the scripted model: what an LLM would do with these tools, as rules --------------------


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _reply(parts: list[TextPart | ToolCallPart], messages: list[ModelMessage]) -> ModelResponse:
    """A response, with usage counted from the text read and written (about 4 characters a
    token), as a real model reports it."""
    read = sum(_tokens(str(getattr(p, "content", ""))) for m in messages for p in m.parts)
    written = sum(
        _tokens(str(getattr(p, "content", None) or getattr(p, "args", ""))) for p in parts
    )
    return ModelResponse(
        parts=parts, usage=RequestUsage(input_tokens=read + 40, output_tokens=written)
    )


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Ask for the tools the question needs, then answer from what they returned."""
    question = next(
        p.content
        for m in reversed(messages)
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart) and isinstance(p.content, str)
    )
    returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    if not returns:
        calls = [
            ToolCallPart("get_forecast", {"city": city.capitalize()})
            for city in CITY.findall(question)
        ]
        calls += [
            ToolCallPart("convert", {"amount": float(a), "source": s, "target": t})
            for a, s, t in MONEY.findall(question)
        ]
        if calls:
            return _reply(calls, messages)
        return _reply([TextPart("I can only help with forecasts and currencies.")], messages)
    answers = [
        f"{p.content}" if p.outcome == "success" else "I have no forecast for that place"
        for p in returns
    ]
    return _reply([TextPart(". ".join(answers) + ".")], messages)
