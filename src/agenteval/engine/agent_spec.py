"""`agent:` as `agenteval.yaml` and `--agent` give it: a reference to a function (or a framework's
agent), an HTTP agent (`url:`) or the built-in agent (`model:`), resolved to the agent a run
calls. Apart from `engine/agent.py` so that `import agenteval` does not import the HTTP and
built-in agents' modules; `config.py` and the faces that read `agent:` import it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import Discriminator, Tag, ValidationError

from agenteval.agents.builtin import BuiltinAgentConfig
from agenteval.agents.calling import Agent
from agenteval.agents.frameworks import as_framework_agent
from agenteval.agents.http import HttpAgentConfig
from agenteval.errors import AgentEvalError, ConfigError
from agenteval.loading import load_object
from agenteval.yaml_syntax import file_key_line

__all__ = ["AGENT_KINDS", "AgentSpec", "resolve_agent"]


def _agent_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "reference"
    if isinstance(value, HttpAgentConfig) or (isinstance(value, Mapping) and "url" in value):
        return "http"
    if isinstance(value, BuiltinAgentConfig) or (isinstance(value, Mapping) and "model" in value):
        return "builtin"
    return None


AgentSpec = Annotated[
    Annotated[str, Tag("reference")]
    | Annotated[HttpAgentConfig, Tag("http")]
    | Annotated[BuiltinAgentConfig, Tag("builtin")],
    Discriminator(
        _agent_kind,
        custom_error_type="agent_kind",
        custom_error_message="an agent is module:function, path/to/file.py:function, a mapping "
        "with url: (an HTTP agent) or a mapping with model: (the built-in agent)",
    ),
]
"""`agent:`: a reference to a function, an HTTP agent (`url:`), or the built-in agent
(`model:`)."""

AGENT_KINDS = frozenset({"reference", "http", "builtin"})
"""The kinds of `agent:` (the tags of `AgentSpec`)."""


def resolve_agent(
    spec: AgentSpec | Mapping[str, Any],
    *,
    base_dir: Path | None = None,
    given_in: str | Path | None = None,
) -> tuple[Agent, str]:
    """The agent `agent:` describes, ready to call, and how a run records it (a reference with
    no secret in it).

    `given_in` says where the user wrote it, for the error when it does not load: a flag
    (`"--agent"`) or the config file (its `agent:` line). An error inside the agent's own file
    keeps pointing there.
    """
    try:
        return _resolve_agent(spec, base_dir)
    except AgentEvalError as exc:
        if given_in is None:
            raise
        if isinstance(given_in, str):
            where: dict[str, Any] = {"file": exc.file, "line": exc.line, "field": given_in}
        elif exc.file is None:
            where = {"file": given_in, "line": file_key_line(given_in, "agent"), "field": "agent"}
        else:
            where = {"file": exc.file, "line": exc.line, "field": exc.field}
        raise type(exc)(exc.message, hint=exc.hint, **where) from exc


def _resolve_agent(spec: AgentSpec | Mapping[str, Any], base_dir: Path | None) -> tuple[Agent, str]:
    if isinstance(spec, Mapping):
        kind = _agent_kind(spec)
        if kind is None:
            raise ConfigError(
                "an agent mapping needs url: (an HTTP agent) or model: (the built-in agent)",
                field="agent",
            )
        try:
            spec = (HttpAgentConfig if kind == "http" else BuiltinAgentConfig).model_validate(spec)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in ("agent", *error["loc"]))
            raise ConfigError(error["msg"], field=where) from exc
    if isinstance(spec, HttpAgentConfig):
        from agenteval.agents.http import HttpAgent

        http = HttpAgent(spec)
        return http, http.reference
    if isinstance(spec, BuiltinAgentConfig):
        from agenteval.agents.builtin import BuiltinAgent

        builtin = BuiltinAgent(spec, base_dir=base_dir)
        return builtin, builtin.reference
    agent = load_object(spec, base_dir=base_dir)
    framework = as_framework_agent(agent)
    if framework is not None:
        return framework, spec
    if not callable(agent):
        raise ConfigError(
            f"{spec!r} is not callable",
            field="agent",
            hint="the agent must be a function of the case input, or an agent of Google ADK, "
            "the OpenAI Agents SDK, LangGraph or pydantic-ai",
        )
    return agent, spec
