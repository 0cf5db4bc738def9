"""A finished span in the one shape conversion reads, whether it came live from the
OpenTelemetry SDK or from a trace file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

__all__ = ["HIDDEN_VALUES", "SpanEvent", "SpanRecord", "SpanStatus"]

HIDDEN_VALUES = frozenset({"__REDACTED__"})
"""What an instrumentation writes in place of content it was told to hide (OpenInference's
`OPENINFERENCE_HIDE_*`): read as no value, never as the text of an answer or an argument."""


class SpanStatus(StrEnum):
    """A span's status code."""

    UNSET = "unset"
    OK = "ok"
    ERROR = "error"


@dataclass(frozen=True)
class SpanEvent:
    """An event recorded on a span (`exception`, ...), or a log record that names the span
    (the GenAI per-message events, `gen_ai.choice`, ...: the Logs API's events carry their
    content in the body)."""

    name: str
    attributes: Mapping[str, Any] = field(default_factory=dict)
    body: Any = None
    """A log record's body (None for a span event)."""


@dataclass(frozen=True)
class SpanRecord:
    """One finished span: ids as lowercase hex, times in nanoseconds since the Unix epoch,
    attribute values as plain Python values (sequences as lists)."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str | None = None
    start_ns: int = 0
    end_ns: int = 0
    attributes: Mapping[str, Any] = field(default_factory=dict)
    status: SpanStatus = SpanStatus.UNSET
    status_message: str = ""
    events: tuple[SpanEvent, ...] = ()
    resource: Mapping[str, Any] = field(default_factory=dict, compare=False)
    scope: str = ""

    @property
    def duration_s(self) -> float:
        """How long the span lasted, in seconds."""
        return max(0, self.end_ns - self.start_ns) / 1e9

    @property
    def started_at(self) -> datetime:
        """When the span started, in UTC."""
        return datetime.fromtimestamp(self.start_ns / 1e9, UTC)

    def first(self, *names: str) -> Any:
        """The value of the first of `names` the span carries (None when it has none, or only
        an instrumentation's mark of a hidden value)."""
        for name in names:
            value = self.attributes.get(name)
            if (
                value is not None
                and value != ""
                and not (isinstance(value, str) and value in HIDDEN_VALUES)
            ):
                return value
        return None
