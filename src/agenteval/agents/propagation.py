"""The trace context an agent passes on to a service it calls (W3C `traceparent`), so the
service's spans join the trial's trace.

The agents know nothing of OpenTelemetry (it is optional, and a layer above them): live
capture (`agenteval.otel.live`) sets, for each attempt, the `Outgoing` that makes the headers
from the trial's OpenTelemetry context, and hears which calls the service answered. Outside
a captured attempt (no OpenTelemetry SDK, `OTEL_SDK_DISABLED=true`, no trial) there is none,
and a call carries no trace context.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar, Token
from typing import Protocol

__all__ = ["Outgoing", "outgoing_trace", "propagate_from", "stop_propagating"]


class Outgoing(Protocol):
    """How the running attempt passes its trace context on to a service it calls."""

    def headers(self) -> tuple[Mapping[str, str], Callable[[], None]]:
        """The headers of one call (`traceparent`, `tracestate`, ...), and what to call once
        the service answered it (the attempt then expects the service's spans)."""
        ...


_outgoing: ContextVar[Outgoing | None] = ContextVar("agenteval_outgoing_trace", default=None)


def _nothing() -> None:
    pass


def outgoing_trace() -> tuple[Mapping[str, str], Callable[[], None]]:
    """The trace-context headers for a call the agent makes now (none outside a captured
    attempt), and what to call once the service has answered it."""
    outgoing = _outgoing.get()
    if outgoing is None:
        return {}, _nothing
    return outgoing.headers()


def propagate_from(outgoing: Outgoing) -> Token[Outgoing | None]:
    """Calls made from here on, in this context, pass on the trace context `outgoing` gives,
    until `stop_propagating` with the token returned. (A token, not a context manager: live
    capture enters one per attempt, and a generator-based manager cost a tenth of a bare
    trial's time.)"""
    return _outgoing.set(outgoing)


def stop_propagating(token: Token[Outgoing | None]) -> None:
    """Undo `propagate_from`."""
    _outgoing.reset(token)
