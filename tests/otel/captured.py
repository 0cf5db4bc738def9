"""Spans the real instrumentation packages wrote, replayed as `SpanRecord`s.

`data/*.json` are attribute dumps of a plain openai-SDK tool loop (first call: the model asks
for `get_weather {"city": "Paris"}` id call_A and `get_time {"tz": "CET"}` id call_B; second
call carries their results, "sunny" and "ERROR: tz lookup failed", and answers "Sunny, 12:00";
third call: HTTP 400) against a loopback server, captured with the OpenTelemetry SDK 1.45 and
openai 3.57 (study for issue 15, `/tmp/s15/run.py`):

| file | instrumentation |
|---|---|
| `v2_span` | openai-v2 2.4b0 + util-genai 1.1b0, CAPTURE_MESSAGE_CONTENT=SPAN_ONLY |
| `v2_nocontent` | the same, default NO_CONTENT |
| `v2_newevent` | the same, EVENT_ONLY (messages on `gen_ai.client.inference.operation.details`) |
| `v2_legacy_content` / `v2_legacy_nocontent` | openai-v2 2.4b0 + util-genai 0.4b0: per-message log events |
| `oi` | openinference-instrumentation-openai 0.1.66 |
| `tl` / `tl_nocontent` | OpenLLMetry opentelemetry-instrumentation-openai 0.62.4 (TRACELOOP_TRACE_CONTENT false) |

The dumps have no ids or times: span i gets span id i+1 and runs from i*100 ms to i*100+50 ms;
log records become events of the span they name, matched in the order the spans finished (as
the receiver does by span id).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agenteval.otel import SpanEvent, SpanRecord, SpanStatus

DATA = Path(__file__).parent / "data"
MS = 1_000_000
T0 = 1_800_000_000_000_000_000
TRACE = "cd" * 16


def _status(value: str) -> SpanStatus:
    return {
        "StatusCode.ERROR": SpanStatus.ERROR,
        "StatusCode.OK": SpanStatus.OK,
    }.get(value, SpanStatus.UNSET)


def captured(name: str, calls: slice = slice(None)) -> list[SpanRecord]:
    """The spans of one capture (`calls` picks model calls: `slice(0, 2)` is the tool loop
    without the failing call)."""
    dump: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text())
    logged: dict[str, list[SpanEvent]] = {}
    for log in dump["logs"]:
        logged.setdefault(log["span_id"], []).append(
            SpanEvent(log["event_name"], log["attributes"], body=log["body"])
        )
    events = list(logged.values())
    spans = []
    for i, raw in enumerate(dump["spans"]):
        status, message = raw["status"]
        spans.append(
            SpanRecord(
                name=raw["name"],
                trace_id=TRACE,
                span_id=f"{i + 1:016x}",
                start_ns=T0 + i * 100 * MS,
                end_ns=T0 + (i * 100 + 50) * MS,
                attributes=raw["attributes"],
                status=_status(status),
                status_message=message or "",
                events=(
                    *(SpanEvent(e["name"], e["attributes"]) for e in raw["events"]),
                    *(events[i] if i < len(events) else ()),
                ),
                scope=raw["scope"] or "",
            )
        )
    return spans[calls]


LOOP = slice(0, 2)
"""The two model calls of the tool loop."""
