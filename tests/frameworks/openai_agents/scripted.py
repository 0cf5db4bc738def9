"""The agents under test, as a user writes them with the OpenAI Agents SDK: real `Agent`s on
`OpenAIChatCompletionsModel`, whose `AsyncOpenAI` client calls the loopback server of
`loopback.py` (its instructions name each agent to the server).

- `weather`: tools `get_weather` (fails for a city it does not know: the SDK tells the model),
  `get_time`, `explode` (raises, and is declared to let its error propagate); an output
  guardrail trips on an answer that tells a secret.
- `triage`: hands off to `refunds` (tool `refund_order`); an input guardrail trips on a
  message asking for a password.
- `forecaster`: a structured output (`Forecast`).
"""

from __future__ import annotations

from typing import Any

from openai import AsyncOpenAI
from pydantic import BaseModel

from agents import (
    Agent,
    GuardrailFunctionOutput,
    OpenAIChatCompletionsModel,
    RunContextWrapper,
    function_tool,
    input_guardrail,
    output_guardrail,
)

from .loopback import REQUEST_MODEL

WEATHER = {"Paris": "sunny, 18 C"}


@function_tool
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    if city not in WEATHER:
        raise ValueError(f"unknown city: {city}")
    return WEATHER[city]


@function_tool
def get_time(tz: str) -> str:
    """The time now in a time zone."""
    return {"CET": "12:00"}[tz]


@function_tool(failure_error_function=None)
def explode() -> str:
    """A tool whose error is not caught: the run stops."""
    raise RuntimeError("the tool blew up")


@function_tool
def refund_order(order_id: str, amount: float) -> dict[str, Any]:
    """Refund an order."""
    return {"order_id": order_id, "refunded": amount}


@output_guardrail
async def no_secrets(context: RunContextWrapper[Any], agent: Agent[Any], output: Any) -> Any:
    told = "secret" in str(output).lower()
    return GuardrailFunctionOutput(output_info={"told_a_secret": told}, tripwire_triggered=told)


@input_guardrail
async def no_passwords(context: RunContextWrapper[Any], agent: Agent[Any], text: Any) -> Any:
    asked = "password" in str(text).lower()
    return GuardrailFunctionOutput(
        output_info={"asked_for_password": asked}, tripwire_triggered=asked
    )


class Forecast(BaseModel):
    city: str
    celsius: int


def model(base_url: str) -> OpenAIChatCompletionsModel:
    """The model every agent asks: the loopback server, with no retries of its own (a failed
    connection reaches agenteval, which classifies it and retries the trial)."""
    client = AsyncOpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    return OpenAIChatCompletionsModel(model=REQUEST_MODEL, openai_client=client)


def weather_agent(base_url: str) -> Agent[Any]:
    return Agent(
        name="weather",
        instructions="[agent:weather] Answer questions about the weather.",
        model=model(base_url),
        tools=[get_weather, get_time, explode],
        output_guardrails=[no_secrets],
    )


def triage_agent(base_url: str) -> Agent[Any]:
    refunds = Agent(
        name="refunds",
        instructions="[agent:refunds] Refund orders.",
        model=model(base_url),
        tools=[refund_order],
    )
    return Agent(
        name="triage",
        instructions="[agent:triage] Route the customer.",
        model=model(base_url),
        handoffs=[refunds],
        input_guardrails=[no_passwords],
    )


def forecaster_agent(base_url: str) -> Agent[Any]:
    return Agent(
        name="forecaster",
        instructions="[agent:forecaster] Give the forecast.",
        model=model(base_url),
        output_type=Forecast,
    )
