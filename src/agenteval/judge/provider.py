"""What a judge provider does: send one prompt, get back one structured verdict object.

A provider wraps an official SDK (openai, anthropic, google-genai), whose client, keys and usage
are `agenteval.providers` (as is `ProviderUnavailable`, exported here too). It asks for output
that follows a JSON schema in the way its API does it (a JSON-schema response format, a forced
tool call, a response schema), and returns the object the model produced, never text to be
searched.
Errors are the SDK's own exceptions; `agenteval.failures.classify` tells which to retry.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from agenteval.providers import ProviderUnavailable
from agenteval.trace import Usage

__all__ = ["JudgeReply", "JudgeRequest", "Provider", "ProviderUnavailable"]


class JudgeRequest(BaseModel):
    """One call to a judge model."""

    model_config = ConfigDict(extra="forbid")

    model: str
    system: str
    """Trusted instructions: the rubric and how to read the fenced data."""
    user: str
    """The data to judge, every untrusted part fenced."""
    schema_name: str
    """A name for the verdict schema (the tool or response-format name)."""
    verdict_schema: dict[str, Any]
    """The JSON schema the verdict must follow."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Sampling parameters sent as they are: `temperature`, `max_tokens`, `top_p`, `seed`."""
    timeout_s: float = 60.0


class JudgeReply(BaseModel):
    """What the provider returned for one request."""

    model_config = ConfigDict(extra="forbid")

    verdict: dict[str, Any] | None
    """The structured object the model produced, or None when it produced none (a refusal, a
    cut-off answer, output that is not JSON)."""
    raw: str
    """The model's output as text, kept for the record when the verdict cannot be read."""
    usage: Usage | None = Field(default_factory=Usage)
    """None when the response carried no token usage (a proxy that strips it): what the call
    cost is unknown, never $0."""
    model: str | None = None
    """The model as the provider reported it (a dated version, say)."""
    finish_reason: str | None = None


class Provider(Protocol):
    """A judge provider: `openai`, `anthropic` or `google`."""

    name: str

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """Send the request; return the structured verdict, or raise the SDK's error."""
        ...

    async def aclose(self) -> None:
        """Release the provider's HTTP connections."""
        ...
