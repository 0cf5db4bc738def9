"""The failures a tool mock injects (`error:`), raised as the agent's own code would meet them.

`error: timeout` and `error: rate_limited` test the agent's error handling, so they must be
caught by the `except` clauses the agent already has: the exception raised is a Python
`TimeoutError` (what sockets and asyncio raise) and, for each HTTP client the agent's process
has loaded (httpx, httpx2, requests), that client's own timeout type; a rate limit is each loaded
client's HTTP status error carrying a real 429 response with a `Retry-After` header. Only
clients already imported count: the tool's module imports its client, and agenteval imports
none for it. Any other `error:` text raises an `InjectedError` (of a class named as the text's
`Name:` prefix, so the recorded error reads as written).

Every injected failure is an `InjectedError`: one the agent lets out is the agent's failure,
never retried as infrastructure (the engine checks for it).
"""

from __future__ import annotations

import builtins
import contextlib
import sys
import threading
from typing import Any

__all__ = [
    "InjectedError",
    "InjectedRateLimit",
    "InjectedTimeout",
    "injected_error",
    "is_injected",
    "mark_injected",
    "named_error",
]


class InjectedError(Exception):
    """Raised into the agent by a mock's (or a replayed call's) `error`: the failure the case
    asked for."""


class InjectedTimeout(InjectedError, TimeoutError):
    """`error: timeout`: a `TimeoutError` (and each loaded HTTP client's timeout type)."""


class InjectedRateLimit(InjectedError):
    """`error: rate_limited`: an HTTP 429 (and each loaded HTTP client's status error, its
    `response` a real 429 with `Retry-After`)."""

    status_code = 429


_CLIENTS = (
    # (module, its timeout class, its HTTP status error class)
    ("httpx", "ReadTimeout", "HTTPStatusError"),
    ("httpx2", "ReadTimeout", "HTTPStatusError"),
    ("requests.exceptions", "ReadTimeout", "HTTPError"),
)
_KINDS: dict[tuple[str, tuple[str, ...]], type[InjectedError]] = {}
_NAMED: dict[str, type[InjectedError]] = {}
_LOCK = threading.Lock()


def _loaded_bases(position: int) -> tuple[tuple[str, ...], tuple[type[BaseException], ...]]:
    names: list[str] = []
    bases: list[type[BaseException]] = []
    for client in _CLIENTS:
        module = sys.modules.get(client[0])
        kind = getattr(module, client[position], None) if module is not None else None
        if isinstance(kind, type) and issubclass(kind, BaseException):
            names.append(client[0])
            bases.append(kind)
    return tuple(names), tuple(bases)


def _kind(base: type[InjectedError], position: int) -> type[InjectedError]:
    """`base` mixed with the loaded clients' classes (made once per set of clients)."""
    names, bases = _loaded_bases(position)
    key = (base.__name__, names)
    with _LOCK:
        kind = _KINDS.get(key)
        if kind is None:
            try:
                kind = type(base.__name__, (base, *bases), {"__module__": __name__})
            except TypeError:  # a client whose classes cannot be mixed: the base alone
                kind = base
            _KINDS[key] = kind
    return kind


def _http_parts(client: str) -> tuple[Any, Any] | None:
    """A real request and 429 response of an httpx-like client, or None."""
    module = sys.modules.get(client)
    if module is None:
        return None
    try:
        request = module.Request("POST", "http://agenteval.invalid/tool")
        response = module.Response(429, headers={"Retry-After": "1"}, request=request)
    except Exception:  # a client version whose constructors differ: no response to attach
        return None
    return request, response


def _rate_limit(message: str) -> InjectedError:
    kind = _kind(InjectedRateLimit, 2)
    # Made without the clients' constructors (httpx's wants a request and a response by
    # keyword, requests' takes them optionally), then given what `raise_for_status()` sets.
    exc = kind.__new__(kind, message)
    BaseException.__init__(exc, message)
    request = response = None
    for client in ("httpx", "httpx2"):
        parts = _http_parts(client)
        if parts is not None:
            # requests' HTTPError reads `.response` the same way (`status_code`, `headers`),
            # so one response serves every mixed-in client.
            request, response = parts
            break
    exc.request, exc.response = request, response  # type: ignore[attr-defined]
    return exc


_MARK = "agenteval_injected"


def mark_injected(exc: BaseException) -> BaseException:
    """`exc`, raised by a case's own mock function, marked as injected (`is_injected`)."""
    # An exception that takes no attribute stays unmarked: the agent's to explain.
    with contextlib.suppress(Exception):
        setattr(exc, _MARK, True)
    return exc


def is_injected(exc: BaseException) -> bool:
    """Whether `exc` is a failure a mock injected: an `InjectedError`, or marked so."""
    return isinstance(exc, InjectedError) or getattr(exc, _MARK, False) is True


def named_error(text: str) -> InjectedError:
    """The exception an `error: "TypeName: message"` raises: of a class named `TypeName` (so
    the call's recorded error reads as written; one of Python's own, `ValueError`, `KeyError`,
    is also that class, so the agent's `except ValueError:` catches it), else an
    `InjectedError` with the text."""
    head, sep, message = text.partition(": ")
    if sep and head.isidentifier():
        kind = _named_kind(head)
        return kind(message) if message else kind()  # a bare `KeyError` stays bare
    return InjectedError(text)


def _named_kind(name: str) -> type[InjectedError]:
    with _LOCK:
        kind = _NAMED.get(name)
        if kind is None:
            builtin = getattr(builtins, name, None)
            bases: tuple[type[BaseException], ...] = (InjectedError,)
            if isinstance(builtin, type) and issubclass(builtin, Exception):
                bases = (InjectedError, builtin)
            try:
                kind = type(name, bases, {"__module__": __name__})
            except TypeError:  # a builtin whose layout cannot be mixed in
                kind = type(name, (InjectedError,), {"__module__": __name__})
            _NAMED[name] = kind
    return kind


def injected_error(text: str, tool: str) -> InjectedError:
    """The exception a mock's `error:` raises (see the module)."""
    if text == "timeout":
        return _kind(InjectedTimeout, 1)(f"{tool}: the call timed out (injected by a tool mock)")
    if text == "rate_limited":
        return _rate_limit(f"{tool}: 429 Too Many Requests (injected by a tool mock)")
    return named_error(text)
