"""The weather desk: a Google ADK agent, laid out as `adk run` / `adk web` expect it (the package
imports its `agent` module, whose `root_agent` is the agent)."""

from . import agent as agent
