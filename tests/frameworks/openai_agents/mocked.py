"""Agents whose tools tell when they really run, for the tests of tool mocks on OpenAI Agents
SDK agents: real `Agent`s and `function_tool`s on the loopback server's scripts
(`loopback.py`: `[agent:weather]` asks `get_weather` and `get_time`, `[agent:triage]` hands
off to `[agent:refunds]`, which asks `refund_order`).

- `get_weather` (sync): its `failure_error_function` tells the model what failed and whether
  it was a timeout (the agent's own error handling, which an injected failure tests); when it
  really runs it counts its calls in the trial's `agenteval.state()`.
- `get_time` (sync, the SDK's default failure message), `explode` (its error stops the run),
  `refund_order` (async); `formatted_time`, a `get_time` behind an approval policy; `quick_time`, a `get_time` with
  the SDK's timeout; `hand_made_time`, a `get_time` made as a `FunctionTool` by hand.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any

import agenteval
from agents import Agent, FunctionTool, RunContextWrapper, function_tool, handoff

from .scripted import model

REAL: list[str] = []
"""Every call of a tool's own function, in the order they ran (a mocked tool never adds)."""
_REAL_LOCK = threading.Lock()


def ran(what: str) -> None:
    with _REAL_LOCK:
        REAL.append(what)


def told_error(context: RunContextWrapper[Any], error: Exception) -> str:
    kind = "timeout" if isinstance(error, TimeoutError) else "error"
    return f"the tool failed ({kind}): {error}"


@function_tool(failure_error_function=told_error)
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    ran(f"get_weather {city}")
    state = agenteval.state()
    state["weather_asked"] = state.get("weather_asked", 0) + 1
    return f"real weather in {city}"


@function_tool
def get_time(tz: str) -> str:
    """The time now in a time zone."""
    ran(f"get_time {tz}")
    return "real 12:00"


@function_tool(failure_error_function=None)
def explode() -> str:
    """A tool whose error is not caught: the run stops."""
    ran("explode")
    return "real explosion"


@function_tool
async def refund_order(order_id: str, amount: float) -> dict[str, Any]:
    """Refund an order."""
    ran(f"refund_order {order_id}")
    return {"order_id": order_id, "refunded": amount}


def weather_agent(base_url: str) -> Agent[Any]:
    return Agent(
        name="weather",
        instructions="[agent:weather] Answer questions about the weather.",
        model=model(base_url),
        tools=[get_weather, get_time, explode],
    )


def triage_agent(base_url: str, *, handoff_object: bool = False) -> Agent[Any]:
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
        handoffs=[handoff(refunds) if handoff_object else refunds],
    )


async def never_asks(
    context: RunContextWrapper[Any], arguments: dict[str, Any], call_id: str
) -> bool:
    return False


@function_tool(name_override="get_time", needs_approval=never_asks)
def formatted_time(tz: str, fmt: str = "24h") -> str:
    """The time now in a time zone. Its approval policy never asks, but the SDK asks for
    approval all the same when validation changes the arguments (here: adds `fmt`)."""
    ran(f"formatted_time {tz}")
    return "real 12:00"


def approval_agent(base_url: str) -> Agent[Any]:
    return Agent(
        name="weather",
        instructions="[agent:weather] Answer questions about the weather.",
        model=model(base_url),
        tools=[get_weather, formatted_time],
    )


@function_tool(name_override="get_time", timeout=0.05)
async def quick_time(tz: str) -> str:
    """The time now in a time zone, given up on by the SDK after 50 ms."""
    ran(f"quick_time {tz}")
    return "real 12:00"


def impatient_agent(base_url: str) -> Agent[Any]:
    return Agent(
        name="weather",
        instructions="[agent:weather] Answer questions about the weather.",
        model=model(base_url),
        tools=[get_weather, quick_time],
    )


CONTEXTS: list[str] = []
"""The type of the context each call of `hand_made_time` was given."""


async def invoke_time(context: RunContextWrapper[Any], arguments: str) -> str:
    CONTEXTS.append(type(context).__name__)
    ran("hand_made_time")
    return "real 12:00"


hand_made_time = FunctionTool(
    name="get_time",
    description="The time now in a time zone.",
    params_json_schema={
        "type": "object",
        "properties": {"tz": {"type": "string"}},
        "required": ["tz"],
        "additionalProperties": False,
    },
    on_invoke_tool=invoke_time,
)
"""A `FunctionTool` made by hand: no failure handling of the SDK's (its error stops the run),
and an invoker declaring a `RunContextWrapper` (which the SDK gives it, not a `ToolContext`)."""


def hand_made_agent(base_url: str) -> Agent[Any]:
    return Agent(
        name="weather",
        instructions="[agent:weather] Answer questions about the weather.",
        model=model(base_url),
        tools=[get_weather, hand_made_time],
    )


@dataclass
class ClockAgent(Agent[Any]):
    """An agent that adds `get_time` to its tools during the run (as an MCP server's tools
    are added): not in `tools`, so no copy of agenteval's can answer it."""

    async def get_all_tools(self, run_context: RunContextWrapper[Any]) -> list[Any]:
        return [*await super().get_all_tools(run_context), get_time]


def clock_agent(base_url: str) -> Agent[Any]:
    return ClockAgent(
        name="weather",
        instructions="[agent:weather] Answer questions about the weather.",
        model=model(base_url),
        tools=[get_weather],
    )


@function_tool(name_override="get_weather")
async def held_weather(city: str) -> str:
    """Today's weather in a city, never answered: it waits until the SDK cancels it."""
    await asyncio.Event().wait()
    return "never"


@function_tool(name_override="get_time", failure_error_function=None)
def broken_time(tz: str) -> str:
    """The time now in a time zone: its error is not caught, so the run stops."""
    ran(f"broken_time {tz}")
    raise RuntimeError("the clock broke")


def stopping_agent(base_url: str) -> Agent[Any]:
    """`get_time` raises and stops the run while `get_weather`, asked with it, still runs."""
    return Agent(
        name="weather",
        instructions="[agent:weather] Answer questions about the weather.",
        model=model(base_url),
        tools=[held_weather, broken_time],
    )
