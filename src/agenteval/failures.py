"""Classifying what went wrong in a trial or a model call: whose fault it was, and whether a
retry may help (`agenteval.retry.RetryPolicy` says how long to wait before it).

Used by the engine (a trial's failure), the judge and the built-in agent (a model call's), and the
adaptive throttle (a 429), so it sits below all of them and imports no SDK.

Infrastructure is only what agenteval recognises for certain, **by type**, never by an
exception's name or attributes (a user's `DatabaseConnectionError(Exception)` or
`sys.exit(503)` is the agent's own error):

- agenteval's own trial timeout (`TrialTimeoutError`);
- Python's own `ConnectionError` and `TimeoutError`, and their subclasses, wherever raised;
- the exception types of the provider SDKs (openai, anthropic, google-genai) and of the HTTP
  clients (httpx, httpx2, aiohttp, requests): `_KNOWN`, matched on each class's module and
  qualified name along the exception's MRO, so that nothing here imports an SDK. Of those that
  carry an HTTP status, the status decides (`_sdk_status`, `_http_status`);
- what the user declares: `agenteval.InfrastructureError` (with its cause), and the classes
  a run lists in `infrastructure_errors` (`provider_error`, unless a known kind).

Everything else is `agent_error`: not retried, and scored as the agent's failure. An exception
group is infrastructure only when every exception in it is (the first one's cause).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from agenteval.errors import InfrastructureError
from agenteval.trace import FailureCause

__all__ = ["Classified", "TrialTimeoutError", "classify", "retry_after_s"]


class TrialTimeoutError(Exception):
    """The trial ran past its time limit (agenteval's own timeout: infrastructure)."""


@dataclass(frozen=True)
class Classified:
    """What an exception means for the trial."""

    cause: FailureCause
    retryable: bool


_AGENT = Classified(FailureCause.AGENT_ERROR, retryable=False)
_CLASSIFIED = {cause: Classified(cause, retryable=True) for cause in FailureCause}

Rule = FailureCause | Callable[[BaseException], FailureCause]
"""How a known type is classified: a cause, or a function of the exception (its status)."""


def _sdk_cause(status: Any) -> FailureCause:
    """A provider SDK's HTTP status: 429 rate limited, 408 timeout, 409 (a conflict the SDKs
    themselves retry) and 5xx the provider's; any other 4xx is the agent's own request."""
    if not isinstance(status, int):
        return FailureCause.AGENT_ERROR
    if status == 429:
        return FailureCause.RATE_LIMITED
    if status == 408:
        return FailureCause.TIMEOUT
    if status == 409 or 500 <= status <= 599:
        return FailureCause.PROVIDER_ERROR
    return FailureCause.AGENT_ERROR


def _http_cause(status: Any) -> FailureCause:
    """A plain HTTP client's status error (`raise_for_status()`): what an agent calling its
    provider with its own client meets. 429 rate limited, 408 and 504 timeouts, any other 5xx
    the server's failure (a provider's 500 is no bug of the agent's: counting it as one would be
    a false failure on a common setup); any other 4xx is the agent's own request. (agenteval's
    HTTP agent, where the server IS the agent, raises its own types: a 500 there is the
    agent's error, `agents/http.py`.)"""
    if not isinstance(status, int):
        return FailureCause.AGENT_ERROR
    if status == 429:
        return FailureCause.RATE_LIMITED
    if status in (408, 504):
        return FailureCause.TIMEOUT
    if 500 <= status <= 599:
        return FailureCause.PROVIDER_ERROR
    return FailureCause.AGENT_ERROR


def _sdk_status(exc: BaseException) -> FailureCause:
    return _sdk_cause(getattr(exc, "status_code", None))  # openai / anthropic APIStatusError


def _genai_status(exc: BaseException) -> FailureCause:
    return _sdk_cause(getattr(exc, "code", None))  # google.genai.errors.APIError


def _http_response_status(exc: BaseException) -> FailureCause:
    # httpx / httpx2 HTTPStatusError, requests HTTPError (whose response may be None)
    return _http_cause(getattr(getattr(exc, "response", None), "status_code", None))


def _aiohttp_status(exc: BaseException) -> FailureCause:
    return _http_cause(getattr(exc, "status", None))  # aiohttp.ClientResponseError


_RATE = FailureCause.RATE_LIMITED
_PROVIDER = FailureCause.PROVIDER_ERROR
_CONNECTION = FailureCause.CONNECTION_ERROR
_TIMEOUT = FailureCause.TIMEOUT


def _sdk(module: str) -> dict[tuple[str, str], Rule]:
    # openai and anthropic name their public classes' module as the package itself.
    return {
        (module, "RateLimitError"): _RATE,
        (module, "InternalServerError"): _PROVIDER,
        (module, "APITimeoutError"): _TIMEOUT,  # before its base, APIConnectionError
        (module, "APIConnectionError"): _CONNECTION,
        (module, "APIStatusError"): _sdk_status,
    }


def _httpx(module: str) -> dict[tuple[str, str], Rule]:
    # httpx and httpx2 (same classes) name their public classes' module as the package itself.
    return {
        (module, "TimeoutException"): _TIMEOUT,
        (module, "NetworkError"): _CONNECTION,  # ConnectError, ReadError, WriteError, CloseError
        (module, "RemoteProtocolError"): _CONNECTION,  # the server dropped the connection
        (module, "ProxyError"): _CONNECTION,
        (module, "HTTPStatusError"): _http_response_status,
    }


_AIOHTTP = "aiohttp.client_exceptions"
_REQUESTS = "requests.exceptions"
_GENAI = "google.genai.errors"
_PYDANTIC_AI = "pydantic_ai.exceptions"

_KNOWN: Mapping[tuple[str, str], Rule] = {
    ("builtins", "ConnectionError"): _CONNECTION,
    ("builtins", "TimeoutError"): _TIMEOUT,  # asyncio.TimeoutError and socket.timeout too
    **_sdk("openai"),
    ("openai", "WebSocketConnectionClosedError"): _CONNECTION,
    **_sdk("anthropic"),
    ("anthropic", "RetryableError"): _PROVIDER,  # the SDK's own "retry this" marker
    (_GENAI, "APIError"): _genai_status,  # ClientError (4xx), ServerError (5xx)
    # pydantic-ai's model errors, whichever provider SDK it wrapped: its categories where it
    # has them (an HTTP error of a category reads as the category), else the HTTP status.
    (_PYDANTIC_AI, "ModelRateLimitError"): _RATE,
    (_PYDANTIC_AI, "ModelServerError"): _PROVIDER,
    (_PYDANTIC_AI, "ModelUnavailableError"): _PROVIDER,  # ModelOverloadedError too
    (_PYDANTIC_AI, "ModelTimeoutError"): _TIMEOUT,  # before its base, ModelConnectionError
    (_PYDANTIC_AI, "ModelConnectionError"): _CONNECTION,
    (_PYDANTIC_AI, "ModelRequestTimeout"): _TIMEOUT,
    (_PYDANTIC_AI, "ModelHTTPError"): _sdk_status,
    **_httpx("httpx"),
    **_httpx("httpx2"),
    (_AIOHTTP, "ServerTimeoutError"): _TIMEOUT,  # before its base, ClientConnectionError
    (_AIOHTTP, "ClientConnectionError"): _CONNECTION,
    (_AIOHTTP, "ClientResponseError"): _aiohttp_status,
    (_REQUESTS, "ConnectTimeout"): _TIMEOUT,  # a ConnectionError and a Timeout: the timeout
    (_REQUESTS, "Timeout"): _TIMEOUT,
    (_REQUESTS, "ConnectionError"): _CONNECTION,
    (_REQUESTS, "ChunkedEncodingError"): _CONNECTION,  # the connection broke mid-answer
    (_REQUESTS, "HTTPError"): _http_response_status,
}
"""Known types by (module, qualified name), checked along an exception's MRO, most derived
first. Keep it exact: `tests/engine/test_classification.py` checks every entry of the SDKs
installed against the real classes."""


def _known(exc: BaseException) -> FailureCause:
    for cls in type(exc).__mro__:
        rule = _KNOWN.get((cls.__module__, cls.__qualname__))
        if rule is not None:
            return rule if isinstance(rule, FailureCause) else rule(exc)
    return FailureCause.AGENT_ERROR


def classify(exc: BaseException, declared: tuple[type[BaseException], ...] = ()) -> Classified:
    """Tell an infrastructure failure (retryable) from the agent's own error (not retried).

    `declared`: the classes the run declares as infrastructure (`infrastructure_errors`).
    """
    if isinstance(exc, TrialTimeoutError):
        return _CLASSIFIED[FailureCause.TIMEOUT]
    if isinstance(exc, InfrastructureError):
        return _CLASSIFIED[exc.cause]
    if isinstance(exc, BaseExceptionGroup):
        kinds = [classify(inner, declared) for inner in exc.exceptions]
        if kinds and all(kind.retryable for kind in kinds):
            return kinds[0]
        return _AGENT
    cause = _known(exc)
    if cause is not FailureCause.AGENT_ERROR:
        return _CLASSIFIED[cause]
    if declared and isinstance(exc, declared):
        return _CLASSIFIED[FailureCause.PROVIDER_ERROR]
    return _AGENT


def _headers(exc: BaseException) -> Any:
    response: Any = getattr(exc, "response", None)
    return getattr(response, "headers", None) or getattr(exc, "headers", None)


def retry_after_s(exc: BaseException) -> float | None:
    """The wait asked for, in seconds, if any: an `InfrastructureError`'s `retry_after_s`, else
    the provider's `retry-after-ms` header (exact), else its `Retry-After` (seconds or a date)."""
    if isinstance(exc, InfrastructureError) and exc.retry_after_s is not None:
        return max(0.0, exc.retry_after_s)
    headers = _headers(exc)
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        value = headers.get("retry-after") or headers.get("Retry-After")
    except AttributeError:
        return None
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except (TypeError, ValueError):
            pass
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        when = parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())
