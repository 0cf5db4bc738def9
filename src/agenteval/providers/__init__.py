"""The model providers agenteval calls itself: openai, anthropic and google, each through its
official SDK, for the judge, the built-in agent and whatever else asks a model.

- `agenteval.providers.access`: which providers there are, their SDKs (each an extra, imported
  only when a provider is made), their API keys and base URLs from the environment, and
  `ProviderUnavailable`; no SDK is imported by importing it, nor this package.
- `agenteval.providers.openai`, `.anthropic`, `.google`: each SDK's client, made with the SDK's
  own retries off (agenteval retries and counts each retry by reason, so a silent SDK retry
  would hide rate limits and double the wait), and its token usage read as `agenteval.pricing`
  reads `agenteval.trace.Usage`: `input_tokens` includes the cached ones (`cached_tokens` is the
  part served from the prompt cache) and `output_tokens` includes the reasoning ones
  (`reasoning_tokens` is a breakdown of it), whatever the provider's own convention. Importing
  one imports its SDK.
- `agenteval.providers.throttle`: the adaptive limit on calls in flight per endpoint, shared by
  every caller of the process, and the retry budget of one call.

Errors are the SDKs' own exceptions: `agenteval.failures.classify` maps them to agenteval's
causes (rate limited, timeout, connection, provider error) by their types' names, importing no
SDK, and `agenteval.retry.RetryPolicy` says how long to wait before a retry.
"""

from __future__ import annotations

# The package's own names are those of `access`: importing it imports no SDK.
from agenteval.providers.access import *  # noqa: F403
from agenteval.providers.access import __all__ as __all__
