"""A pydantic-ai help-desk agent on a scripted `FunctionModel` (offline), for the tool-mock
tests: the case's input is the script, so each test says exactly which calls the model makes.

The input is `script(step, step, ...)`: JSON, a list of steps, each a list of `[tool, args]`
calls the model makes together in one response. The model plays the steps in order whatever
the tools answered (a step with a call pydantic-ai sent back `retried` is simply followed by
the next one, which the script writes as the retry), then answers with what it saw: a JSON list
of `[tool, outcome, content]`, one per tool return since the prompt, in order.

The tools are real functions that note every run in the agent's `ran` list (so a test can say
the tool never ran) and touch the trial's `agenteval.state()` as a live system would.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

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
from pydantic_ai.toolsets import FunctionToolset

import agenteval

MODEL = "desk-mini"


def script(*steps: list[tuple[str, dict[str, Any]]]) -> str:
    """A case's input: the calls the model makes, step by step."""
    return json.dumps([[[name, args] for name, args in step] for step in steps])


def seen(output: str | None) -> list[list[Any]]:
    """What the model said it saw: `[tool, outcome, content]` per tool return."""
    assert output is not None
    return [list(item) for item in json.loads(output)]


def _turn(messages: list[ModelMessage]) -> tuple[str, list[ModelMessage]]:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content, messages[index + 1 :]
    return "[]", []


async def desk_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Plays the script (see the module)."""
    await asyncio.sleep(random.uniform(0, 0.003))  # let concurrent trials interleave
    prompt, since = _turn(messages)
    steps = json.loads(prompt)
    step = sum(isinstance(m, ModelResponse) for m in since)
    if step < len(steps):
        parts: list[Any] = [
            ToolCallPart(name, args, tool_call_id=f"s{step}c{n}")
            for n, (name, args) in enumerate(steps[step])
        ]
        return ModelResponse(parts=parts, model_name=MODEL)
    returns = [
        [part.tool_name, part.outcome, part.content]
        for message in since
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    return ModelResponse(parts=[TextPart(json.dumps(returns, default=str))], model_name=MODEL)


class ErrorsAsRetries(AbstractCapability[Any]):
    """The agent's own error handling: a tool that raises is answered to the model as a retry
    naming the error (`ModelRetry`), instead of ending the run."""

    async def on_tool_execute_error(
        self, ctx: RunContext[Any], *, call: Any, tool_def: Any, args: Any, error: Exception
    ) -> Any:
        raise ModelRetry(f"{type(error).__name__}: {error}") from error


class DeskAgent:
    """The help-desk agent and the list of the tool runs it made (`ran`)."""

    def __init__(self, *, handles_errors: bool = False, retries: int = 3) -> None:
        self.ran: list[str] = []
        ran = self.ran
        capabilities: list[Any] = [ErrorsAsRetries()] if handles_errors else []
        crm: FunctionToolset[None] = FunctionToolset()

        @crm.tool_plain
        def find(email: str) -> dict[str, Any]:
            """Finds a customer in the live CRM (offered to the model as `crm_find`)."""
            ran.append(f"crm_find {email}")
            return {"customer": "live"}

        self.agent: Agent[None, str] = Agent(
            FunctionModel(desk_model, model_name=MODEL),
            name="desk",
            capabilities=capabilities,
            toolsets=[crm.prefixed("crm")],
            retries=retries,
        )

        @self.agent.tool_plain
        async def get_weather(city: str) -> str:
            """Today's weather in a city (a live service)."""
            ran.append(f"get_weather {city}")
            return f"{city}: live"

        @self.agent.tool_plain
        def create_ticket(title: str, priority: int = 1) -> dict[str, Any]:
            """Opens a ticket in the live tracker (and notes it in the trial's state)."""
            ran.append(f"create_ticket {title}")
            tickets = agenteval.state().setdefault("tickets", [])
            tickets.append(title)
            return {"id": f"LIVE-{len(tickets)}"}

        @self.agent.tool_plain
        async def charge_card(amount: int) -> dict[str, Any]:
            """Charges the customer's card (a live payment)."""
            ran.append(f"charge_card {amount}")
            return {"status": "charged live"}
