"""A mock the adapter could not apply is refused before the run, never accepted to let the real
tool run: a tool of an ADK AgentTool's agent (which runs in a runner of its own), a tool of an
OpenAI agent behind `as_tool` even when the run is given `tools=` naming it (a framework
agent's own listing decides), and any mock of a framework agent whose adapter read every tool
and found none (a pydantic-ai agent with an output function only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase
from agenteval.errors import DatasetError
from agenteval.trace import ToolSpec

REAL: list[int] = []


def charge_card(amount: int) -> dict[str, str]:
    """Charge the card."""
    REAL.append(amount)
    return {"status": "charged for real"}


MOCK = {"charge_card": {"result": {"status": "mocked"}}}
SPECS = {
    "charge_card": ToolSpec(
        name="charge_card",
        parameters={"type": "object", "properties": {"amount": {"type": "integer"}}},
    )
}


def run(agent: Any, tmp_path: Path, **options: Any) -> None:
    case = EvalCase(id="c", input="Pay", tool_mocks=MOCK)
    agenteval.evaluate(agent, [case], store=tmp_path / "runs.db", **options)


@pytest.mark.parametrize("include_plugins", [True, False])
def test_a_tool_of_an_adk_agent_tool_is_refused(tmp_path: Path, include_plugins: bool) -> None:
    from google.adk.agents import LlmAgent
    from google.adk.tools.agent_tool import AgentTool
    from google.adk.tools.base_toolset import BaseToolset
    from tests.frameworks.adk.scripted import ScriptedModel

    class Remote(BaseToolset):  # a toolset: the root's tools are not all listed before a run
        async def get_tools(self, readonly_context: Any = None) -> list[Any]:
            return []

    inner = LlmAgent(
        name="payer",
        model=ScriptedModel(script={"pay 5": [[("charge_card", {"amount": 5})], "paid"]}),
        tools=[charge_card],
    )
    outer = LlmAgent(
        name="root",
        model=ScriptedModel(script={"Pay": [[("payer", {"request": "pay 5"})], "done"]}),
        tools=[AgentTool(inner, include_plugins=include_plugins), Remote()],
    )
    REAL.clear()
    with pytest.raises(DatasetError, match="AgentTool 'payer'"):
        run(outer, tmp_path)
    with pytest.raises(DatasetError, match="AgentTool 'payer'"):
        run(outer, tmp_path, tools=SPECS)
    assert REAL == []


def test_a_tool_behind_openai_as_tool_is_refused_even_with_tools(tmp_path: Path) -> None:
    from tests.frameworks.openai_agents.scripted import model

    from agents import Agent, function_tool

    inner = Agent(
        name="payer", model=model("http://127.0.0.1:9/v1"), tools=[function_tool(charge_card)]
    )
    outer = Agent(
        name="root",
        model=model("http://127.0.0.1:9/v1"),
        tools=[inner.as_tool("payer", "pays")],
    )
    REAL.clear()
    with pytest.raises(DatasetError, match="names no tool of the agent"):
        run(outer, tmp_path, tools=SPECS)
    assert REAL == []


def test_a_framework_agent_with_no_tools_refuses_every_mock(tmp_path: Path) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel

    def charge_out(amount: int) -> str:
        """Charge and finish."""
        REAL.append(amount)
        return "real"

    agent = Agent(TestModel(), output_type=[charge_out])
    REAL.clear()
    with pytest.raises(DatasetError, match="names no tool of the agent"):
        run(agent, tmp_path)
    assert REAL == []
