"""Reading OTLP JSON trace files, as the OpenTelemetry Collector's file exporter writes them.

A file holds `TracesData` / `ExportTraceServiceRequest` objects (`{"resourceSpans": [...]}`):
one per line (JSON lines: one trace, or one export batch, a line), or a single one (pretty
printed or not), or a JSON array of them. Spans are grouped into traces by trace id across
lines and files, so a trace split over several export batches comes together again.
Field names may be lowerCamelCase (the OTLP JSON encoding) or snake_case, ids hex or base64,
enums numbers or names, 64-bit integers numbers or strings; `.gz` files are read through gzip.

Log records (`{"resourceLogs": [...]}`, `LogsData` / `ExportLogsServiceRequest`) may come in
the same files: one that names a span (the GenAI per-message events, `gen_ai.choice`, ...,
and openai-v2's `gen_ai.client.inference.operation.details`) becomes an event of that span
(`SpanEvent` with the record's body), as if the span had recorded it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agenteval.errors import DatasetError
from agenteval.jsonsafe import MAX_DEPTH

from .spans import SpanEvent, SpanRecord, SpanStatus

__all__ = [
    "LogEvent",
    "SpanTrace",
    "any_value",
    "attach_logs",
    "is_otlp",
    "logs_of_export",
    "parse_json",
    "spans_of_export",
    "too_deep",
    "traces_from_exports",
]

_HINT = "write traces with the OpenTelemetry Collector's file exporter (format: json)"


@dataclass
class SpanTrace:
    """The spans of one trace, and where the trace was first seen."""

    trace_id: str
    source: str
    order: int = 0
    """Where the trace first appears among everything read, to keep the files' order."""
    spans: list[SpanRecord] = field(default_factory=list)


@dataclass(frozen=True)
class LogEvent:
    """A log record that names a span (by trace and span id, lowercase hex), read as an event
    of that span."""

    trace_id: str
    span_id: str
    event: SpanEvent


_OTLP_KEYS = ("resourceSpans", "resource_spans", "resourceLogs", "resource_logs")


def is_otlp(value: Any) -> bool:
    """Whether a parsed JSON value is an OTLP traces (or logs) export, or a list of them."""
    if isinstance(value, list):
        return bool(value) and all(is_otlp(item) for item in value)
    return isinstance(value, dict) and any(key in value for key in _OTLP_KEYS)


def _get(obj: Mapping[str, Any], camel: str) -> Any:
    if camel in obj:
        return obj[camel]
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return obj.get(snake)


def _list(obj: Mapping[str, Any], camel: str) -> list[Any]:
    value = _get(obj, camel)
    return value if isinstance(value, list) else []


def any_value(value: Any) -> Any:
    """An OTLP `AnyValue` as a plain Python value."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "string_value"):
        if key in value:
            return value[key]
    for key in ("boolValue", "bool_value"):
        if key in value:
            return bool(value[key])
    for key in ("intValue", "int_value"):
        if key in value:
            return int(value[key])
    for key in ("doubleValue", "double_value"):
        if key in value:
            return float(value[key])
    for key in ("arrayValue", "array_value"):
        if key in value:
            return [any_value(v) for v in _list(value[key] or {}, "values")]
    for key in ("kvlistValue", "kvlist_value"):
        if key in value:
            return _attributes(_list(value[key] or {}, "values"))
    for key in ("bytesValue", "bytes_value"):
        if key in value:
            return value[key]
    return None


def _attributes(items: Sequence[Any]) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            attributes[item["key"]] = any_value(item.get("value"))
    return attributes


def _hex_id(value: Any, size: int) -> str:
    """An id as lowercase hex: OTLP JSON writes hex, protobuf's JSON mapping base64."""
    if not isinstance(value, str) or not value:
        return ""
    if len(value) == 2 * size:
        try:
            bytes.fromhex(value)
        except ValueError:
            pass
        else:
            return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return raw.hex() if len(raw) == size else value


def _nanos(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _status(status: Any) -> tuple[SpanStatus, str]:
    if not isinstance(status, dict):
        return SpanStatus.UNSET, ""
    code = status.get("code", 0)
    message = str(status.get("message") or "")
    if code in (2, "2", "STATUS_CODE_ERROR", "ERROR"):
        return SpanStatus.ERROR, message
    if code in (1, "1", "STATUS_CODE_OK", "OK"):
        return SpanStatus.OK, message
    return SpanStatus.UNSET, message


def _span(data: Mapping[str, Any], resource: Mapping[str, Any], scope: str) -> SpanRecord:
    status, message = _status(_get(data, "status"))
    parent = _hex_id(_get(data, "parentSpanId"), 8)
    return SpanRecord(
        name=str(data.get("name") or ""),
        trace_id=_hex_id(_get(data, "traceId"), 16),
        span_id=_hex_id(_get(data, "spanId"), 8),
        parent_id=parent or None,
        start_ns=_nanos(_get(data, "startTimeUnixNano")),
        end_ns=_nanos(_get(data, "endTimeUnixNano")),
        attributes=_attributes(_list(data, "attributes")),
        status=status,
        status_message=message,
        events=tuple(
            SpanEvent(str(event.get("name") or ""), _attributes(_list(event, "attributes")))
            for event in _list(data, "events")
            if isinstance(event, dict)
        ),
        resource=resource,
        scope=scope,
    )


def spans_of_export(export: Mapping[str, Any], file: str, line: int | None) -> Iterator[SpanRecord]:
    """Every span of one OTLP traces export; a span without ids is a located error."""
    for resource_spans in _list(export, "resourceSpans"):
        if not isinstance(resource_spans, dict):
            continue
        resource = _attributes(_list(_get(resource_spans, "resource") or {}, "attributes"))
        groups = _list(resource_spans, "scopeSpans") or _list(
            resource_spans, "instrumentationLibrarySpans"
        )
        for group in groups:
            if not isinstance(group, dict):
                continue
            scope_info = _get(group, "scope") or _get(group, "instrumentationLibrary") or {}
            scope = str(scope_info.get("name") or "") if isinstance(scope_info, dict) else ""
            for data in _list(group, "spans"):
                if not isinstance(data, dict):
                    continue
                span = _span(data, resource, scope)
                if not span.trace_id or not span.span_id:
                    raise DatasetError(
                        f"span {span.name!r} has no traceId or spanId",
                        file=file,
                        line=line,
                        hint=_HINT,
                    )
                yield span


def _event_name(record: Mapping[str, Any], attributes: Mapping[str, Any], body: Any) -> str:
    """A log record's event name: its own field (OTLP 1.5), else the attribute older SDKs'
    Events API wrote it in, else the body's."""
    for value in (
        _get(record, "eventName"),
        attributes.get("event.name"),
        body.get("event.name") if isinstance(body, dict) else None,
    ):
        if isinstance(value, str) and value:
            return value
    return ""


def logs_of_export(export: Mapping[str, Any]) -> Iterator[LogEvent]:
    """The log records of one OTLP logs export that name a span, as events of that span (a
    record naming no span is no event of a trace, and is left out)."""
    for resource_logs in _list(export, "resourceLogs"):
        if not isinstance(resource_logs, dict):
            continue
        for group in _list(resource_logs, "scopeLogs") or _list(
            resource_logs, "instrumentationLibraryLogs"
        ):
            if not isinstance(group, dict):
                continue
            for record in _list(group, "logRecords"):
                if not isinstance(record, dict):
                    continue
                trace_id = _hex_id(_get(record, "traceId"), 16)
                span_id = _hex_id(_get(record, "spanId"), 8)
                if not trace_id or not span_id or not trace_id.strip("0"):
                    continue
                attributes = _attributes(_list(record, "attributes"))
                body = any_value(_get(record, "body"))
                name = _event_name(record, attributes, body)
                yield LogEvent(trace_id, span_id, SpanEvent(name, attributes, body))


def attach_logs(spans: Sequence[SpanRecord], logs: Sequence[LogEvent]) -> list[SpanRecord]:
    """The spans, each with the log records that name it added to its events (after its own
    events, in the order the records were read); records naming no span here are left out."""
    by_span: dict[tuple[str, str], list[SpanEvent]] = {}
    for log in logs:
        by_span.setdefault((log.trace_id, log.span_id), []).append(log.event)
    if not by_span:
        return list(spans)
    return [
        replace(span, events=(*span.events, *by_span[key]))
        if (key := (span.trace_id, span.span_id)) in by_span
        else span
        for span in spans
    ]


def traces_from_exports(
    exports: Sequence[tuple[Any, str, int | None, int]],
) -> list[SpanTrace]:
    """The traces in a sequence of (export, file, line, order), in the order each trace first
    appears; spans of one trace from several exports are put together, and a span seen twice
    is kept once. Log records naming a span are added to its events (`attach_logs`)."""
    traces: dict[str, SpanTrace] = {}
    seen: set[tuple[str, str]] = set()
    logs: list[LogEvent] = []
    for export, file, line, order in exports:
        items = export if isinstance(export, list) else [export]
        for item in items:
            logs.extend(logs_of_export(item))
            for span in spans_of_export(item, file, line):
                if (span.trace_id, span.span_id) in seen:
                    continue  # the same span exported twice (a retried export) counts once
                seen.add((span.trace_id, span.span_id))
                trace = traces.get(span.trace_id)
                if trace is None:
                    where = f"{file}:{line}" if line is not None else file
                    trace = traces[span.trace_id] = SpanTrace(span.trace_id, where, order)
                trace.spans.append(span)
    if logs:
        for trace in traces.values():
            trace.spans = attach_logs(trace.spans, logs)
    return list(traces.values())


def parse_json(text: str, file: str, line: int | None) -> Any:
    """One JSON value, or a located error."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"invalid JSON: {exc.msg} (column {exc.colno})",
            file=file,
            line=line if line is not None else exc.lineno,
            hint="each line of a trace file holds one JSON object",
        ) from exc
    except RecursionError as exc:
        raise too_deep(text, file, line or 1) from exc


# Outside strings, the characters that open or close a level, and line breaks (a JSON string
# holds no raw line break, so a string never spans lines).
_NESTING = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[\]{}\n]')


def too_deep(text: str, file: str, first_line: int = 1) -> DatasetError:
    """The error for JSON text (starting at line `first_line` of `file`) nested past what
    Python's parser reads (~1,000 levels on 3.11, ~10,000 on 3.13): how deep it goes and the
    line where it is deepest, found by a scan of the text rather than a parse."""
    depth = deepest = 0
    line = at = first_line
    for match in _NESTING.finditer(text):
        char = match.group()
        if char == "\n":
            line += 1
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest, at = depth, line
        elif char in "]}":
            depth -= 1
    return DatasetError(
        f"nested {deepest:,} levels deep, too deep to read",
        file=file,
        line=at,
        hint=f"flatten the data, or record a deep value as JSON text (a string): agenteval "
        f"keeps {MAX_DEPTH} levels of what an agent records and stores deeper parts cut",
    )
