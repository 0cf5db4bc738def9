"""OpenAI and every OpenAI-compatible server, through the `openai` SDK (imported here: this
module is imported only when a provider is made)."""

from __future__ import annotations

import inspect
from typing import Any

from openai import AsyncOpenAI, DefaultAsyncHttpxClient
from openai.resources.chat.completions import AsyncCompletions
from openai.types.completion_usage import CompletionUsage

from agenteval.providers.access import ssl_context
from agenteval.trace import Usage

__all__ = ["CREATE_PARAMETERS", "client", "usage"]

CREATE_PARAMETERS = frozenset(inspect.signature(AsyncCompletions.create).parameters) - {"self"}
"""The arguments `chat.completions.create` takes (any other parameter goes in the body)."""


def client(
    *, api_key: str, base_url: str | None, timeout_s: float, shared_tls: bool = False
) -> AsyncOpenAI:
    """An `AsyncOpenAI` with the SDK's retries off (agenteval retries, counting each by reason).
    `shared_tls`: use the process's one SSL context (`ssl_context`), for clients made often."""
    extra: dict[str, Any] = {}
    if shared_tls:
        extra["http_client"] = DefaultAsyncHttpxClient(verify=ssl_context())
    return AsyncOpenAI(
        api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s, **extra
    )


def usage(counts: CompletionUsage | None) -> Usage | None:
    """The call's token usage, as `agenteval.pricing` reads it (cached tokens are part of the
    input, reasoning tokens part of the output, as OpenAI counts them already); None when the
    response carried none (a server or proxy that leaves `usage` out): its tokens are unknown,
    never 0."""
    if counts is None:
        return None
    prompt_details: Any = counts.prompt_tokens_details
    completion_details: Any = counts.completion_tokens_details
    return Usage(
        input_tokens=counts.prompt_tokens or 0,
        output_tokens=counts.completion_tokens or 0,
        cached_tokens=getattr(prompt_details, "cached_tokens", None) or 0,
        reasoning_tokens=getattr(completion_details, "reasoning_tokens", None) or 0,
    )
