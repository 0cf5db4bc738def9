"""How a judge (or the user simulator, which asks through the same sampling) is set up: the
model as `provider:model`, its parameters, limits, retries and cache (`JudgeConfig`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenteval.errors import ConfigError

__all__ = ["DEFAULT_CACHE_PATH", "PROVIDERS", "JudgeConfig", "parse_spec"]

PROVIDERS = ("openai", "anthropic", "google")
DEFAULT_CACHE_PATH = Path(".agenteval/judge-cache.db")


def parse_spec(spec: str) -> tuple[str, str]:
    """Split `provider:model` (the model may hold colons, as Ollama's `llama3.1:8b` does)."""
    provider, sep, model = spec.partition(":")
    if not sep or not model or provider not in PROVIDERS:
        raise ConfigError(
            f"{spec!r} is not a judge",
            field="judge",
            hint="write PROVIDER:MODEL with a provider among "
            + ", ".join(PROVIDERS)
            + " (e.g. openai:gpt-4o-mini, anthropic:claude-haiku-4-5, google:gemini-2.5-flash)",
        )
    return provider, model


@dataclass(frozen=True)
class JudgeConfig:
    """How to judge: the model, its parameters, limits, retries and cache."""

    spec: str
    """`provider:model`, e.g. `openai:gpt-4o-mini`."""
    base_url: str | None = None
    """An OpenAI-compatible (or other) endpoint; else the provider's `*_BASE_URL` variable."""
    params: Mapping[str, Any] = field(default_factory=lambda: {"temperature": 0.0})
    timeout_s: float = 60.0
    max_retries: int = 3
    concurrency: int = 8
    """Judge calls in flight at once, across the whole run."""
    adaptive: bool = True
    """Adapt the calls in flight to the provider's 429s, under `concurrency`, pausing for
    their `Retry-After` (see `agenteval.providers.throttle`); False: a fixed `concurrency`."""
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    cache_path: Path = DEFAULT_CACHE_PATH
    use_cache: bool = True

    def __post_init__(self) -> None:
        parse_spec(self.spec)

    @property
    def provider(self) -> str:
        """The provider's name."""
        return parse_spec(self.spec)[0]

    @property
    def model(self) -> str:
        """The model's name, as given."""
        return parse_spec(self.spec)[1]
