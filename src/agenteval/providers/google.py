"""Gemini through the `google-genai` SDK (imported here: this module is imported only when a
provider is made).

The client always talks to the Gemini Developer API with an API key (``vertexai=False``),
whatever ``GOOGLE_GENAI_USE_VERTEXAI`` says. `max_tokens` is spelt ``max_output_tokens`` here;
other parameters must be fields of `GenerateContentConfig` (`CONFIG_FIELDS`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from google import genai
from google.genai import types

from agenteval.trace import Usage

__all__ = [
    "CONFIG_FIELDS",
    "NO_RETRY",
    "PARAM_ALIASES",
    "aclose",
    "client",
    "milliseconds",
    "request_options",
    "unknown_params",
    "usage",
]

NO_RETRY = types.HttpRetryOptions(attempts=1)
"""One attempt: google-genai would otherwise retry 429 and 5xx (and aiohttp connection errors)."""
CONFIG_FIELDS = frozenset(types.GenerateContentConfig.model_fields)
"""The parameters a `GenerateContentConfig` takes."""
PARAM_ALIASES = {"max_tokens": "max_output_tokens"}
"""Parameter names as the other providers spell them, to google-genai's."""


def milliseconds(seconds: float) -> int:
    """A timeout in google-genai's unit (whole milliseconds, at least 1)."""
    return max(1, math.ceil(seconds * 1000))


def client(*, api_key: str, base_url: str | None, timeout_s: float) -> genai.Client:
    """A `genai.Client` for the Gemini Developer API with the SDK's retries off (agenteval
    retries, counting each by reason)."""
    return genai.Client(
        vertexai=False,
        api_key=api_key,
        http_options=types.HttpOptions(
            base_url=base_url, timeout=milliseconds(timeout_s), retry_options=NO_RETRY
        ),
    )


def request_options(timeout_s: float) -> types.HttpOptions:
    """One request's HTTP options: its timeout, and the SDK's retries off."""
    return types.HttpOptions(timeout=milliseconds(timeout_s), retry_options=NO_RETRY)


def unknown_params(names: Iterable[str]) -> list[str]:
    """The parameter names (after `PARAM_ALIASES`) that are no `GenerateContentConfig` field,
    sorted."""
    return sorted({PARAM_ALIASES.get(name, name) for name in names} - CONFIG_FIELDS)


async def aclose(client: genai.Client) -> None:
    """Close the client's HTTP connections, async and sync."""
    await client.aio.aclose()
    client.close()


def usage(metadata: types.GenerateContentResponseUsageMetadata | None) -> Usage | None:
    """The call's token usage, as `agenteval.pricing` reads it: Gemini counts thinking apart
    from the candidates, and bills it as output; here it is part of the output. None when the
    response carried no `usageMetadata`: its tokens are unknown, never 0."""
    if metadata is None:
        return None
    thoughts = metadata.thoughts_token_count or 0
    return Usage(
        input_tokens=metadata.prompt_token_count or 0,
        output_tokens=(metadata.candidates_token_count or 0) + thoughts,
        cached_tokens=metadata.cached_content_token_count or 0,
        reasoning_tokens=thoughts,
    )
