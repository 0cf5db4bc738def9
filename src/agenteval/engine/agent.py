"""The agent a run calls: loaded from its reference, adapted when a framework built it, and
named as the run's target."""

from __future__ import annotations

import functools
from typing import Any

from agenteval.agents.calling import Agent
from agenteval.agents.frameworks import as_framework_agent
from agenteval.engine.options import RunOptions
from agenteval.loading import load_object
from agenteval.records import PYTHON_TARGET

__all__ = ["load_agent", "python_target"]


def load_agent(agent: Agent | str | None, options: RunOptions) -> Agent | None:
    """The agent to call: a `module:function` / `path/to/file.py:function` reference loaded
    (relative to `options.base_dir`), else as given; an agent built on a framework (an ADK
    agent, a LangGraph graph, ...) as its adapter (`agents/frameworks/`)."""
    loaded = load_object(agent, base_dir=options.base_dir) if isinstance(agent, str) else agent
    framework = as_framework_agent(loaded)
    return loaded if framework is None else framework


def python_target(agent: Agent | str | None) -> str:
    """What `agenteval runs` lists as the target of a run made from Python: `python:` and the
    agent's name (`python:answer`; a reference as it was given; `python:agent_trace` when the
    cases' recorded traces are scored with no agent)."""
    if agent is None:
        return f"{PYTHON_TARGET}agent_trace"
    if isinstance(agent, str):
        return f"{PYTHON_TARGET}{agent}"
    inner: Any = agent
    while isinstance(inner, functools.partial):
        inner = inner.func
    framework = as_framework_agent(inner)
    if framework is not None:
        return f"{PYTHON_TARGET}{framework.reference}"
    name = getattr(inner, "__qualname__", None) or type(inner).__qualname__
    return f"{PYTHON_TARGET}{name}"
