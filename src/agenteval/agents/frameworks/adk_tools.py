"""The agent tree of a Google ADK agent and the tools ADK declares for it (for `adk.py`): the
agents under a root (sub-agents, and the agents used as tools, `AgentTool`), the model each one
calls (for pricing its calls), and each tool's `FunctionDeclaration` as a `ToolSpec`, asked of
ADK through its public `LlmRequest.append_tools`.

ADK is imported only inside functions: importing agenteval imports no framework.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agenteval.jsonsafe import plain_copy
from agenteval.trace import ToolSpec

__all__ = [
    "agents_of",
    "declared",
    "declared_tools",
    "model_name",
    "requested_tools",
    "tool_agents",
]


def agents_of(root: Any) -> Iterator[Any]:
    """`root` and its sub-agents, depth first, each once."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        agent = stack.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        stack.extend(reversed(list(getattr(agent, "sub_agents", None) or ())))


def tool_agents(root: Any) -> Iterator[Any]:
    """The agents the agents under `root` use as tools (`AgentTool`), and their sub-agents and
    agent tools in turn, each once."""
    from google.adk.tools.agent_tool import AgentTool

    seen: set[int] = set()
    pending = [root]
    while pending:
        for agent in agents_of(pending.pop()):
            for tool in getattr(agent, "tools", None) or ():
                inner = tool.agent if isinstance(tool, AgentTool) else None
                if inner is not None and id(inner) not in seen:
                    seen.add(id(inner))
                    yield from agents_of(inner)
                    pending.append(inner)


def model_name(agent: Any) -> str | None:
    """The model an LLM agent calls (a name, or a `BaseLlm`'s `model`), its ancestors' when it
    names none (as ADK inherits it); None for an agent calling no model."""
    while agent is not None:
        model = getattr(agent, "model", None)
        if isinstance(model, str) and model:
            return model
        name = getattr(model, "model", None)
        if isinstance(name, str) and name:
            return name
        agent = getattr(agent, "parent_agent", None)
    return None


def declared(tool: Any) -> list[ToolSpec]:
    """What ADK declares to the model for `tool` (a `BaseTool`), through the public
    `LlmRequest.append_tools`; a tool declaring nothing (a built-in such as Google Search) or
    whose declaration fails gives no spec."""
    from google.adk.models.llm_request import LlmRequest

    request = LlmRequest()
    try:
        request.append_tools([tool])
    except Exception:  # a declaration ADK cannot build is no schema to check calls against
        return []
    return requested_tools(request)


def requested_tools(request: Any) -> list[ToolSpec]:
    """The function declarations of an `LlmRequest` (the tools the model is offered), as
    `ToolSpec`s with JSON schemas."""
    specs: list[ToolSpec] = []
    config = getattr(request, "config", None)
    for declared in getattr(config, "tools", None) or ():
        for declaration in getattr(declared, "function_declarations", None) or ():
            parameters: Any = declaration.parameters_json_schema
            if parameters is None and declaration.parameters is not None:
                parameters = declaration.parameters.json_schema.model_dump(
                    mode="json", exclude_none=True, by_alias=True
                )
            copied, _ = plain_copy(parameters or {})
            if declaration.name:
                specs.append(
                    ToolSpec(
                        name=declaration.name,
                        description=declaration.description or "",
                        parameters=copied if isinstance(copied, dict) else {},
                    )
                )
    return specs


def declared_tools(root: Any) -> dict[str, ToolSpec]:
    """The tools of `root` and its sub-agents as ADK declares them, by name (the first agent
    declaring a name wins). Functions given as tools are declared as ADK wraps them
    (`FunctionTool`); toolsets (MCP, OpenAPI, ...) are listed only when a run asks them, so
    they are left out. An agent with sub-agents also declares `transfer_to_agent`, its
    `agent_name` restricted to the agents of the tree."""
    from google.adk.agents import LlmAgent
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.function_tool import FunctionTool
    from google.adk.tools.transfer_to_agent_tool import TransferToAgentTool

    specs: dict[str, ToolSpec] = {}
    agents = list(agents_of(root))
    for agent in agents:
        if not isinstance(agent, LlmAgent):
            continue
        for tool in agent.tools:
            if isinstance(tool, BaseTool):
                found = declared(tool)
            elif callable(tool):
                found = declared(FunctionTool(tool))
            else:
                found = []
            for spec in found:
                specs.setdefault(spec.name, spec)
    if any(getattr(agent, "sub_agents", None) for agent in agents if isinstance(agent, LlmAgent)):
        names = [agent.name for agent in agents]
        for spec in declared(TransferToAgentTool(agent_names=names)):
            specs.setdefault(spec.name, spec)
    return specs
