"""Judge providers over the official SDKs: `openai`, `anthropic`, `google`.

`make_provider(name)` builds one. Each SDK is an extra (``pip install 'agenteval[openai]'``,
``[anthropic]``, ``[google]``) and is imported only here, when a provider is made, so agenteval
imports without any of them.

Keys and endpoints, for each provider (an argument wins over the environment):

- openai: ``OPENAI_API_KEY``; ``OPENAI_BASE_URL`` for any OpenAI-compatible server;
- anthropic: ``ANTHROPIC_API_KEY``; ``ANTHROPIC_BASE_URL``;
- google: ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY`` (in that order); ``GOOGLE_GEMINI_BASE_URL``.

When a base URL is set and no key is, the provider sends a placeholder key
(`PLACEHOLDER_API_KEY`): local OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio)
need none, and the SDKs refuse to start without one. A server that does want a key answers 401.
With neither a key nor a base URL, `make_provider` raises `ProviderUnavailable` naming the
variable to set.

Every provider turns the SDK's own retries off: agenteval retries judge calls itself and
counts each retry by reason, so a silent SDK retry would hide rate limits and double the wait.
Errors are the SDK's exceptions, left for `agenteval.failures.classify`.

Token usage follows `agenteval.trace.Usage` as `agenteval.pricing` reads it: `input_tokens`
includes the cached ones (`cached_tokens` is the part served from the prompt cache) and
`output_tokens` includes the reasoning ones (`reasoning_tokens` is a breakdown of it), whatever
the provider's own convention.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from agenteval.judge.provider import Provider, ProviderUnavailable

__all__ = ["PLACEHOLDER_API_KEY", "PROVIDERS", "make_provider", "provider_problem"]

PROVIDERS = ("openai", "anthropic", "google")
"""The provider names `make_provider` knows."""

PLACEHOLDER_API_KEY = "agenteval-no-key"
"""The key sent to a custom base URL when no key is set (local servers need none)."""

DEFAULT_TIMEOUT_S = 60.0
"""The client's timeout when a request does not give one (each `JudgeRequest` does)."""

_SDKS = {
    "openai": ("openai", "openai"),
    "anthropic": ("anthropic", "anthropic"),
    "google": ("google.genai", "google-genai"),
}
_KEY_VARS = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
}
_BASE_URL_VARS = {
    "openai": "OPENAI_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
    "google": "GOOGLE_GEMINI_BASE_URL",
}


def make_provider(
    name: str, *, base_url: str | None = None, api_key: str | None = None
) -> Provider:
    """The judge provider `name` (`openai`, `anthropic` or `google`).

    `base_url` and `api_key` fall back to the provider's environment variables (see the module
    docs). Raises `ValueError` for an unknown name, and `ProviderUnavailable`, naming the fix,
    when the provider's SDK is not installed or no API key is set.
    """
    key = _known(name)
    _require_sdk(key)
    url = base_url or _env(_BASE_URL_VARS[key])
    secret = api_key or _first_env(_KEY_VARS[key])
    if not secret:
        if not url:
            raise ProviderUnavailable(_missing_key_message(key))
        secret = PLACEHOLDER_API_KEY
    if key == "openai":
        from agenteval.judge.providers.openai import OpenAIProvider

        return OpenAIProvider(api_key=secret, base_url=url)
    if key == "anthropic":
        from agenteval.judge.providers.anthropic import AnthropicProvider

        return AnthropicProvider(api_key=secret, base_url=url)
    from agenteval.judge.providers.google import GoogleProvider

    return GoogleProvider(api_key=secret, base_url=url)


def provider_problem(
    name: str, *, base_url: str | None = None, api_key: str | None = None
) -> str | None:
    """Why `make_provider(name, ...)` would fail here (its SDK not installed, no API key and no
    base URL), naming the fix; None when it would not. Checked before a run starts, so a judge
    the user asked for that cannot run stops the command before anything is stored; no client
    is made. Raises `ValueError` for an unknown name, as `make_provider` does."""
    key = _known(name)
    try:
        _require_sdk(key)
    except ProviderUnavailable as exc:
        return str(exc)
    if api_key or _first_env(_KEY_VARS[key]) or base_url or _env(_BASE_URL_VARS[key]):
        return None
    return _missing_key_message(key)


def _known(name: str) -> str:
    key = name.strip().lower()
    if key not in _SDKS:
        raise ValueError(
            f"unknown judge provider {name!r}; known providers: {', '.join(PROVIDERS)}"
        )
    return key


def _require_sdk(provider: str) -> None:
    module, package = _SDKS[provider]
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise ProviderUnavailable(
            f"the {provider} judge needs the {package} package, which is not installed: "
            f"pip install 'agenteval[{provider}]'"
        ) from exc


def _missing_key_message(provider: str) -> str:
    names = " or ".join(_KEY_VARS[provider])
    message = f"the {provider} judge needs an API key: set {names}"
    if provider == "openai":
        message += (
            " (or set OPENAI_BASE_URL to an OpenAI-compatible server, such as Ollama, vLLM or "
            "llama.cpp, that needs no key)"
        )
    return message


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def _first_env(names: Iterable[str]) -> str | None:
    for name in names:
        value = _env(name)
        if value:
            return value
    return None


# --- Shared by the provider modules --------------------------------------------------------------


def split_params(
    params: Mapping[str, Any],
    *,
    provider: str,
    accepted: Iterable[str],
    reserved: Iterable[str],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split sampling parameters into the SDK's keyword arguments and extra body fields.

    Parameters the SDK's method takes are passed as arguments; any other goes into the request
    body as it is (`extra_body`), so an OpenAI-compatible server's own options (`top_k`, say)
    get through. A parameter that would change the verdict format or the request's shape
    (`reserved`) is refused with `ValueError`.
    """
    blocked = sorted(set(params) & set(reserved))
    if blocked:
        raise ValueError(
            f"judge parameter(s) {', '.join(blocked)} cannot be set for the {provider} judge: "
            "agenteval sets them itself"
        )
    names = set(accepted)
    known = {name: value for name, value in params.items() if name in names}
    extra = {name: value for name, value in params.items() if name not in names}
    return known, extra


def parse_verdict(text: str | None) -> dict[str, Any] | None:
    """The JSON object `text` holds, or None when it is not one (no searching inside it)."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
        return None
    return value if isinstance(value, dict) else None
