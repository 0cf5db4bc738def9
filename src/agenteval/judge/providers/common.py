"""What the judge's provider modules share: the SDK client made once (`SdkProvider`), the default
timeout, sampling parameters split into the SDK's arguments and the request body, and a verdict
read from JSON text."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Generic, TypeVar

from agenteval.providers import split_params as split_known

__all__ = ["DEFAULT_TIMEOUT_S", "SdkProvider", "parse_verdict", "split_params"]

DEFAULT_TIMEOUT_S = 60.0
"""The client's timeout when a request does not give one (each `JudgeRequest` does)."""

ClientT = TypeVar("ClientT")


class SdkProvider(Generic[ClientT]):
    """A judge provider over one SDK client, made once with the SDK's retries off (agenteval
    retries); each provider says how to make it (`make_client`)."""

    name: str

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.base_url = base_url
        self._client: ClientT = self.make_client(
            api_key=api_key, base_url=base_url, timeout_s=timeout_s
        )

    def make_client(self, *, api_key: str, base_url: str | None, timeout_s: float) -> ClientT:
        """The SDK's client (see `agenteval.providers`)."""
        raise NotImplementedError


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
    return split_known(params, accepted)


def parse_verdict(text: str | None) -> dict[str, Any] | None:
    """The JSON object `text` holds, or None when it is not one (no searching inside it)."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
        return None
    return value if isinstance(value, dict) else None
