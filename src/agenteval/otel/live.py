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

Log records that name a span (the GenAI per-message events) are captured the same way, through
a log record processor on the global LoggerProvider (one installed, exporting nothing, when
there is none), and read as events of their span. A service the agent calls over HTTP gets the
trial's trace context (`traceparent`, through `agents.propagation`); the spans it exports to
the run's OTLP receiver (`receiver.py`) join the attempt of their trace, which waits, bounded,
for them after the service answered (`AttemptCapture.remote_spans`). The routing itself is
`routing.py`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import os
import random
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from agenteval.agents.propagation import propagate_from, stop_propagating
from agenteval.agents.recorder import TrialRecorder
from agenteval.errors import ConfigError
from agenteval.version import __version__

from .convert import CASE_ID_ATTRIBUTE, TRIAL_INDEX_ATTRIBUTE, read_spans
from .otlp import LogEvent
from .routing import SCOPE, Unrouted, capturing, log_router, router, span_record
from .spans import SpanRecord

if TYPE_CHECKING:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.trace import Span, Tracer

__all__ = [
    "DEFAULT_REMOTE_WAIT_S",
    "SCOPE",
    "AttemptCapture",
    "SpanCapture",
    "Unrouted",
    "capture_spans",
    "receive",
    "remote_timeouts",
    "span_capture",
    "span_record",
]


logger = logging.getLogger("agenteval")

DEFAULT_REMOTE_WAIT_S: Final = 10.0
"""How long, after a service answered, its trial waits for the service's spans (with an OTLP
receiver on). The SDKs' BatchSpanProcessor exports every 5 s by default
(`OTEL_BSP_SCHEDULE_DELAY`; Python, Go, Java and JS alike), so a shorter wait would lose the
spans of a service left at its defaults; 10 s leaves room for the export itself on a loaded
machine and for one retried export (the exporters back off 1 s first). The wait ends as soon
as the service's entry span arrives, so a service exporting sooner makes it short."""


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


_tracers: weakref.WeakKeyDictionary[Any, tuple[Tracer, bool]] = weakref.WeakKeyDictionary()
"""agenteval's tracer on each provider, and whether the provider is the user's (exported)."""
_log_providers: weakref.WeakSet[Any] = weakref.WeakSet()
"""The logger providers the log router is added to."""
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

            installed = TracerProvider(resource=_resource())
            installed.add_span_processor(router)  # type: ignore[arg-type]
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
            add(router)
            _tracers[provider] = (_scope_tracer(provider), True)
        return _tracers[provider]


@functools.cache
def _resource() -> Resource:
    """The resource of the providers agenteval installs, made once a process: what each
    provider would make for itself (`Resource.create()`: the environment's attributes and
    detectors), made once instead of twice, inside a process's first run. Installing both
    providers took 15-53 ms before, 9.5-14 ms after (five fresh processes each, measured)."""
    from opentelemetry.sdk.resources import Resource

    return Resource.create()


def _scope_tracer(provider: Any) -> Tracer:
    tracer: Tracer = provider.get_tracer(SCOPE, __version__)
    return tracer


def _logging() -> None:
    """The log router added to the global LoggerProvider, and an SDK one (exporting nothing)
    installed when there is none, as `_tracing` does for spans: openai-v2 and other GenAI
    instrumentations emit their message events through the global LoggerProvider, and with
    none set those events go nowhere, so the trial could not read them. A provider that takes
    no processor is left as it is."""
    try:
        from opentelemetry import _logs
        from opentelemetry.sdk._logs import LoggerProvider
    except ImportError:  # an SDK without the logs signal: spans only
        return
    with _setup_lock:
        provider: Any = _logs.get_logger_provider()
        if provider in _log_providers:
            return
        # None set: the API hands out a proxy (a NoOp one is the user's choice of no logs).
        if type(provider).__name__ == "ProxyLoggerProvider":
            installed = LoggerProvider(resource=_resource())
            installed.add_log_record_processor(log_router)  # type: ignore[arg-type]
            _log_providers.add(installed)
            _logs.set_logger_provider(installed)
            provider = _logs.get_logger_provider()  # another thread may have set one first
            if provider in _log_providers:
                return
        add = getattr(provider, "add_log_record_processor", None)
        if add is not None:
            add(log_router)
            _log_providers.add(provider)


def _fill(recorder: TrialRecorder, spans: list[SpanRecord]) -> None:
    """Add what the spans say to what the recorder saw; what the agent recorded itself
    (`@agenteval.tool`, `record_model_call`, `record_wait`) wins, kind by kind."""
    if not spans:
        return
    reading = read_spans(spans)
    own_calls = bool(recorder.tool_calls)
    own_model_calls = bool(recorder.model_calls)
    for kind, why in reading.not_recorded.items():
        # The spans do not say which tools were called: unknown, unless `@tool` recorded them;
        # nor what their model calls used, unless the agent recorded its calls itself.
        if not (kind == "tool_calls" and own_calls) and not (kind == "usage" and own_model_calls):
            recorder.not_recorded.setdefault(kind, why)
    for name, spec in reading.tools.items():
        recorder.tool_specs.setdefault(name, spec)
    if not own_calls:
        recorder.tool_calls.extend(reading.tool_calls)
    if not recorder.model_calls and reading.model_calls:
        recorder.model_calls.extend(reading.model_calls)
        recorder.model_calls_from_spans = True
    if not recorder.node_visits:
        recorder.node_visits.extend(reading.node_visits)
    if not recorder.waits_s and reading.waits_s:
        recorder.add_wait(reading.waits_s)
    if not recorder.retries:
        for reason, count in reading.retries.items():
            for _ in range(count):
                recorder.add_retry(reason)


class AttemptCapture(AbstractContextManager["AttemptCapture"]):
    """Capturing one attempt's spans (a context manager around the agent's call); after the
    agent answered, `remote_spans` waits for the spans its service exports."""

    async def remote_spans(self) -> str | None:
        """Wait (bounded) for the entry span of every service call the attempt made to be
        received; None when they all came (or none was awaited), else why spans may be
        missing."""
        return None

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        return None


class _Attempt(AttemptCapture):
    """Capturing one attempt: the trial's trace made current, its spans routed to `recorder`."""

    __slots__ = ("_attached", "_capture", "_otel", "_propagating", "_recorder", "_span", "_token")

    def __init__(self, otel: _Otel, span: Span, recorder: TrialRecorder) -> None:
        self._otel = otel
        self._span = span
        self._recorder = recorder

    def __enter__(self) -> AttemptCapture:
        otel = self._otel
        context = self._span.get_span_context()
        self._capture = router.open_capture(context.trace_id)
        self._recorder.trace_id = f"{context.trace_id:032x}"
        self._recorder.span_id = f"{context.span_id:016x}"
        self._token = capturing.set(self._capture)
        self._attached = otel.context.attach(otel.trace.set_span_in_context(self._span))
        self._propagating = propagate_from(self)
        return self

    def headers(self) -> tuple[Mapping[str, str], Callable[[], None]]:
        """The W3C trace context of the current span (the trial's, or the agent's own inside
        it) for a service call, through the user's propagators too (baggage, ...); and, once
        the service answered, the call noted so the attempt waits for its entry span."""
        self._capture.propagated = True
        carrier: dict[str, str] = {}
        self._otel.propagate.inject(carrier)
        if "traceparent" not in carrier:  # propagators of the user's without W3C's
            self._otel.w3c.inject(carrier)
        span = self._otel.trace.get_current_span().get_span_context()
        if not span.is_valid:
            return carrier, _nothing
        parent = f"{span.span_id:016x}"
        return carrier, functools.partial(router.answered, self._capture, parent)

    async def remote_spans(self) -> str | None:
        wait = self._otel.remote_wait_s
        capture = self._capture
        if wait is None or not capture.answered:
            return None
        capture.waited = True
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        deadline = loop.time() + wait
        try:
            while not router.watch(capture, (loop, event)):
                remaining = deadline - loop.time()
                if remaining <= 0:
                    router.timeouts += 1
                    return (
                        f"the agent service's spans had not all arrived {wait:g} s after its "
                        "answer (the wait for them ran out): spans may be missing"
                    )
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(remaining):
                        await event.wait()
                event.clear()
        finally:
            router.watch(capture, None)
        return None

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        if exc is not None:
            self._span.record_exception(exc)
            self._span.set_status(self._otel.error, str(exc) or type(exc).__name__)
        stop_propagating(self._propagating)
        self._otel.context.detach(self._attached)
        capturing.reset(self._token)
        self._span.end()
        _fill(self._recorder, router.close_capture(self._capture))


def _nothing() -> None:
    pass


def _propagators() -> ModuleType:
    """OpenTelemetry's `propagate`, which loads the propagators `OTEL_PROPAGATORS` names as it
    is imported: a name it cannot load (misspelled, not installed) stops the run before any
    trial, as the user's mistake, never as each service-calling trial's error."""
    try:
        from opentelemetry import propagate
    except ValueError as exc:  # "Propagator bogus not found. It is either misspelled or ..."
        raise ConfigError(
            f"the environment variable OTEL_PROPAGATORS ({os.environ.get('OTEL_PROPAGATORS')!r})"
            f" names a propagator OpenTelemetry cannot load: {exc}",
            hint="name installed propagators (the default is `tracecontext,baggage`), or unset it",
        ) from None
    return propagate


class _Otel:
    """The OpenTelemetry modules the capture uses, imported once per run (the SDK is optional)."""

    def __init__(self, remote_wait_s: float | None = None) -> None:
        from opentelemetry import context, trace
        from opentelemetry.trace import Link, SpanContext, StatusCode, TraceFlags
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        # Imported here, once a run, not in its first trial (whose latency would count them).
        _logging()
        self.propagate = _propagators()
        self.w3c = TraceContextTextMapPropagator()
        self.context = context
        self.trace = trace
        self.link = Link
        self.span_context = SpanContext
        self.error = StatusCode.ERROR
        self.sampled = TraceFlags(TraceFlags.SAMPLED)
        self.remote_wait_s = remote_wait_s
        # Trace ids of bare roots: random high bits for the process, a counter below them.
        self._prefix = random.getrandbits(64) << 64
        self._next = itertools.count(1).__next__
        self._provider: object = None
        self._tracing: tuple[Tracer, bool] | None = None

    def capture(self, recorder: TrialRecorder, case_id: str, index: int) -> AttemptCapture:
        """Capture one attempt of trial `index` of case `case_id` into `recorder`."""
        # The provider is looked up per attempt: an agent may install its own mid-run.
        provider = self.trace.get_tracer_provider()
        if provider is not self._provider:
            self._provider, self._tracing = provider, _tracing()
            _logging()
        tracing = self._tracing
        if tracing is None:
            return AttemptCapture()
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
            # fraction of the cost, and the agent's spans (in threads too, and in the services
            # it calls) still follow it.
            number = self._next()
            root = self.span_context(
                trace_id=self._prefix | number,
                span_id=number,
                is_remote=False,
                trace_flags=self.sampled,
            )
            span = self.trace.NonRecordingSpan(root)
        return _Attempt(self, span, recorder)


SpanCapture: TypeAlias = Callable[[TrialRecorder, str, int], AttemptCapture]
"""Capturing one attempt's spans into its recorder: `capture(recorder, case_id, index)`."""


def span_capture(remote_wait_s: float | None = None) -> SpanCapture | None:
    """How this run captures the agent's spans (checked once per run, not per trial): None
    without the OpenTelemetry SDK or with `OTEL_SDK_DISABLED=true`. With `remote_wait_s` (the
    run receives spans over OTLP), an attempt whose agent called a service waits up to that
    long, after the answer, for the service's spans (`AttemptCapture.remote_spans`)."""
    if not _sdk_available() or _disabled():
        return None
    return _Otel(remote_wait_s).capture


def capture_spans(recorder: TrialRecorder, case_id: str, index: int) -> AttemptCapture:
    """While the block runs (one attempt of one trial), capture the agent's OpenTelemetry spans
    and, at its end, add the tool calls, model calls, node visits, waits and retries they
    describe to `recorder`. Does nothing without the OpenTelemetry SDK."""
    capture = span_capture()
    return AttemptCapture() if capture is None else capture(recorder, case_id, index)


def receive(spans: Iterable[SpanRecord], logs: Iterable[LogEvent] = ()) -> Unrouted:
    """Give spans and log records received from another process (over OTLP) to the running
    attempts of their traces; what belongs to none is returned."""
    return router.receive(spans, logs)


def remote_timeouts() -> int:
    """How many attempts, since the process started, stopped waiting for their service's
    spans before they all arrived."""
    return router.timeouts
