"""Judge providers over the official SDKs: `openai`, `anthropic`, `google`.

`make_provider(name)` builds one: a provider that asks its model for one structured verdict
(`agenteval.judge.provider`). What any caller of a provider shares (the SDKs, each an extra
imported only when a provider is made; the keys and base URLs; the clients with the SDK's own
retries off; token usage) is `agenteval.providers`: see there for the environment variables.

When a base URL is set and no key is, the provider sends a placeholder key
(`PLACEHOLDER_API_KEY`): local OpenAI-compatible servers need none. A server that does want a
key answers 401. With neither a key nor a base URL, `make_provider` raises `ProviderUnavailable`
naming the variable to set.

Errors are the SDK's exceptions, left for `agenteval.failures.classify`.
"""

from __future__ import annotations

from agenteval.judge.provider import Provider
from agenteval.providers import access
from agenteval.providers.access import PLACEHOLDER_API_KEY, PROVIDERS, ProviderUnavailable

__all__ = ["PLACEHOLDER_API_KEY", "PROVIDERS", "make_provider", "provider_problem"]


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
    url = base_url or access.env_value(access.BASE_URL_VARS[key])
    secret = api_key or access.first_env_value(access.KEY_VARS[key])
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
    name: str, *, base_url: str | None = None, api_key: str | None = None, role: str = "judge"
) -> str | None:
    """Why `make_provider(name, ...)` would fail here (its SDK not installed, no API key and no
    base URL), naming the fix; None when it would not. Checked before a run starts, so a judge
    the user asked for that cannot run stops the command before anything is stored; no client
    is made. Raises `ValueError` for an unknown name, as `make_provider` does. `role` is what
    the message calls the model (`judge`, `user simulator`)."""
    key = _known(name)
    try:
        _require_sdk(key, role)
    except ProviderUnavailable as exc:
        return str(exc)
    if (
        api_key
        or access.first_env_value(access.KEY_VARS[key])
        or base_url
        or access.env_value(access.BASE_URL_VARS[key])
    ):
        return None
    return _missing_key_message(key, role)


def _known(name: str) -> str:
    key = name.strip().lower()
    if key not in PROVIDERS:
        raise ValueError(
            f"unknown judge provider {name!r}; known providers: {', '.join(PROVIDERS)}"
        )
    return key


def _require_sdk(provider: str, role: str = "judge") -> None:
    try:
        access.import_sdk(provider)
    except ImportError as exc:
        raise ProviderUnavailable(
            f"the {provider} {role} needs the {access.SDK_PACKAGES[provider]} package, which is not "
            f"installed: pip install 'agenteval[{provider}]'"
        ) from exc


def _missing_key_message(provider: str, role: str = "judge") -> str:
    names = " or ".join(access.KEY_VARS[provider])
    message = f"the {provider} {role} needs an API key: set {names}"
    if provider == "openai":
        message += (
            " (or set OPENAI_BASE_URL to an OpenAI-compatible server, such as Ollama, vLLM or "
            "llama.cpp, that needs no key)"
        )
    return message
