"""Live capture: every span the agent emits through the OpenTelemetry SDK while a trial runs
goes into that trial's record.

One span processor routes spans to the trial running in the context that started them (a
context variable, so concurrent trials never mix; spans started where the context was lost,
in a thread the agent started itself, still follow their trace). Each trial is one trace: under
a provider of the user's, rooted at a span of its own (`agenteval trial CASE`, carrying
`agenteval.case.id` and `agenteval.trial.index`) that the user's backend shows; under the one
agenteval installs, which exports nothing, rooted at a bare span context, which costs far less.

The agent needs no change beyond its existing instrumentation. With no TracerProvider
configured, agenteval installs an SDK one (exporting nothing) the first time a trial runs: the
OpenTelemetry API lets a process set its provider once, so it stays for the process. With one
configured, the processor is added to it, and its own processors and exporters keep working.
Without the SDK installed (`pip install 'agenteval[opentelemetry]'`), or with
`OTEL_SDK_DISABLED=true`, nothing is captured and nothing changes.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import random
import threading
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeAlias

from agenteval.agents.recorder import TrialRecorder
from agenteval.version import __version__

from .convert import CASE_ID_ATTRIBUTE, TRIAL_INDEX_ATTRIBUTE, read_spans
from .spans import SpanEvent, SpanRecord, SpanStatus

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace import Span as SdkSpan
    from opentelemetry.trace import Span, Tracer

__all__ = ["SCOPE", "SpanCapture", "capture_spans", "span_capture", "span_record"]

SCOPE = "agenteval"
"""The instrumentation scope of agenteval's own spans (never captured as the agent's)."""

logger = logging.getLogger("agenteval")


class _Capture:
    """The spans of one trial attempt."""

    __slots__ = ("closed", "open", "spans", "trace_id")

    def __init__(self, trace_id: int | None = None) -> None:
        self.spans: list[ReadableSpan] = []
        self.open: set[tuple[int, int]] = set()
        self.trace_id = trace_id
        self.closed = False


_current: ContextVar[_Capture | None] = ContextVar("agenteval_span_capture", default=None)


@functools.cache
def _sdk_available() -> bool:
    """Whether the OpenTelemetry SDK can be imported, found out on a run's first span capture
    (once a process), never when agenteval is imported: it is an optional dependency."""
    try:
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        return False
    return True


def _disabled() -> bool:
    return os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"


class _Router:
    """A span processor handing each span to the trial it belongs to.

    Spans are routed when they start, by the trial in the starting context, else by their
    trace; a span that ends after its trial's attempt is over is dropped.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_span: dict[tuple[int, int], _Capture] = {}
        self._by_trace: dict[int, _Capture] = {}

    def on_start(self, span: SdkSpan, parent_context: Context | None = None) -> None:
        scope = span.instrumentation_scope
        if scope is not None and scope.name == SCOPE:
            return
        context = span.get_span_context()
        capture = _current.get()
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

    def open_capture(self, trace_id: int) -> _Capture:
        capture = _Capture(trace_id=trace_id)
        with self._lock:
            self._by_trace.setdefault(trace_id, capture)
        return capture

    def close_capture(self, capture: _Capture) -> list[ReadableSpan]:
        with self._lock:
            capture.closed = True
            if capture.trace_id is not None and self._by_trace.get(capture.trace_id) is capture:
                del self._by_trace[capture.trace_id]
            for key in capture.open:
                self._by_span.pop(key, None)
            capture.open.clear()
            return list(capture.spans)


_router = _Router()
_tracers: weakref.WeakKeyDictionary[Any, tuple[Tracer, bool]] = weakref.WeakKeyDictionary()
"""agenteval's tracer on each provider, and whether the provider is the user's (exported)."""
_setup_lock = threading.Lock()
_warned: set[str] = set()


def _tracing() -> tuple[Tracer, bool] | None:
    """agenteval's tracer on the global provider, with the router attached to that provider
    (and a provider installed when there is none), and whether that provider is the user's;
    None when spans cannot be captured."""
    from opentelemetry import trace

    provider: Any = trace.get_tracer_provider()
    known = _tracers.get(provider)
    if known is not None:
        return known
    with _setup_lock:
        provider = trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider):
            from opentelemetry.sdk.trace import TracerProvider

            installed = TracerProvider()
            installed.add_span_processor(_router)  # type: ignore[arg-type]
            _tracers[installed] = (_scope_tracer(installed), False)
            trace.set_tracer_provider(installed)
            provider = trace.get_tracer_provider()  # another thread may have set one first
        if provider not in _tracers:
            add = getattr(provider, "add_span_processor", None)
            if add is None:
                name = type(provider).__name__
                if name not in _warned:
                    _warned.add(name)
                    logger.warning(
                        "the global TracerProvider (%s) takes no span processor: the agent's "
                        "spans are not captured",
                        name,
                    )
                return None
            add(_router)
            _tracers[provider] = (_scope_tracer(provider), True)
        return _tracers[provider]


def _scope_tracer(provider: Any) -> Tracer:
    tracer: Tracer = provider.get_tracer(SCOPE, __version__)
    return tracer


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
        attributes={k: _plain(v) for k, v in (span.attributes or {}).items()},
        status=(
            SpanStatus.ERROR
            if status is StatusCode.ERROR
            else SpanStatus.OK
            if status is StatusCode.OK
            else SpanStatus.UNSET
        ),
        status_message=span.status.description or "",
        events=tuple(
            SpanEvent(e.name, {k: _plain(v) for k, v in (e.attributes or {}).items()})
            for e in span.events
        ),
        resource=dict(span.resource.attributes),
        scope=span.instrumentation_scope.name if span.instrumentation_scope else "",
    )


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _fill(recorder: TrialRecorder, spans: list[ReadableSpan]) -> None:
    """Add what the spans say to what the recorder saw; what the agent recorded itself
    (`@agenteval.tool`, `record_model_call`, `record_wait`) wins, kind by kind."""
    if not spans:
        return
    reading = read_spans(span_record(span) for span in spans)
    own_calls = bool(recorder.tool_calls)
    for kind, why in reading.not_recorded.items():
        # The spans do not say which tools were called: unknown, unless `@tool` recorded them.
        if not (kind == "tool_calls" and own_calls):
            recorder.not_recorded.setdefault(kind, why)
    for name, spec in reading.tools.items():
        recorder.tool_specs.setdefault(name, spec)
    if not own_calls:
        recorder.tool_calls.extend(reading.tool_calls)
    if not recorder.model_calls:
        recorder.model_calls.extend(reading.model_calls)
    if not recorder.node_visits:
        recorder.node_visits.extend(reading.node_visits)
    if not recorder.waits_s and reading.waits_s:
        recorder.add_wait(reading.waits_s)
    if not recorder.retries:
        for reason, count in reading.retries.items():
            for _ in range(count):
                recorder.add_retry(reason)


class _Attempt(AbstractContextManager[None]):
    """Capturing one attempt: the trial's trace made current, its spans routed to `recorder`."""

    __slots__ = ("_attached", "_capture", "_otel", "_recorder", "_span", "_token")

    def __init__(self, otel: _Otel, span: Span, recorder: TrialRecorder) -> None:
        self._otel = otel
        self._span = span
        self._recorder = recorder

    def __enter__(self) -> None:
        otel = self._otel
        self._capture = _router.open_capture(self._span.get_span_context().trace_id)
        self._token = _current.set(self._capture)
        self._attached = otel.context.attach(otel.trace.set_span_in_context(self._span))

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        if exc is not None:
            self._span.record_exception(exc)
            self._span.set_status(self._otel.error, str(exc) or type(exc).__name__)
        self._otel.context.detach(self._attached)
        _current.reset(self._token)
        self._span.end()
        _fill(self._recorder, _router.close_capture(self._capture))


class _Otel:
    """The OpenTelemetry modules the capture uses, imported once per run (the SDK is optional)."""

    def __init__(self) -> None:
        from opentelemetry import context, trace
        from opentelemetry.trace import Link, SpanContext, StatusCode, TraceFlags

        self.context = context
        self.trace = trace
        self.link = Link
        self.span_context = SpanContext
        self.error = StatusCode.ERROR
        self.sampled = TraceFlags(TraceFlags.SAMPLED)
        # Trace ids of bare roots: random high bits for the process, a counter below them.
        self._prefix = random.getrandbits(64) << 64
        self._next = itertools.count(1).__next__
        self._provider: object = None
        self._tracing: tuple[Tracer, bool] | None = None

    def capture(
        self, recorder: TrialRecorder, case_id: str, index: int
    ) -> AbstractContextManager[None]:
        """Capture one attempt of trial `index` of case `case_id` into `recorder`."""
        # The provider is looked up per attempt: an agent may install its own mid-run.
        provider = self.trace.get_tracer_provider()
        if provider is not self._provider:
            self._provider, self._tracing = provider, _tracing()
        tracing = self._tracing
        if tracing is None:
            return contextlib.nullcontext()
        tracer, exported = tracing
        if exported:
            enclosing = self.trace.get_current_span().get_span_context()
            # A root of its own: one trace per trial, even when the run runs inside a span.
            span: Span = tracer.start_span(
                f"agenteval trial {case_id}",
                context=self.context.Context(),
                links=[self.link(enclosing)] if enclosing.is_valid else None,
                attributes={CASE_ID_ATTRIBUTE: case_id, TRIAL_INDEX_ATTRIBUTE: index},
            )
        else:
            # Nobody exports from the provider agenteval installed, so a recorded root span
            # would be seen by no one: a bare span context gives the trial its own trace for a
            # fraction of the cost, and the agent's spans (in threads too) still follow it.
            number = self._next()
            root = self.span_context(
                trace_id=self._prefix | number,
                span_id=number,
                is_remote=False,
                trace_flags=self.sampled,
            )
            span = self.trace.NonRecordingSpan(root)
        return _Attempt(self, span, recorder)


SpanCapture: TypeAlias = Callable[[TrialRecorder, str, int], AbstractContextManager[None]]
"""Capturing one attempt's spans into its recorder: `capture(recorder, case_id, index)`."""


def span_capture() -> SpanCapture | None:
    """How this run captures the agent's spans (checked once per run, not per trial): None
    without the OpenTelemetry SDK or with `OTEL_SDK_DISABLED=true`."""
    if not _sdk_available() or _disabled():
        return None
    return _Otel().capture


def capture_spans(
    recorder: TrialRecorder, case_id: str, index: int
) -> AbstractContextManager[None]:
    """While the block runs (one attempt of one trial), capture the agent's OpenTelemetry spans
    and, at its end, add the tool calls, model calls, node visits, waits and retries they
    describe to `recorder`. Does nothing without the OpenTelemetry SDK."""
    capture = span_capture()
    return contextlib.nullcontext() if capture is None else capture(recorder, case_id, index)
