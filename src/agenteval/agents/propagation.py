"""The trace context an agent passes on to a service it calls (W3C `traceparent`), so the
service's spans join the trial's trace.

The agents know nothing of OpenTelemetry (it is optional, and a layer above them): live
capture (`agenteval.otel.live`) sets, for each attempt, the `Outgoing` that makes the headers
from the trial's OpenTelemetry context, and hears which calls the service answered. Outside
a captured attempt (no OpenTelemetry SDK, `OTEL_SDK_DISABLED=true`, no trial) there is none,
and a call carries no trace context.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

__all__ = ["Outgoing", "outgoing_trace", "propagating"]


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


@contextmanager
def propagating(outgoing: Outgoing) -> Iterator[None]:
    """Calls made inside the block pass on the trace context `outgoing` gives."""
    token = _outgoing.set(outgoing)
    try:
        yield
    finally:
        _outgoing.reset(token)
