"""Scores out as OpenTelemetry: each score of a run sent to an OTLP/HTTP endpoint as a
`gen_ai.evaluation.result` event, so a tracing backend shows the verdicts beside the traces.

The event is a log record (`event_name = "gen_ai.evaluation.result"`, the GenAI semantic
conventions' event) with `gen_ai.evaluation.name` (the scorer), `gen_ai.evaluation.score.value`
(0..1), `gen_ai.evaluation.score.label` (`pass` / `fail`, as the reports count the score) and
`gen_ai.evaluation.explanation` (the score's reason, secrets redacted). A scorer that failed
sends its event with the convention's `error.type` (the exception's class, else `_OTHER`) and
its error as the explanation, and no value or label. A scorer that did not apply (no score,
with a reason) sends nothing: it evaluated nothing, and an event with neither a value, a label
nor an error would read as a result. Each event also carries `agenteval.case.id`,
`agenteval.trial.index` and `agenteval.run.id`.

Each event is parented to the trial's span, which must exist in the backend:
- a trial whose span the backend has (its `agenteval trial CASE` root span, exported by the
  user's own TracerProvider during live capture; the root span of a recorded trace, `agenteval
  score`) has its events parented to that span (`Trial.trace_id` / `Trial.span_id`);
- a trial rooted in the bare span context live capture uses when nothing exports its spans
  (`unrecorded_root`) gets that span sent by agenteval, `agenteval trial CASE` with the trial's
  start, duration and status and those very ids, so spans the agent exported itself (a service
  called with the trial's `traceparent`) hang under it; a rescore sends one with a new span id
  in the same trace (the run may have sent the first already);
- any other trial (no OpenTelemetry at all, an agent that is not traced) gets such a span with
  new ids (in the trial's trace when it has one).

One `ScoreExport` per run, made by `run_planned` only when the run has an `otlp_endpoint`: the
SDK is imported then, never otherwise. Its `LoggerProvider` and `TracerProvider` are agenteval's
own (never set as the global providers, never touching the user's), batched, and flushed and shut
down when the run ends, however it ends. An endpoint that is down or refuses costs one warning at
the end of the run (after the first failed batch, the rest are dropped at once, so a run is never
held up by it); the run and its verdicts are the same either way.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, cast

from agenteval.errors import ConfigError
from agenteval.records import TrialResult
from agenteval.redaction import Redactor, public_url
from agenteval.score import Score
from agenteval.trace import Trial
from agenteval.version import __version__

from .convert import CASE_ID_ATTRIBUTE, TRIAL_INDEX_ATTRIBUTE

if TYPE_CHECKING:
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import LogRecordExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import SpanContext

__all__ = [
    "EVALUATION_EVENT",
    "RUN_ID_ATTRIBUTE",
    "ScoreExport",
    "unrecorded_root",
]

EVALUATION_EVENT: Final = "gen_ai.evaluation.result"
"""The event name the GenAI semantic conventions give an evaluation's result."""

RUN_ID_ATTRIBUTE: Final = "agenteval.run.id"
"""The run a sent score or trial span belongs to."""

TIMEOUT_S: Final = 5.0
"""Seconds one export (a batch of events or spans) may take, retries included: an endpoint
that is down costs a run at most this much, once."""

INSTALL_HINT: Final = "pip install 'agenteval[opentelemetry]'"

QUEUE_SIZE: Final = 8192
"""Events (and spans) the batch processors hold before they drop any: the SDK's 2048 is
outrun by a fast rescore."""
FLUSH_EVERY: Final = QUEUE_SIZE // 2
"""Records queued between forced flushes: the queue never fills, so no score is dropped."""

_ERROR_TYPE = re.compile(r"[A-Za-z_][\w.]*")
_quiet = threading.local()
"""Set while agenteval's own exporters export: the SDK's log lines about a failed export are
then taken as the reason of the one warning, not printed (other exporters' lines are left
alone)."""
_filters_added = False
_filters_lock = threading.Lock()

Warn = Callable[[str], None]


class _Health:
    """How the sending went, shared by the run's two exporters: after the first failure the rest
    is dropped at once (an endpoint that failed once would only hold the run up)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.failed = 0
        self.reason: str | None = None

    def fail(self, count: int, reason: str | None) -> None:
        with self.lock:
            self.failed += count
            if self.reason is None:
                self.reason = reason or "the export failed"


class _SdkLines(logging.Filter):
    """Keeps the OTLP exporters' log lines out of the output while agenteval's own exporters
    export, noting the first as the reason of the failure."""

    def filter(self, record: logging.LogRecord) -> bool:
        caught: list[str] | None = getattr(_quiet, "lines", None)
        if caught is None:
            return True
        caught.append(record.getMessage())
        return False


def _quiet_sdk_lines(*logger_names: str) -> None:
    global _filters_added
    with _filters_lock:
        if _filters_added:
            return
        for name in logger_names:
            logging.getLogger(name).addFilter(_SdkLines())
        _filters_added = True


def _reason(lines: list[str]) -> str | None:
    """A short reason from the SDK's log lines: a refused connection, or an HTTP status."""
    text = " ".join(lines)
    if "Connection refused" in text or "NewConnectionError" in text:
        return "connection refused"
    if "timed out" in text or "Timeout" in text:
        return "timed out"
    status = re.search(r"code: (\d{3}), reason: ([^\n]*)", text)
    if status:
        return f"HTTP {status.group(1)} {status.group(2).strip()}".strip()
    return lines[0] if lines else None


class _Guarded:
    """An OTLP exporter that sends until it fails once: a failure is noted (its reason taken
    from the SDK's log lines, which are kept quiet) and what comes after it is dropped at once.
    The batch processors only call `export` and `shutdown`."""

    def __init__(self, exporter: Any, health: _Health, success: Any, failure: Any) -> None:
        self._exporter = exporter
        self._health = health
        self._success = success
        self._failure = failure

    def export(self, batch: Any) -> Any:
        health = self._health
        if health.failed:
            health.fail(len(batch), None)
            return self._failure
        lines: list[str] = []
        outer, _quiet.lines = getattr(_quiet, "lines", None), lines
        try:
            result = self._exporter.export(batch)
        except Exception as exc:  # an exporter's bug must not end the run
            lines.append(f"{type(exc).__name__}: {exc}")
            result = self._failure
        finally:
            _quiet.lines = outer  # a flush forced from `send` exports in the sending thread
        if result != self._success:
            health.fail(len(batch), _reason(lines))
        return result

    def force_flush(self, timeout_millis: int = 10_000) -> bool:
        return True

    def shutdown(self) -> None:
        self._exporter.shutdown()


class _TrialIds:
    """The ids of agenteval's own trial spans: random, unless `next` names the ones the span
    must have (the trial's trace, and its span id when the agent's spans already point to it)."""

    def __init__(self) -> None:
        self.next: tuple[int | None, int | None] = (None, None)

    def generate_span_id(self) -> int:
        chosen, self.next = self.next[1], (self.next[0], None)
        return chosen or secrets.randbits(64) or 1

    def generate_trace_id(self) -> int:
        chosen, self.next = self.next[0], (None, self.next[1])
        return chosen or secrets.randbits(128) or 1

    def is_trace_id_random(self) -> bool:
        return False


_LOW_64: Final = (1 << 64) - 1


def unrecorded_root(trace_id: int, span_id: int) -> bool:
    """Whether the ids are those of the bare span context live capture roots a trial in when no
    provider of the user's exports its spans (`otel/live.py`: trace id = random high bits | n,
    span id = n, for the run's n-th trial): a span that no backend has, which the agent's own
    spans (a service's, through `traceparent`) may still name as their parent. A real span's
    random ids match so only by a 1-in-2**64 chance."""
    return span_id == trace_id & _LOW_64


def _hex_id(value: str | None, digits: int) -> int | None:
    """A trace or span id written as hex, as an int; None when absent or not a valid id."""
    if not value or len(value) != digits:
        return None
    try:
        number = int(value, 16)
    except ValueError:
        return None
    return number or None


class ScoreExport:
    """One run's scores on their way to an OTLP/HTTP endpoint (see the module's docstring).

    `open` makes it (one clear `ConfigError` without the `opentelemetry` extra), `send` queues a
    trial's scores (and its span, when agenteval must send one), `close` flushes and shuts it
    down and, when some of it could not be sent, says so once through `on_warning`.
    """

    def __init__(self, endpoint: str, on_warning: Warn, redactor: Redactor | None = None) -> None:
        try:
            from opentelemetry import trace
            from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk._logs import LoggerProvider
            from opentelemetry.sdk._logs.export import (
                BatchLogRecordProcessor,
                LogRecordExportResult,
            )
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult
            from opentelemetry.sdk.trace.sampling import ALWAYS_ON
        except ImportError as exc:
            raise ConfigError(
                "sending scores to an OTLP endpoint needs the OpenTelemetry SDK and its OTLP "
                f"exporter ({exc.name or exc} is not installed)",
                field="otlp_endpoint",
                hint=f"{INSTALL_HINT}, or leave out --otlp-endpoint / `otlp_endpoint:`",
            ) from None
        self._trace = trace
        self._endpoint = endpoint
        self._on_warning = on_warning
        self._redactor = redactor if redactor is not None else Redactor.from_environment()
        self._health = _Health()
        self._run_id: str | None = None
        self._again = False
        self._queued = 0
        self._lock = threading.Lock()
        _quiet_sdk_lines(
            OTLPLogExporter.__module__,
            OTLPSpanExporter.__module__,
            "opentelemetry.sdk._shared_internal",  # the batch processors' "Queue full" lines
        )
        resource = Resource({"service.name": "agenteval", "service.version": __version__})
        self._ids = _TrialIds()
        self._tracer_provider: TracerProvider = TracerProvider(
            resource=resource,
            sampler=ALWAYS_ON,
            id_generator=self._ids,  # type: ignore[arg-type]
            shutdown_on_exit=False,
        )
        spans = OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces", timeout=TIMEOUT_S)
        self._tracer_provider.add_span_processor(
            BatchSpanProcessor(
                max_queue_size=QUEUE_SIZE,
                span_exporter=cast(
                    "SpanExporter",
                    _Guarded(
                        spans, self._health, SpanExportResult.SUCCESS, SpanExportResult.FAILURE
                    ),
                ),
            )
        )
        self._tracer = self._tracer_provider.get_tracer("agenteval", __version__)
        self._logger_provider: LoggerProvider = LoggerProvider(
            resource=resource, shutdown_on_exit=False
        )
        logs = OTLPLogExporter(endpoint=f"{endpoint}/v1/logs", timeout=TIMEOUT_S)
        self._logger_provider.add_log_record_processor(
            BatchLogRecordProcessor(
                max_queue_size=QUEUE_SIZE,
                exporter=cast(
                    "LogRecordExporter",
                    _Guarded(
                        logs,
                        self._health,
                        LogRecordExportResult.SUCCESS,
                        LogRecordExportResult.FAILURE,
                    ),
                ),
            )
        )
        self._logger = self._logger_provider.get_logger("agenteval", __version__)
        self._closed = False
        if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            # The SDK's providers then make no-op loggers and tracers: say so, once.
            on_warning(
                f"OTEL_SDK_DISABLED=true turns the OpenTelemetry SDK off: no score is sent to "
                f"the OTLP endpoint {public_url(endpoint)}"
            )
            self.close()

    @classmethod
    def open(cls, endpoint: str, on_warning: Warn) -> ScoreExport:
        """The export of one run's scores to `endpoint` (a base URL, `RunOptions` checked it)."""
        return cls(endpoint, on_warning)

    def sending(
        self,
        run_id: str,
        on_result: Callable[[TrialResult], None] | None,
        *,
        again: bool = False,
    ) -> Callable[[TrialResult], None]:
        """`on_result` that also sends each result's scores, as scores of run `run_id`;
        `again` for stored trials scored again (a rescore, a judging), whose run may have sent
        their spans already."""
        self._run_id = run_id
        self._again = again

        def send_then(result: TrialResult) -> None:
            self.send(result)
            if on_result is not None:
                on_result(result)

        return send_then

    def send(self, result: TrialResult) -> None:
        """Queue one trial's scores, each as a `gen_ai.evaluation.result` event parented to the
        trial's span (sent too when agenteval must send it). Never raises: a run's verdict does
        not depend on its scores being sent."""
        # A scorer that did not apply evaluated nothing: no event (see the module's docstring).
        scores = {n: s for n, s in result.scores.items() if s.value is not None or s.error}
        if self._closed or not scores:
            return
        dropped: list[str] = []  # the SDK's "Queue full, dropping" lines, if any
        _quiet.lines = dropped
        try:
            with self._lock:
                parent = self._parent(result)
                context = self._trace.set_span_in_context(self._trace.NonRecordingSpan(parent))
                shared = self._shared(result)
                now = time.time_ns()
                for name, score in scores.items():
                    self._logger.emit(
                        timestamp=now,
                        context=context,
                        event_name=EVALUATION_EVENT,
                        attributes={**self._attributes(name, score), **shared},
                    )
                self._queued += len(scores) + 1
                if self._queued >= FLUSH_EVERY:
                    # Scores come faster than the background export sends them (a rescore of
                    # thousands of trials): send what is queued now, rather than let the
                    # bounded queue drop some.
                    self._queued = 0
                    self._tracer_provider.force_flush()
                    self._logger_provider.force_flush()
        except Exception as exc:  # sending is a side channel: the run goes on
            self._health.fail(len(scores), f"{type(exc).__name__}: {exc}")
        finally:
            _quiet.lines = None
        if dropped:
            self._health.fail(len(dropped), "more scores than could be queued")

    def close(self) -> None:
        """Flush what is queued and shut the providers down (each export bounded by
        `TIMEOUT_S`); one warning when some of it could not be sent."""
        if self._closed:
            return
        self._closed = True
        # Spans first: a backend shows the events' parent as soon as they arrive.
        self._tracer_provider.shutdown()
        self._logger_provider.shutdown()
        health = self._health
        if health.failed:
            where = public_url(self._endpoint)
            reason = self._redactor.redact_text(health.reason or "the export failed")
            self._on_warning(
                f"the scores could not all be sent to the OTLP endpoint {where} ({reason}); "
                "the run and its verdicts are unchanged"
            )

    def _parent(self, result: TrialResult) -> SpanContext:
        """The trial's span: its own when the backend has it, else one sent now."""
        trace = self._trace
        trial = result.trial
        trace_id = _hex_id(trial.trace_id, 32)
        span_id = _hex_id(trial.span_id, 16)
        if trace_id is not None and span_id is not None:
            if not unrecorded_root(trace_id, span_id):
                known: SpanContext = trace.SpanContext(
                    trace_id,
                    span_id,
                    is_remote=True,
                    trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
                )
                return known
            if self._again:  # sent when the trial ran (if it was sent then): a span of its own
                span_id = None
        return self._trial_span(result, trace_id, span_id)

    def _trial_span(
        self, result: TrialResult, trace_id: int | None, span_id: int | None
    ) -> SpanContext:
        """Send a span for a trial that has none in the backend: `agenteval trial CASE`, with
        the trial's start, duration and status, in its trace and with its span id when known
        (the agent's spans that name it as their parent then hang under it)."""
        trial = result.trial
        start, end = _times(trial)
        self._ids.next = (trace_id, span_id)
        span = self._tracer.start_span(
            f"agenteval trial {self._redactor.redact_text(result.case.id)}",
            context=self._trace.set_span_in_context(self._trace.INVALID_SPAN),
            attributes=self._shared(result),
            start_time=start,
        )
        self._ids.next = (None, None)
        failure = trial.failure
        if failure is not None:
            message = self._redactor.redact_text(f"{failure.cause.value}: {failure.message}")
            span.set_attribute("error.type", failure.error_type or failure.cause.value)
            span.set_status(self._trace.StatusCode.ERROR, message)
        span.end(end_time=end)
        context: SpanContext = span.get_span_context()
        return context

    def _shared(self, result: TrialResult) -> dict[str, Any]:
        """What says which trial of which run: on the trial span and on each event."""
        shared: dict[str, Any] = {
            CASE_ID_ATTRIBUTE: self._redactor.redact_text(result.case.id),
            TRIAL_INDEX_ATTRIBUTE: result.trial.trial,
        }
        if self._run_id is not None:
            shared[RUN_ID_ATTRIBUTE] = self._run_id
        return shared

    def _attributes(self, name: str, score: Score) -> dict[str, Any]:
        """The convention's attributes of one score (see the module's docstring)."""
        attributes: dict[str, Any] = {"gen_ai.evaluation.name": name}
        if score.error is not None:
            kind = score.error.partition(":")[0].strip()
            attributes["error.type"] = kind if _ERROR_TYPE.fullmatch(kind) else "_OTHER"
            explanation: str | None = score.error
        else:
            explanation = score.reason
            if score.value is not None:
                attributes["gen_ai.evaluation.score.value"] = float(score.value)
                # As the reports count it: a score passes only when it says it passed.
                attributes["gen_ai.evaluation.score.label"] = "pass" if score.passed else "fail"
        if explanation:
            attributes["gen_ai.evaluation.explanation"] = self._redactor.redact_text(explanation)
        return attributes


def _times(trial: Trial) -> tuple[int, int]:
    """The trial's start and end, in ns since the epoch (now, when it has no start)."""
    now = time.time_ns()
    duration = int((trial.latency_s or 0.0) * 1e9)
    if trial.started_at is None:
        return now - duration, now
    start = int(trial.started_at.timestamp() * 1e9)
    return start, start + duration
