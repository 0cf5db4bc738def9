"""A framework agent whose framework adds tools only while it runs (MCP servers, toolsets, tools
the agent makes, a handoff object's target) does not list them before the run: a mock of a tool
it does not list is then not refused (it may be one of those), while a `when` on a listed tool
is still checked. An agent whose tools are all listed keeps the full check."""

from __future__ import annotations

from typing import Any

import pytest
from tests.frameworks.openai_agents import mocked

from agenteval import EvalCase
from agenteval.agents.frameworks import as_framework_agent
from agenteval.engine.mock_check import checked_mocks, more_tools_possible
from agenteval.engine.options import RunOptions
from agenteval.errors import DatasetError

BASE_URL = "http://127.0.0.1:9/v1"  # never called: nothing runs here


def framework(agent: Any) -> Any:
    adapted = as_framework_agent(agent)
    assert adapted is not None
    return adapted


def check(agent: Any, mocks: dict[str, Any]) -> None:
    case = EvalCase(id="c", input="x", tool_mocks=mocks)
    checked_mocks([case], agent, RunOptions())


def test_openai_agents_complete_and_open_graphs() -> None:
    plain = framework(mocked.weather_agent(BASE_URL))
    assert plain.tools_complete()
    with pytest.raises(DatasetError, match="names no tool of the agent"):
        check(plain, {"get_tme": {"result": 1}})

    for agent in (
        mocked.clock_agent(BASE_URL),  # makes get_time itself (get_all_tools)
        mocked.triage_agent(BASE_URL, handoff_object=True),  # its target's tools unlisted
    ):
        adapted = framework(agent)
        assert not adapted.tools_complete()
        assert more_tools_possible(adapted, RunOptions())
        check(adapted, {"get_time": {"result": "9"}, "refund_order": {"result": {}}})

    clock = framework(mocked.clock_agent(BASE_URL))
    with pytest.raises(DatasetError, match="does not take"):  # a listed tool: still checked
        check(clock, {"get_weather": {"when": {"town": "Paris"}, "result": "sun"}})
    # A framework agent's own listing decides, whatever the run's `tools=` says.
    assert more_tools_possible(clock, RunOptions(tools={}))


def test_pydantic_ai_function_toolsets_are_complete_and_others_are_not() -> None:
    from pydantic_ai import Agent, FunctionToolset
    from pydantic_ai.models.test import TestModel

    def find(name: str) -> str:
        return name

    listed = Agent(TestModel(), toolsets=[FunctionToolset([find]).prefixed("crm")])
    assert framework(listed).tools_complete()
    with pytest.raises(DatasetError, match="did you mean 'crm_find'"):
        check(framework(listed), {"crm_fnd": {"result": 1}})

    dynamic = Agent(TestModel())

    @dynamic.toolset
    def made_per_run(ctx: Any) -> FunctionToolset[Any]:
        return FunctionToolset([find])

    assert not framework(dynamic).tools_complete()
    check(framework(dynamic), {"find": {"result": 1}})


def test_adk_toolsets_are_listed_only_in_a_run() -> None:
    from google.adk.agents import LlmAgent
    from google.adk.tools.base_toolset import BaseToolset

    class Remote(BaseToolset):
        async def get_tools(self, readonly_context: Any = None) -> list[Any]:
            return []

    def lookup(order_id: str) -> str:
        return order_id

    listed = framework(LlmAgent(name="desk", model="gemini-2.5-flash", tools=[lookup]))
    assert listed.tools_complete()
    with pytest.raises(DatasetError, match="names no tool of the agent"):
        check(listed, {"remote_lookup": {"result": 1}})

    with_toolset = framework(
        LlmAgent(name="desk", model="gemini-2.5-flash", tools=[lookup, Remote()])
    )
    assert not with_toolset.tools_complete()
    check(with_toolset, {"remote_lookup": {"result": 1}})
    with pytest.raises(DatasetError, match="does not take"):
        check(with_toolset, {"lookup": {"when": {"order": "A-1"}, "result": 1}})
