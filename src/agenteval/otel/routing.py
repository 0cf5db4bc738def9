"""Routing spans and log records to the trial attempt they belong to: the spans of this
process (a span processor on the TracerProvider), its log records (a log record processor on
the LoggerProvider), and those received from other processes over OTLP (`receiver.py`).

Each attempt is one trace (`live.py` gives it its own), so whatever carries the attempt's
trace id is the attempt's; in this process the context an SDK span starts in says it first
(`capturing`), which holds for spans whose trace the agent started itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .otlp import LogEvent, attach_logs
from .spans import SpanEvent, SpanRecord, SpanStatus

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace import Span as SdkSpan

__all__ = [
    "SCOPE",
    "Capture",
    "LogRouter",
    "Router",
    "Unrouted",
    "capturing",
    "log_router",
    "plain",
    "router",
    "span_record",
]

SCOPE = "agenteval"
"""The instrumentation scope of agenteval's own spans (never captured as the agent's)."""


class Capture:
    """What one trial attempt captured: the SDK spans of its process, the spans and log records
    received over OTLP (`receiver.py`), and the log records of its process."""

    __slots__ = (
        "answered",
        "closed",
        "entries",
        "logs",
        "open",
        "propagated",
        "received",
        "spans",
        "trace_id",
        "waited",
        "waiter",
    )

    def __init__(self, trace_id: int | None = None) -> None:
        self.spans: list[ReadableSpan] = []
        self.received: list[SpanRecord] = []
        self.logs: list[LogEvent] = []
        self.open: set[tuple[int, int]] = set()
        self.trace_id = trace_id
        self.closed = False
        self.answered: dict[str, int] = {}
        """Calls of a service the attempt made (and the service answered), by the span (hex)
        whose context they carried: each is to be followed by the service's entry span."""
        self.entries: dict[str, int] = {}
        """Received spans by parent span (hex): those whose parent is an answered call's are
        its service's entry spans."""
        self.waiter: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        self.waited = False
        """Whether the attempt waited for its service's spans (it answered, with a receiver)."""
        self.propagated = False
        """Whether the attempt passed its trace context on to a service (only then can spans
        of its trace arrive from elsewhere after it ended)."""

    def arrived(self) -> bool:
        """Whether every answered call's entry span has been received."""
        return all(self.entries.get(span, 0) >= n for span, n in self.answered.items())


@dataclass(frozen=True)
class Unrouted:
    """What `receive` could give to no trial: records of traces no attempt of this process
    started (`unknown`), of an attempt that waited for them and stopped before they came
    (`late`), and of an attempt that ended without waiting (`abandoned`: it failed, timed out
    or was retried, and only an answered attempt waits)."""

    unknown: list[SpanRecord | LogEvent]
    late: list[SpanRecord | LogEvent]
    abandoned: list[SpanRecord | LogEvent] = field(default_factory=list)


_ENDED_KEPT = 65536
"""How many ended attempts' trace ids are remembered, to tell a late span from a stranger."""


class Router:
    """A span processor handing each span to the trial it belongs to, and the one place spans
    and log records received from other processes are handed to theirs.

    Spans are routed when they start, by the trial in the starting context, else by their
    trace; a span that ends after its trial's attempt is over is dropped. Received spans and
    log records go by their trace: each attempt is one trace.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_span: dict[tuple[int, int], Capture] = {}
        self._by_trace: dict[int, Capture] = {}
        self._ended: OrderedDict[int, bool] = OrderedDict()
        """Ended attempts' traces, and whether each waited for its service's spans."""
        self.timeouts = 0
        """Attempts whose wait for their service's spans ran out, since the process started."""

    def on_start(self, span: SdkSpan, parent_context: Context | None = None) -> None:
        scope = span.instrumentation_scope
        if scope is not None and scope.name == SCOPE:
            return
        context = span.get_span_context()
        capture = capturing.get()
        with self._lock:
            if capture is None:
                capture = self._by_trace.get(context.trace_id)
            if capture is None or capture.closed:
                return
            key = (context.trace_id, context.span_id)
            self._by_span[key] = capture
            capture.open.add(key)

    def _on_ending(self, span: SdkSpan) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        context = span.context
        if context is None:
            return
        key = (context.trace_id, context.span_id)
        with self._lock:
            capture = self._by_span.pop(key, None)
            if capture is None or capture.closed:
                return
            capture.open.discard(key)
            capture.spans.append(span)

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def log(self, trace_id: int, log: LogEvent) -> None:
        """A log record of this process naming a span: to the trial in this context, else to
        the one of its trace."""
        capture = capturing.get()
        with self._lock:
            if capture is None:
                capture = self._by_trace.get(trace_id)
            if capture is not None and not capture.closed:
                capture.logs.append(log)

    def receive(self, spans: Iterable[SpanRecord], logs: Iterable[LogEvent] = ()) -> Unrouted:
        """Spans and log records received from another process, each to the attempt of its
        trace; what belongs to none is returned."""
        unknown: list[SpanRecord | LogEvent] = []
        late: list[SpanRecord | LogEvent] = []
        abandoned: list[SpanRecord | LogEvent] = []
        woken: set[Capture] = set()
        items: list[SpanRecord | LogEvent] = [*spans, *logs]
        with self._lock:
            for item in items:
                try:
                    trace_id = int(item.trace_id, 16)
                except ValueError:
                    unknown.append(item)
                    continue
                capture = self._by_trace.get(trace_id)
                if capture is None or capture.closed:
                    waited = self._ended.get(trace_id)
                    kind = unknown if waited is None else late if waited else abandoned
                    kind.append(item)
                    continue
                if isinstance(item, LogEvent):
                    capture.logs.append(item)
                    continue
                capture.received.append(item)
                # Counted whether or not the call is known answered yet: under load the service's
                # batch may arrive before the agent has read the answer.
                if item.parent_id is not None:
                    capture.entries[item.parent_id] = capture.entries.get(item.parent_id, 0) + 1
                if capture.waiter is not None:
                    woken.add(capture)
            waiters = [c.waiter for c in woken if c.waiter is not None]
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # its loop closed: nobody waits any more
                loop.call_soon_threadsafe(event.set)
        return Unrouted(unknown, late, abandoned)

    def answered(self, capture: Capture, span_id: str) -> None:
        with self._lock:
            capture.answered[span_id] = capture.answered.get(span_id, 0) + 1

    def watch(
        self, capture: Capture, waiter: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None
    ) -> bool:
        """Set who waits for the capture's received spans; whether they have all arrived."""
        with self._lock:
            capture.waiter = waiter
            return capture.arrived()

    def open_capture(self, trace_id: int) -> Capture:
        capture = Capture(trace_id=trace_id)
        with self._lock:
            self._by_trace.setdefault(trace_id, capture)
        return capture

    def close_capture(self, capture: Capture) -> list[SpanRecord]:
        """End the attempt's capture: every span it holds, in the shape conversion reads, with
        the log records naming each added to its events."""
        with self._lock:
            capture.closed = True
            if capture.trace_id is not None and self._by_trace.get(capture.trace_id) is capture:
                del self._by_trace[capture.trace_id]
                # Remembered only for an attempt that passed its trace on: the rest (nearly
                # every trial of an in-process agent) would cost memory for nothing.
                if capture.propagated:
                    self._ended[capture.trace_id] = capture.waited
                    while len(self._ended) > _ENDED_KEPT:
                        self._ended.popitem(last=False)
            for key in capture.open:
                self._by_span.pop(key, None)
            capture.open.clear()
            spans, received, logs = list(capture.spans), list(capture.received), capture.logs
        if not spans and not received:
            return []  # the usual trial of an agent that emits no span: nothing to read
        records = [span_record(span) for span in spans]
        seen = {(r.trace_id, r.span_id) for r in records}
        for record in received:  # a retried export may bring a span twice: it counts once
            if (record.trace_id, record.span_id) not in seen:
                seen.add((record.trace_id, record.span_id))
                records.append(record)
        return attach_logs(records, logs)


class LogRouter:
    """A log record processor handing each log record that names a span to the trial it
    belongs to, as an event of that span (the GenAI per-message events, and openai-v2's
    `gen_ai.client.inference.operation.details`, are log records)."""

    def on_emit(self, log_record: Any) -> None:
        record = getattr(log_record, "log_record", log_record)
        trace_id, span_id = record.trace_id or 0, record.span_id or 0
        if not trace_id or not span_id:
            return
        attributes = {k: plain(v) for k, v in (record.attributes or {}).items()}
        body = plain(record.body)
        name = getattr(record, "event_name", None) or attributes.get("event.name") or ""
        event = SpanEvent(str(name), attributes, body)
        router.log(trace_id, LogEvent(f"{trace_id:032x}", f"{span_id:016x}", event))

    def emit(self, log_record: Any) -> None:  # the SDK's name for on_emit before 1.39
        self.on_emit(log_record)

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def span_record(span: ReadableSpan) -> SpanRecord:
    """A finished SDK span in the shape conversion reads."""
    from opentelemetry.trace import StatusCode

    context = span.context
    parent = span.parent
    status = span.status.status_code
    return SpanRecord(
        name=span.name,
        trace_id=f"{context.trace_id:032x}" if context is not None else "",
        span_id=f"{context.span_id:016x}" if context is not None else "",
        parent_id=f"{parent.span_id:016x}" if parent is not None else None,
        start_ns=span.start_time or 0,
        end_ns=span.end_time or span.start_time or 0,
        attributes={k: plain(v) for k, v in (span.attributes or {}).items()},
        status=(
            SpanStatus.ERROR
            if status is StatusCode.ERROR
            else SpanStatus.OK
            if status is StatusCode.OK
            else SpanStatus.UNSET
        ),
        status_message=span.status.description or "",
        events=tuple(
            SpanEvent(e.name, {k: plain(v) for k, v in (e.attributes or {}).items()})
            for e in span.events
        ),
        resource=dict(span.resource.attributes),
        scope=span.instrumentation_scope.name if span.instrumentation_scope else "",
    )


def plain(value: Any) -> Any:
    """An attribute value or a log body as plain Python values: sequences as lists, mappings
    (a structured body) as dicts."""
    if isinstance(value, tuple | list):
        return [plain(item) for item in value]
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    return value


capturing: ContextVar[Capture | None] = ContextVar("agenteval_span_capture", default=None)
"""The attempt running in this context, if any."""
router = Router()
log_router = LogRouter()
