"""Anthropic's Messages API, through the `anthropic` SDK (imported here: this module is imported
only when a provider is made)."""

from __future__ import annotations

import inspect
from typing import Any

from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient
from anthropic.resources.messages import AsyncMessages
from anthropic.types import Message

from agenteval.providers.access import ssl_context
from agenteval.trace import Usage

__all__ = ["CREATE_PARAMETERS", "client", "usage"]

CREATE_PARAMETERS = frozenset(inspect.signature(AsyncMessages.create).parameters) - {"self"}
"""The arguments `messages.create` takes (in anthropic 2.x, not `temperature`, `top_p` nor
`top_k`: those go in the body)."""


def client(
    *, api_key: str, base_url: str | None, timeout_s: float, shared_tls: bool = False
) -> AsyncAnthropic:
    """An `AsyncAnthropic` with the SDK's retries off (agenteval retries, counting each by
    reason). `shared_tls`: use the process's one SSL context, for clients made often."""
    extra: dict[str, Any] = {}
    if shared_tls:
        extra["http_client"] = DefaultAsyncHttpxClient(verify=ssl_context())
    return AsyncAnthropic(
        api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s, **extra
    )


def usage(message: Message) -> Usage | None:
    """The call's token usage, as `agenteval.pricing` reads it: the Messages API counts cache
    reads and writes apart from `input_tokens`; here they are part of the input. None when the
    response carried none (a proxy that strips it; the SDK does not validate the field): its
    tokens are unknown, never 0."""
    counts: Any = getattr(message, "usage", None)
    if counts is None:
        return None
    cache_read = counts.cache_read_input_tokens or 0
    cache_write = counts.cache_creation_input_tokens or 0
    details: Any = counts.output_tokens_details
    return Usage(
        input_tokens=(counts.input_tokens or 0) + cache_read + cache_write,
        output_tokens=counts.output_tokens or 0,
        cached_tokens=cache_read,
        reasoning_tokens=getattr(details, "thinking_tokens", None) or 0,
    )
