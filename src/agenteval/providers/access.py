"""Reaching a provider: its SDK, its API key and its base URL, from the arguments or the
environment (an argument wins over the environment).

- openai: ``OPENAI_API_KEY``; ``OPENAI_BASE_URL`` for any OpenAI-compatible server;
- anthropic: ``ANTHROPIC_API_KEY``; ``ANTHROPIC_BASE_URL``;
- google: ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY`` (in that order); ``GOOGLE_GEMINI_BASE_URL``.

When a base URL is set and no key is, a caller sends `PLACEHOLDER_API_KEY`: local
OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio) need none, and the SDKs refuse to
start without one. Nothing here imports an SDK unless asked to (`import_sdk`).
"""

from __future__ import annotations

import functools
import importlib
import os
import ssl
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

__all__ = [
    "BASE_URL_VARS",
    "KEY_VARS",
    "PLACEHOLDER_API_KEY",
    "PROVIDERS",
    "SDK_PACKAGES",
    "ProviderUnavailable",
    "env_value",
    "first_env_value",
    "import_sdk",
    "split_params",
    "ssl_context",
]

PROVIDERS = ("openai", "anthropic", "google")
"""The providers agenteval speaks to, each through its official SDK."""

PLACEHOLDER_API_KEY = "agenteval-no-key"
"""The key sent to a custom base URL when no key is set (local servers need none)."""

SDK_MODULES: Mapping[str, str] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "google.genai",
}
"""The module each provider's SDK is imported as."""
SDK_PACKAGES: Mapping[str, str] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "google-genai",
}
"""The package each provider's SDK is installed as (each is an extra: ``agenteval[openai]``)."""
KEY_VARS: Mapping[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
}
"""The environment variables holding each provider's API key, the first one set wins."""
BASE_URL_VARS: Mapping[str, str] = {
    "openai": "OPENAI_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
    "google": "GOOGLE_GEMINI_BASE_URL",
}
"""The environment variable holding each provider's base URL."""


class ProviderUnavailable(Exception):
    """The provider cannot be used here: its SDK is not installed, or its API key is not set.

    The message names the fix.
    """


def import_sdk(provider: str) -> ModuleType:
    """The provider's SDK module, imported; raises the `ImportError` when it is not installed."""
    return importlib.import_module(SDK_MODULES[provider])


def env_value(name: str) -> str | None:
    """The environment variable `name`, stripped; None when it is unset or blank."""
    value = os.environ.get(name, "").strip()
    return value or None


def first_env_value(names: Iterable[str]) -> str | None:
    """The first of the environment variables `names` that is set (see `env_value`)."""
    for name in names:
        value = env_value(name)
        if value:
            return value
    return None


def split_params(
    params: Mapping[str, Any], accepted: Iterable[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Sampling parameters split into those the SDK's method takes as arguments (`accepted`)
    and the rest, which a caller sends in the request body as they are (`extra_body`), so that an
    OpenAI-compatible server's own options (`top_k`, say) get through."""
    names = set(accepted)
    known = {name: value for name, value in params.items() if name in names}
    extra = {name: value for name, value in params.items() if name not in names}
    return known, extra


@functools.cache
def ssl_context() -> ssl.SSLContext:
    """One SSL context for many clients: an SDK's client would build its own each time, loading
    the CA store (~45 ms of CPU, more than a call to a local server)."""
    import httpx2

    return httpx2.create_ssl_context()
