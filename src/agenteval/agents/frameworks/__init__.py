"""Agents as frameworks build them: a Google ADK agent, an OpenAI Agents SDK `Agent`, a LangGraph
graph (or any LangChain runnable over `{"messages": [...]}`) and a pydantic-ai `Agent`, run by
agenteval directly, by reference (`agent: my_pkg.agent:root_agent`) or as an object.

Each framework keeps a typed record of every model call, tool call and result in its own run
objects; its adapter (`FrameworkAgent`) runs a whole case in one fresh session (every user turn
of a multi-turn case in it) and reads that record into the trial. Detection is by type, by the
module names along the object's class hierarchy, so importing agenteval imports no framework:
an adapter module, and its framework, are imported only when an object of that framework is
given.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from agenteval.agents.frameworks.base import FrameworkAgent, TrialBuilder, conversation
from agenteval.loading import FRAMEWORK_EXTRAS

__all__ = [
    "FRAMEWORKS",
    "Framework",
    "FrameworkAgent",
    "TrialBuilder",
    "as_framework_agent",
    "conversation",
    "framework_of",
]


@dataclass(frozen=True)
class Framework:
    """One framework agenteval runs agents of: the base classes of its agents (as the root
    module they live under and their class name: a user's own `agents.py` is no framework),
    the agenteval extra that installs it, and the adapter (`module:Class`, a
    `FrameworkAgent`)."""

    name: str
    bases: tuple[tuple[str, str], ...]
    extra: str
    adapter: str

    def owns(self, cls: type) -> bool:
        """Whether `cls` (a class of the object's hierarchy) is one of this framework's bases."""
        module = getattr(cls, "__module__", "") or ""
        return any(
            cls.__qualname__ == name and (module == root or module.startswith(root + "."))
            for root, name in self.bases
        )

    def adapt(self, obj: Any) -> FrameworkAgent:
        """`obj` as the agent agenteval runs (the adapter module is imported now)."""
        module, _, cls = self.adapter.partition(":")
        adapter: type[FrameworkAgent] = getattr(importlib.import_module(module), cls)
        return adapter.of(obj)


def _framework(name: str, bases: tuple[tuple[str, str], ...], adapter: str) -> Framework:
    return Framework(name, bases, FRAMEWORK_EXTRAS[bases[0][0]], f"{_PACKAGE}.{adapter}")


_PACKAGE = "agenteval.agents.frameworks"

FRAMEWORKS: tuple[Framework, ...] = (
    _framework("adk", (("google.adk", "BaseAgent"), ("google.adk", "App")), "adk:AdkAgent"),
    _framework("openai-agents", (("agents", "AgentBase"),), "openai_agents:OpenAIAgentsAgent"),
    _framework(
        "langgraph",
        (("langgraph", "Pregel"), ("langchain_core", "Runnable")),
        "langgraph:GraphAgent",
    ),
    _framework(
        "pydantic-ai",
        # A model, tool or toolset is no agent: its adapter refuses it, naming the Agent to pass.
        (
            ("pydantic_ai", "AbstractAgent"),
            ("pydantic_ai", "Model"),
            ("pydantic_ai", "Tool"),
            ("pydantic_ai", "AbstractToolset"),
        ),
        "pydantic_ai:PydanticAIAgent",
    ),
)
"""The frameworks agenteval runs agents of, looked for in this order."""


def framework_of(obj: object) -> Framework | None:
    """The framework `obj` is an agent of (by its class hierarchy), or None. A class itself,
    or a function, is no framework's agent: only instances are."""
    if isinstance(obj, type):
        return None
    for cls in type(obj).__mro__:
        for framework in FRAMEWORKS:
            if framework.owns(cls):
                return framework
    return None


def as_framework_agent(obj: Any) -> FrameworkAgent | None:
    """`obj` as a `FrameworkAgent` if it is one already or an agent of a framework, else None
    (a plain callable, say). Raises `AgentLoadError` for a framework object agenteval cannot
    run (a tool, say, rather than an agent), naming what to pass instead."""
    if isinstance(obj, FrameworkAgent):
        return obj
    framework = framework_of(obj)
    return None if framework is None else framework.adapt(obj)
