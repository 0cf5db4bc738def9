"""Classifying what went wrong in a trial: whose fault it was, and whether a retry may help.

Provider SDKs (openai, anthropic, google-genai, httpx) raise exceptions that carry an HTTP status
(`status_code`, `status` or `code`, or `response.status_code`) and sometimes a `Retry-After`
header; connection and timeout errors are recognised by type. Nothing here imports an SDK.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from agenteval.trace import FailureCause

__all__ = ["Classified", "TrialTimeoutError", "classify", "retry_after_s"]


class TrialTimeoutError(Exception):
    """The trial ran past its time limit."""


@dataclass(frozen=True)
class Classified:
    """What an exception means for the trial."""

    cause: FailureCause
    retryable: bool


def _status(exc: BaseException) -> int | None:
    for attr in ("status_code", "status", "code", "http_status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and 100 <= value <= 599:
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def _type_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def classify(exc: BaseException) -> Classified:
    """Tell an infrastructure failure (retryable) from the agent's own error (not retried)."""
    if isinstance(exc, TrialTimeoutError | TimeoutError | asyncio.TimeoutError):
        return Classified(FailureCause.TIMEOUT, retryable=True)
    names = _type_names(exc)
    status = _status(exc)
    if status == 429 or any("RateLimit" in name for name in names):
        return Classified(FailureCause.RATE_LIMITED, retryable=True)
    if status is not None and 500 <= status <= 599:
        return Classified(FailureCause.PROVIDER_ERROR, retryable=True)
    if any("Timeout" in name for name in names):
        return Classified(FailureCause.TIMEOUT, retryable=True)
    if isinstance(exc, ConnectionError) or any(
        "Connection" in name or name in {"ConnectError", "RemoteProtocolError"} for name in names
    ):
        return Classified(FailureCause.CONNECTION_ERROR, retryable=True)
    return Classified(FailureCause.AGENT_ERROR, retryable=False)


def retry_after_s(exc: BaseException) -> float | None:
    """The wait a provider asked for in its `Retry-After` header, in seconds, if any."""
    response: Any = getattr(exc, "response", None)
    headers: Any = getattr(response, "headers", None) or getattr(exc, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
    except AttributeError:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return None
