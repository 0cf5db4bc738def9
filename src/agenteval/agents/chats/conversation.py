"""The built-in agent's conversation with its model, provider-neutral: what the agent knows of a
turn (`ModelReply`, the `ToolRequest`s in it, the `ToolOutcome`s sent back), the `Chat` each
provider's module speaks in its wire format, and the params the agent sets itself."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agenteval.errors import ConfigError
from agenteval.providers import split_params
from agenteval.trace import ToolSpec, Usage

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "Chat",
    "ChatSetup",
    "ModelReply",
    "ToolOutcome",
    "ToolRequest",
    "check_params",
    "messages",
    "parse_arguments",
    "split_agent_params",
]

DEFAULT_MAX_TOKENS = 4096
"""`max_tokens` for Anthropic when `params` does not set one (the Messages API requires one)."""

# What the agent sets itself, so `params` cannot.
_RESERVED = {
    "openai": frozenset(
        {"model", "messages", "tools", "stream", "stream_options", "timeout", "functions"}
        | {"function_call", "extra_headers", "extra_query", "extra_body"}
    ),
    "anthropic": frozenset(
        {"model", "messages", "system", "tools", "stream", "timeout"}
        | {"extra_headers", "extra_query", "extra_body"}
    ),
    "google": frozenset(
        {"system_instruction", "tools", "automatic_function_calling", "http_options"}
        | {"should_return_http_response"}
    ),
}


@dataclass(frozen=True)
class ChatSetup:
    """What every conversation of one agent starts from."""

    model: str
    """The model's name, as the provider knows it."""
    system_prompt: str
    params: Mapping[str, Any]
    timeout_s: float
    api_key: str
    base_url: str | None
    tool_specs: Sequence[ToolSpec]

    def tool_schemas(self) -> list[tuple[ToolSpec, dict[str, Any]]]:
        """Each tool with its parameters' JSON schema (an empty object schema for none)."""
        return [
            (spec, spec.parameters or {"type": "object", "properties": {}})
            for spec in self.tool_specs
        ]


@dataclass(frozen=True)
class ToolRequest:
    """A tool call the model asked for."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    """The arguments, or None when the model's arguments were not a JSON object."""
    raw_arguments: str = ""


@dataclass(frozen=True)
class ModelReply:
    """One model call's answer."""

    text: str | None
    calls: list[ToolRequest]
    usage: Usage | None
    """None when the response carried no token usage (a proxy that strips it): the call's
    tokens, and so its cost, are unknown, never 0."""
    model: str | None
    finish_reason: str | None


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool call gave back, for the model."""

    call: ToolRequest
    value: Any = None
    error: str | None = None

    @property
    def text(self) -> str:
        """The outcome as the model reads it: the value as text, or the error."""
        if self.error is not None:
            return f"error: {self.error}"
        if isinstance(self.value, str):
            return self.value
        return json.dumps(self.value, ensure_ascii=False, default=repr)


class Chat(Protocol):
    """A conversation in one provider's wire format."""

    async def complete(self) -> ModelReply: ...

    def add_results(self, outcomes: Sequence[ToolOutcome]) -> None: ...

    async def aclose(self) -> None: ...


def messages(prompt: Any) -> list[dict[str, str]]:
    """The case input as `{role, content}` messages: a string is one user message."""
    if prompt is None:
        return [{"role": "user", "content": ""}]
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    said: list[dict[str, str]] = []
    for message in prompt:
        item = message if isinstance(message, Mapping) else vars(message)
        role = str(item.get("role", "user"))
        said.append({"role": role, "content": str(item.get("content") or "")})
    return said


def parse_arguments(raw: str | None) -> dict[str, Any] | None:
    """A tool call's arguments, or None when they are not a JSON object."""
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def split_agent_params(
    params: Mapping[str, Any], provider: str, accepted: frozenset[str] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The params the SDK's method takes as arguments (`accepted`; all of them when None), and
    the rest (sent in the request body as they are, so a server's own options get through);
    reserved ones are refused with `ConfigError`."""
    blocked = sorted(set(params) & _RESERVED[provider])
    if blocked:
        raise ConfigError(
            f"agent parameter(s) {', '.join(blocked)} cannot be set for the {provider} agent: "
            "the agent sets them itself",
            field="agent.params",
        )
    if accepted is None:
        return dict(params), {}
    return split_params(params, accepted)


def check_params(provider: str, params: Mapping[str, Any]) -> None:
    """Refuse, before any call, the params the agent sets itself (and, for google, names that
    are no `GenerateContentConfig` field)."""
    split_agent_params(params, provider)
    if provider == "google":
        from agenteval.providers.google import unknown_params

        unknown = unknown_params(params)
        if unknown:
            raise ConfigError(
                f"agent parameter(s) {', '.join(unknown)} are not google-genai "
                "GenerateContentConfig fields",
                field="agent.params",
            )
