"""OpenTelemetry traces as trials: live capture while a trial runs, and recorded traces read
from files and scored with no agent.

- `live`: the hook the engine wraps around every attempt (`capture_spans`): the trial's trace
  made current, and a span processor and a log record processor added to the global providers;
  `routing`: the one router assigning spans and log records (this process's, and those the
  receiver got) to the trial whose trace they carry, and the wait for a remote service's spans.
- `receiver`: the OTLP/HTTP receiver `agenteval run --otlp-receiver PORT` runs.
- `results`: scores sent out as `gen_ai.evaluation.result` events (`--otlp-endpoint`).
- `convert`: spans to tool calls, model calls and node visits (the GenAI conventions, their
  deprecated names, and older span shapes); `attributes` (each family's attribute names),
  `values`, `messages` (model-call messages of every family), `rebuilt` (tool calls rebuilt
  from them when a trace has no tool spans), `tool_specs`, `gaps` (what a trace leaves
  unknown: `not_recorded`).
- `otlp`, `reading`: OTLP JSON files (the Collector's file exporter) and agenteval trial JSONL.
- `shape`: what a trace looks like for matching (a lone model call, asking for tools, going
  on from tool results).
- `matching`: traces to cases, by a case id attribute; by order only when asked.
- `scoring`: `score_traces`, the `agenteval score` command's engine entry.

Importing this package imports no OpenTelemetry module: reading files needs none, and live
capture needs the SDK (`pip install 'agenteval[opentelemetry]'`).
"""

from agenteval.otel.convert import (
    CASE_ID_ATTRIBUTE,
    TRIAL_INDEX_ATTRIBUTE,
    SpanKind,
    SpanReading,
    read_spans,
    span_kind,
)
from agenteval.otel.matching import Matched, match_trials
from agenteval.otel.reading import RecordedTrial, read_recorded
from agenteval.otel.spans import SpanEvent, SpanRecord, SpanStatus

__all__ = [
    "CASE_ID_ATTRIBUTE",
    "TRIAL_INDEX_ATTRIBUTE",
    "Matched",
    "RecordedTrial",
    "SpanEvent",
    "SpanKind",
    "SpanReading",
    "SpanRecord",
    "SpanStatus",
    "match_trials",
    "read_recorded",
    "read_spans",
    "span_kind",
]
