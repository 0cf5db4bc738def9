"""Spans to a trial's record, following the OpenTelemetry GenAI semantic conventions.

| span | becomes |
|---|---|
| `execute_tool` (`gen_ai.operation.name`, or the span name) | a tool call |
| `chat` / `generate_content` / `text_completion` | a model call with its token usage |
| `invoke_agent` | a node visit |

Older shapes are read too: deprecated attribute names (`gen_ai.system`,
`gen_ai.usage.prompt_tokens` / `completion_tokens`), pydantic-ai's first format (`running tool`
with `tool_arguments` / `tool_response`, `agent run`), Google ADK's tool attributes
(`gcp.vertex.agent.tool_call_args` / `tool_response`, `call_llm`), OpenInference
(`openinference.span.kind` TOOL / LLM / AGENT) and OpenLLMetry (`traceloop.span.kind`,
`llm.request.type`). A model call wrapped around another (a framework's span around a provider
SDK's) counts once: the inner one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from itertools import pairwise
from typing import Any

from agenteval.agents.calling import no_response_failure
from agenteval.trace import Failure, FailureCause, ModelCall, ToolCall, ToolSpec, Trial, Usage

from .spans import SpanRecord, SpanStatus

__all__ = [
    "CASE_ID_ATTRIBUTE",
    "TRIAL_INDEX_ATTRIBUTE",
    "SpanKind",
    "SpanReading",
    "read_spans",
    "span_kind",
]

CASE_ID_ATTRIBUTE = "agenteval.case.id"
"""The attribute naming the case a trace answers: set on the root span of each trial agenteval
runs, and read by default when recorded traces are matched to cases."""

TRIAL_INDEX_ATTRIBUTE = "agenteval.trial.index"
"""The trial index, on the root span of each trial agenteval runs."""


class SpanKind(StrEnum):
    """What a span means for the trial's record."""

    TOOL = "tool"
    MODEL = "model"
    AGENT = "agent"


_BY_OPERATION = {
    "execute_tool": SpanKind.TOOL,
    "chat": SpanKind.MODEL,
    "generate_content": SpanKind.MODEL,
    "text_completion": SpanKind.MODEL,
    "invoke_agent": SpanKind.AGENT,
}
_OPENINFERENCE = {"TOOL": SpanKind.TOOL, "LLM": SpanKind.MODEL, "AGENT": SpanKind.AGENT}
_TRACELOOP = {"tool": SpanKind.TOOL, "agent": SpanKind.AGENT}
_TRACELOOP_REQUESTS = {"chat", "completion"}

_MODEL_NAMES = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name")
_PROVIDER_NAMES = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
_INPUT_TOKENS = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
)
_OUTPUT_TOKENS = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
)
_CACHED_TOKENS = (
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "llm.token_count.prompt_details.cache_read",
)
_REASONING_TOKENS = (
    "gen_ai.usage.reasoning.output_tokens",
    "gen_ai.usage.reasoning_tokens",
    "llm.token_count.completion_details.reasoning",
)
_TOOL_NAMES = ("gen_ai.tool.name", "tool.name")
_TOOL_CALL_IDS = ("gen_ai.tool.call.id", "tool_call.id")
_TOOL_ARGUMENTS = (
    "gen_ai.tool.call.arguments",
    "tool_arguments",
    "gcp.vertex.agent.tool_call_args",
    "input.value",
    "traceloop.entity.input",
)
_TOOL_RESULTS = (
    "gen_ai.tool.call.result",
    "tool_response",
    "gcp.vertex.agent.tool_response",
    "output.value",
    "traceloop.entity.output",
)
_AGENT_NAMES = ("gen_ai.agent.name", "agent_name", "agent.name")
_AGENT_OUTPUTS = ("final_result", "output.value", "traceloop.entity.output", "gen_ai.completion")
_MODEL_OUTPUTS = (
    "gen_ai.completion.0.content",
    "llm.output_messages.0.message.content",
    "gen_ai.completion",
)


def _has_genai_attributes(span: SpanRecord) -> bool:
    return any(
        key.startswith(("gen_ai.", "llm.")) or key in {"agent_name", "tool_arguments"}
        for key in span.attributes
    )


def span_kind(span: SpanRecord) -> SpanKind | None:
    """Whether the span is a tool call, a model call or an agent invocation (else None)."""
    attrs = span.attributes
    operation = attrs.get("gen_ai.operation.name")
    if isinstance(operation, str) and operation:
        return _BY_OPERATION.get(operation.lower())
    openinference = attrs.get("openinference.span.kind")
    if isinstance(openinference, str):
        return _OPENINFERENCE.get(openinference.upper())
    traceloop = attrs.get("traceloop.span.kind")
    if isinstance(traceloop, str) and traceloop.lower() in _TRACELOOP:
        return _TRACELOOP[traceloop.lower()]
    if attrs.get("llm.request.type") in _TRACELOOP_REQUESTS:
        return SpanKind.MODEL
    if not _has_genai_attributes(span):
        return None
    head = span.name.split(" ", 1)[0]
    if head in _BY_OPERATION:
        return _BY_OPERATION[head]
    if span.name.startswith("running tool") or "gen_ai.tool.name" in attrs:
        return SpanKind.TOOL
    if span.name == "agent run":
        return SpanKind.AGENT
    if span.first(*_MODEL_NAMES) is not None and span.first(*_INPUT_TOKENS, *_OUTPUT_TOKENS):
        return SpanKind.MODEL  # Google ADK's `call_llm`, and spans of the same cut
    return None


# --- values


def _json(value: Any) -> Any:
    """A JSON text parsed, when it holds an object or an array; anything else as it is."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
            return value
    return value


def _text(value: Any) -> str | None:
    """A value as answer text: a JSON-encoded string decoded, structures as JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        if value[:1] == '"':
            try:
                decoded = json.loads(value)
            except (ValueError, RecursionError):
                return value
            return decoded if isinstance(decoded, str) else value
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _count(value: Any) -> int:
    if isinstance(value, bool) or value is None:
        return 0
    try:
        return max(0, int(float(value)))
    except (TypeError, ValueError, OverflowError):  # not a number, NaN, or infinite
        return 0


def _after(name: str, *prefixes: str) -> str | None:
    for prefix in prefixes:
        if name.startswith(prefix) and name[len(prefix) :].strip():
            return name[len(prefix) :].strip()
    return None


def _arguments(value: Any) -> dict[str, Any]:
    """Tool arguments as a mapping: JSON text parsed, OpenLLMetry's `{"args", "kwargs"}` and
    `{"inputs"}` wrappers opened, anything else kept under `input`."""
    data = _json(value)
    if value is None:
        return {}
    if isinstance(data, dict):
        if data and set(data) <= {"args", "kwargs"}:
            kwargs = data.get("kwargs")
            named = dict(kwargs) if isinstance(kwargs, dict) else {}
            positional = data.get("args")
            if positional:
                named["args"] = positional
            data = named
        elif set(data) == {"inputs"} and isinstance(data["inputs"], dict):
            data = data["inputs"]
        # Secret-named arguments (and results) are masked where the trial is stored, as for
        # every other source of tool calls (`store.py`), at any depth.
        return {str(k): v for k, v in data.items()}
    return {"input": data}


def _short_type(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _exception(span: SpanRecord) -> tuple[str | None, str | None]:
    """The (type, message) of the exception recorded on the span, if any."""
    for event in span.events:
        if event.name == "exception":
            kind = event.attributes.get("exception.type")
            message = event.attributes.get("exception.message")
            return (
                str(kind) if kind else None,
                str(message) if message is not None else None,
            )
    return None, None


def _error(span: SpanRecord) -> str | None:
    """What went wrong in the span, as `Type: message` (None when it did not fail)."""
    if span.status is not SpanStatus.ERROR:
        return None
    kind, message = _exception(span)
    kind = kind or span.first("error.type")
    message = message or span.status_message
    if kind and message:
        return f"{_short_type(str(kind))}: {message}"
    return message or (str(kind) if kind else "error")


def _cause(span: SpanRecord) -> FailureCause:
    """Why the span failed, in the trial's failure causes (same rules as the engine's)."""
    kind, _ = _exception(span)
    names = " ".join(str(v) for v in (kind, span.first("error.type")) if v)
    status = _count(span.first("http.response.status_code", "http.status_code"))
    if status == 429 or "RateLimit" in names or names == "429":
        return FailureCause.RATE_LIMITED
    if 500 <= status <= 599 or (names.isdigit() and 500 <= int(names) <= 599):
        return FailureCause.PROVIDER_ERROR
    if "Timeout" in names or "timeout" in names:
        return FailureCause.TIMEOUT
    if "Connect" in names or "RemoteProtocolError" in names:
        return FailureCause.CONNECTION_ERROR
    return FailureCause.AGENT_ERROR


def _message_text(value: Any) -> str | None:
    """The text of the last assistant message in `gen_ai.input/output.messages`."""
    messages = _json(value)
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") not in ("assistant", "model"):
            continue
        parts = message.get("parts")
        texts = [
            part["content"]
            for part in parts or []
            if isinstance(part, dict)
            and part.get("type") == "text"
            and isinstance(part.get("content"), str)
        ]
        if not texts and isinstance(message.get("content"), str):
            texts = [message["content"]]
        if texts:
            return "".join(texts)
        return None
    return None


# --- the record


def _tool_call(span: SpanRecord) -> ToolCall:
    attrs = span.attributes
    traceloop = "traceloop.span.kind" in attrs
    name = (
        span.first(*_TOOL_NAMES)
        or (span.first("traceloop.entity.name") if traceloop else None)
        or _after(span.name, "execute_tool ", "running tool: ", "running tool ")
        or span.name
    )
    call_id = span.first(*_TOOL_CALL_IDS)
    result = span.first(*_TOOL_RESULTS)
    return ToolCall(
        name=str(name),
        arguments=_arguments(span.first(*_TOOL_ARGUMENTS)),
        result=_json(result),
        error=_error(span),
        id=str(call_id) if call_id is not None else None,
        started_at=span.started_at,
        duration_s=span.duration_s,
    )


def _model_call(span: SpanRecord) -> ModelCall:
    operation = span.first("gen_ai.operation.name") or span.name.split(" ", 1)[0]
    model = span.first(*_MODEL_NAMES) or _after(span.name, f"{operation} ") or "unknown"
    provider = span.first(*_PROVIDER_NAMES)
    return ModelCall(
        model=str(model),
        provider=str(provider) if provider is not None else None,
        usage=Usage(
            input_tokens=_count(span.first(*_INPUT_TOKENS)),
            output_tokens=_count(span.first(*_OUTPUT_TOKENS)),
            cached_tokens=_count(span.first(*_CACHED_TOKENS)),
            reasoning_tokens=_count(span.first(*_REASONING_TOKENS)),
        ),
        started_at=span.started_at,
        duration_s=span.duration_s,
    )


def _agent_name(span: SpanRecord) -> str:
    traceloop = "traceloop.span.kind" in span.attributes
    name = (
        span.first(*_AGENT_NAMES)
        or (span.first("traceloop.entity.name") if traceloop else None)
        or _after(span.name, "invoke_agent ")
        or span.name
    )
    return str(name)


def _tool_specs(span: SpanRecord) -> Iterable[ToolSpec]:
    definitions = _json(span.first("gen_ai.tool.definitions"))
    if not isinstance(definitions, list):
        return
    for item in definitions:
        if not isinstance(item, dict):
            continue
        nested = item.get("function")
        function: dict[str, Any] = nested if isinstance(nested, dict) else item
        name = function.get("name")
        parameters = function.get("parameters")
        if isinstance(name, str) and name:
            yield ToolSpec(
                name=name,
                description=str(function.get("description") or ""),
                parameters=parameters if isinstance(parameters, dict) else {},
            )


@dataclass
class SpanReading:
    """What a set of spans says one trial did."""

    tool_calls: list[ToolCall] = field(default_factory=list)
    model_calls: list[ModelCall] = field(default_factory=list)
    node_visits: list[str] = field(default_factory=list)
    output: str | None = None
    failure: Failure | None = None
    waits_s: float = 0.0
    """Time spent waiting to retry: from the end of a model call that failed for an
    infrastructure reason to the start of the next model call."""
    retries: dict[str, int] = field(default_factory=dict)
    started_at: datetime | None = None
    latency_s: float | None = None
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    """The tools offered to the model (`gen_ai.tool.definitions`), by name."""
    not_recorded: dict[str, str] = field(default_factory=dict)

    def trial(self, metadata: Mapping[str, Any] | None = None) -> Trial:
        """The trial the spans describe, as a recorded trace to score with no agent."""
        trial = Trial(
            output=self.output,
            tool_calls=self.tool_calls,
            model_calls=self.model_calls,
            node_visits=self.node_visits,
            started_at=self.started_at,
            latency_s=self.latency_s,
            working_latency_s=(
                max(0.0, self.latency_s - self.waits_s) if self.latency_s is not None else None
            ),
            attempts=1 + sum(self.retries.values()),
            retries=dict(self.retries),
            failure=self.failure,
            metadata=dict(metadata or {}),
        )
        if trial.failure is None:
            trial.failure = no_response_failure(trial)
        return trial


def _ancestors(span: SpanRecord, by_id: Mapping[str, SpanRecord]) -> Iterable[SpanRecord]:
    seen: set[str] = set()
    parent = span.parent_id
    while parent is not None and parent in by_id and parent not in seen:
        seen.add(parent)
        yield by_id[parent]
        parent = by_id[parent].parent_id


def _duplicate_of(
    span: SpanRecord, by_id: Mapping[str, SpanRecord], kinds: Mapping[str, SpanKind | None]
) -> str | None:
    """The tool span this one repeats (the same call seen by two instrumentations), if any."""
    name = _tool_call(span).name
    for ancestor in _ancestors(span, by_id):
        kind = kinds[ancestor.span_id]
        if kind is SpanKind.AGENT:
            return None
        if kind is SpanKind.TOOL:
            return ancestor.span_id if _tool_call(ancestor).name == name else None
    return None


def _fill(outer: ToolCall, inner: ToolCall) -> ToolCall:
    updates: dict[str, Any] = {}
    if not outer.arguments and inner.arguments:
        updates["arguments"] = inner.arguments
    if outer.result is None and inner.result is not None:
        updates["result"] = inner.result
    if outer.error is None and inner.error is not None:
        updates["error"] = inner.error
    if outer.id is None and inner.id is not None:
        updates["id"] = inner.id
    return outer.model_copy(update=updates) if updates else outer


def _output(
    top_agents: Sequence[SpanRecord], models: Sequence[SpanRecord], roots: Sequence[SpanRecord]
) -> str | None:
    for span in sorted(top_agents, key=lambda s: s.end_ns, reverse=True):
        text = _message_text(span.first("gen_ai.output.messages")) or _text(
            span.first(*_AGENT_OUTPUTS)
        )
        if text is not None:
            return text
    if models:
        last = max(models, key=lambda s: s.end_ns)
        text = _message_text(last.first("gen_ai.output.messages")) or _text(
            last.first(*_MODEL_OUTPUTS)
        )
        if text is not None:
            return text
    for span in roots:
        text = _text(span.first("output.value", "traceloop.entity.output"))
        if text is not None:
            return text
    return None


def _failure(roots: Sequence[SpanRecord], top_agents: Sequence[SpanRecord]) -> Failure | None:
    for span in [*top_agents, *roots]:
        if span.status is SpanStatus.ERROR:
            kind, message = _exception(span)
            return Failure(
                cause=_cause(span),
                message=message or span.status_message or "the agent failed",
                error_type=_short_type(kind) if kind else None,
            )
    return None


def _waits(models: Sequence[SpanRecord]) -> tuple[float, dict[str, int]]:
    """Backoff between a model call that failed for an infrastructure reason and its retry."""
    waits = 0.0
    retries: dict[str, int] = {}
    ordered = sorted(models, key=lambda s: s.start_ns)
    for failed, following in pairwise(ordered):
        if failed.status is not SpanStatus.ERROR:
            continue
        cause = _cause(failed)
        if not cause.is_infrastructure:
            continue
        retries[cause.value] = retries.get(cause.value, 0) + 1
        waits += max(0, following.start_ns - failed.end_ns) / 1e9
    return waits, retries


def read_spans(spans: Iterable[SpanRecord]) -> SpanReading:
    """What the spans of one trial say it did: tool calls, model calls, node visits (each in
    the order they started), the answer, waits and retries, timing and the tools offered."""
    ordered = sorted(spans, key=lambda s: (s.start_ns, s.end_ns))
    if not ordered:
        return SpanReading()
    by_id = {span.span_id: span for span in ordered}
    kinds = {span.span_id: span_kind(span) for span in ordered}
    roots = [s for s in ordered if s.parent_id is None or s.parent_id not in by_id]

    models = [s for s in ordered if kinds[s.span_id] is SpanKind.MODEL]
    wrapping = {a.span_id for m in models for a in _ancestors(m, by_id)}
    models = [m for m in models if m.span_id not in wrapping]

    calls: dict[str, ToolCall] = {}
    for span in ordered:
        if kinds[span.span_id] is not SpanKind.TOOL:
            continue
        outer = _duplicate_of(span, by_id, kinds)
        if outer is not None and outer in calls:
            calls[outer] = _fill(calls[outer], _tool_call(span))
        else:
            calls[span.span_id] = _tool_call(span)

    agents = [s for s in ordered if kinds[s.span_id] is SpanKind.AGENT]
    top_agents = [
        a
        for a in agents
        if not any(kinds[b.span_id] is SpanKind.AGENT for b in _ancestors(a, by_id))
    ]
    tools: dict[str, ToolSpec] = {}
    for span in models:
        for spec in _tool_specs(span):
            tools.setdefault(spec.name, spec)
    waits, retries = _waits(models)
    start = min(s.start_ns for s in ordered)
    end = max(s.end_ns for s in ordered)
    return SpanReading(
        tool_calls=list(calls.values()),
        model_calls=[_model_call(s) for s in models],
        node_visits=[_agent_name(s) for s in agents],
        output=_output(top_agents, models, roots),
        failure=_failure(roots, top_agents),
        waits_s=waits,
        retries=retries,
        started_at=ordered[0].started_at,
        latency_s=max(0, end - start) / 1e9,
        tools=tools,
    )
