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
`llm.request.type`). The attribute names of each family are in `attributes`.

A model call wrapped around another (a framework's span around a provider SDK's, pydantic-ai's
around openai-v2's) counts once: the inner span's fields, with any it lacks (model, provider,
token counts it reports as 0, messages) taken from the span(s) wrapping it; the tools the
wrapper declares count too.

Tool calls come from tool spans. When a trial has none (instrumentations of a provider SDK write
only model-call spans), they are rebuilt from the model calls' messages (`messages`,
`rebuilt`): tool spans win when both exist, never counted twice, and the messages then only
fill a tool span's missing id, arguments or result. What the spans leave unknown (no message
content captured) is named in `SpanReading.not_recorded` (`gaps`), never read as "no tool
called" or "no answer".
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

from .attributes import (
    AGENT_NAMES,
    AGENT_OUTPUTS,
    CACHED_TOKENS,
    INPUT_TOKENS,
    MODEL_NAMES,
    MODEL_OUTPUTS,
    OUTPUT_TOKENS,
    PROVIDER_NAMES,
    REASONING_TOKENS,
    TOOL_ARGUMENTS,
    TOOL_CALL_IDS,
    TOOL_NAMES,
    TOOL_RESULTS,
)
from .gaps import not_recorded, usage_recorded
from .rebuilt import ModelTurn, fill_from_messages, one_per_response, rebuild_tool_calls
from .spans import SpanRecord, SpanStatus
from .tool_specs import ToolSpecReader
from .values import as_arguments, as_count, as_text, json_or_value, short_type

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
    if span.first(*MODEL_NAMES) is not None and span.first(*INPUT_TOKENS, *OUTPUT_TOKENS):
        return SpanKind.MODEL  # Google ADK's `call_llm`, and spans of the same cut
    return None


# --- values


def _after(name: str, *prefixes: str) -> str | None:
    for prefix in prefixes:
        if name.startswith(prefix) and name[len(prefix) :].strip():
            return name[len(prefix) :].strip()
    return None


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
        return f"{short_type(str(kind))}: {message}"
    return message or (str(kind) if kind else "error")


def _cause(span: SpanRecord) -> FailureCause:
    """Why the span failed, in the trial's failure causes (same rules as the engine's)."""
    kind, _ = _exception(span)
    names = " ".join(str(v) for v in (kind, span.first("error.type")) if v)
    status = as_count(span.first("http.response.status_code", "http.status_code"))
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
    messages = json_or_value(value)
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
        span.first(*TOOL_NAMES)
        or (span.first("traceloop.entity.name") if traceloop else None)
        or _after(span.name, "execute_tool ", "running tool: ", "running tool ")
        or span.name
    )
    call_id = span.first(*TOOL_CALL_IDS)
    result = span.first(*TOOL_RESULTS)
    return ToolCall(
        name=str(name),
        arguments=as_arguments(span.first(*TOOL_ARGUMENTS)),
        result=json_or_value(result),
        error=_error(span),
        id=str(call_id) if call_id is not None else None,
        started_at=span.started_at,
        duration_s=span.duration_s,
    )


def _adk(span: SpanRecord) -> bool:
    return span.scope == "gcp.vertex.agent" or any(
        key.startswith("gcp.vertex.agent.") for key in span.attributes
    )


def _merged(span: SpanRecord) -> bool:
    """Google ADK's span beside the tool spans of parallel calls (`(merged tools)`, for its web
    UI): each call has its own tool span, this one is no call."""
    return _adk(span) and span.first(*TOOL_NAMES) == "(merged tools)"


def _silent(span: SpanRecord, adk_content: bool) -> bool:
    """A Google ADK tool span that does not record what the tool was called with: ADK 2's
    schema writes `gen_ai.tool.call.arguments` (`{}` for none) only when it records content,
    and its older one writes `{}` in its place (`_placeholders`)."""
    if not _adk(span):
        return False
    return span.first(*TOOL_ARGUMENTS) is None or _placeholders(span, adk_content)


_LEGACY_ARGUMENTS = "gcp.vertex.agent.tool_call_args"
_LEGACY_RESPONSE = "gcp.vertex.agent.tool_response"
_LEGACY_REQUEST = "gcp.vertex.agent.llm_request"


def _placeholders(span: SpanRecord, adk_content: bool) -> bool:
    """A tool span of Google ADK's older schema (`ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1`)
    recording no content: it writes `{}` for the arguments and for the response alike, which
    say nothing of either. (With content, the response is never `{}` but for a tool taking
    nothing and returning an empty dict: the trace's model call spans say which it is.)"""
    attrs = span.attributes
    return (
        not adk_content
        and attrs.get(_LEGACY_ARGUMENTS) == "{}"
        and attrs.get(_LEGACY_RESPONSE, "{}") == "{}"
    )


def _adk_content(spans: Iterable[SpanRecord], kinds: Mapping[str, SpanKind | None]) -> bool:
    """Whether Google ADK's older schema recorded content in this trace: a model call span
    of it (`call_llm`) wrote its request (`{}` when it records none; its tool spans write `{}`
    there always)."""
    return any(
        kinds[span.span_id] is not SpanKind.TOOL
        and span.attributes.get(_LEGACY_REQUEST) not in (None, "{}")
        for span in spans
    )


def _answering(span: SpanRecord) -> bool:
    """Google ADK's `set_model_response` (an agent with an `output_schema` and tools answers
    through it): its response is the structured answer itself, no tool's result."""
    return _adk(span) and (
        span.attributes.get("gen_ai.tool.type") == "SetModelResponseTool"
        or span.first(*TOOL_NAMES) == "set_model_response"
    )


def _answered(call: ToolCall) -> str | None:
    """The structured answer a `set_model_response` call gave, as ADK writes it (JSON text);
    None for a response reporting a validation error (the model is asked again)."""
    if call.error is not None or call.result is None:
        return None
    if isinstance(call.result, Mapping) and call.result.get("error"):
        return None
    return json.dumps(call.result, ensure_ascii=False)


def _model_call(group: Sequence[SpanRecord]) -> ModelCall:
    """One model call from its spans, innermost first: each field from the first span that
    has it (a token count of 0 is taken as missing), timing from the innermost."""
    inner = group[0]
    operation = inner.first("gen_ai.operation.name") or inner.name.split(" ", 1)[0]
    model = inner.first(*MODEL_NAMES)
    provider = inner.first(*PROVIDER_NAMES)
    usage = Usage(
        input_tokens=as_count(inner.first(*INPUT_TOKENS)),
        output_tokens=as_count(inner.first(*OUTPUT_TOKENS)),
        cached_tokens=as_count(inner.first(*CACHED_TOKENS)),
        reasoning_tokens=as_count(inner.first(*REASONING_TOKENS)),
    )
    for wrapper in group[1:]:  # fill what the inner span lacks from the spans around it
        model = model if model is not None else wrapper.first(*MODEL_NAMES)
        provider = provider if provider is not None else wrapper.first(*PROVIDER_NAMES)
        usage = Usage(
            input_tokens=usage.input_tokens or as_count(wrapper.first(*INPUT_TOKENS)),
            output_tokens=usage.output_tokens or as_count(wrapper.first(*OUTPUT_TOKENS)),
            cached_tokens=usage.cached_tokens or as_count(wrapper.first(*CACHED_TOKENS)),
            reasoning_tokens=usage.reasoning_tokens or as_count(wrapper.first(*REASONING_TOKENS)),
        )
    return ModelCall(
        model=str(model or _after(inner.name, f"{operation} ") or "unknown"),
        provider=str(provider) if provider is not None else None,
        usage=usage,
        started_at=inner.started_at,
        duration_s=inner.duration_s,
        usage_recorded=usage_recorded(group),
    )


def _agent_name(span: SpanRecord) -> str:
    traceloop = "traceloop.span.kind" in span.attributes
    name = (
        span.first(*AGENT_NAMES)
        or (span.first("traceloop.entity.name") if traceloop else None)
        or _after(span.name, "invoke_agent ")
        or span.name
    )
    return str(name)


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
    """The tools offered to the model (`gen_ai.tool.definitions`, `llm.tools.*`,
    `llm.request.functions.*`), by name."""
    not_recorded: dict[str, str] = field(default_factory=dict)
    """What the spans leave unknown (`output`, `tool_calls`, `tool_arguments`), with why and
    the setting that records it (`gaps`): passed to the trial, whose scorers then give no
    score on it rather than judging a gap in the trace."""

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
            not_recorded=dict(self.not_recorded),
            tool_specs=dict(self.tools),
        )
        if trial.failure is None and "output" not in self.not_recorded:
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
    top_agents: Sequence[SpanRecord], turns: Sequence[ModelTurn], roots: Sequence[SpanRecord]
) -> str | None:
    for span in sorted(top_agents, key=lambda s: s.end_ns, reverse=True):
        text = _message_text(span.first("gen_ai.output.messages")) or as_text(
            span.first(*AGENT_OUTPUTS)
        )
        if text is not None:
            return text
    if turns:
        last = max(turns, key=lambda t: t.span.end_ns)
        text = last.messages.output_text
        if text is None:
            text = next((t for s in last.spans if (t := as_text(s.first(*MODEL_OUTPUTS)))), None)
        if text is not None:
            return text
    for span in roots:
        text = as_text(span.first("output.value", "traceloop.entity.output"))
        if text is not None:
            return text
    return None


def _failure(roots: Sequence[SpanRecord], top_agents: Sequence[SpanRecord]) -> Failure | None:
    for span in [*top_agents, *roots]:
        if span.status is SpanStatus.ERROR:
            kind, message = _exception(span)
            kind = kind or span.first("error.type")
            return Failure(
                cause=_cause(span),
                message=message or span.status_message or "the agent failed",
                error_type=short_type(str(kind)) if kind else None,
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


def _turns(models: Sequence[SpanRecord], by_id: Mapping[str, SpanRecord]) -> list[ModelTurn]:
    """The model calls, one per innermost model span, each with the model spans wrapping it
    alone (a span wrapping several model calls, a framework's retry loop, merges into none)."""
    model_ids = {m.span_id for m in models}
    outer: dict[str, list[SpanRecord]] = {}
    for span in models:
        outer[span.span_id] = [a for a in _ancestors(span, by_id) if a.span_id in model_ids]
    wrapping = {a.span_id for wrappers in outer.values() for a in wrappers}
    inner = [m for m in models if m.span_id not in wrapping]
    wrapped: dict[str, int] = {}
    for span in inner:
        for wrapper in outer[span.span_id]:
            wrapped[wrapper.span_id] = wrapped.get(wrapper.span_id, 0) + 1
    turns: list[ModelTurn] = []
    for span in inner:
        group = (span, *(w for w in outer[span.span_id] if wrapped[w.span_id] == 1))
        turns.append(ModelTurn(group))
    return one_per_response(turns)


def read_spans(spans: Iterable[SpanRecord]) -> SpanReading:
    """What the spans of one trial say it did: tool calls, model calls, node visits (each in
    the order they started), the answer, waits and retries, timing, the tools offered, and
    what the spans leave unknown."""
    ordered = sorted(spans, key=lambda s: (s.start_ns, s.end_ns))
    if not ordered:
        return SpanReading()
    by_id = {span.span_id: span for span in ordered}
    kinds = {span.span_id: span_kind(span) for span in ordered}
    roots = [s for s in ordered if s.parent_id is None or s.parent_id not in by_id]

    models = [s for s in ordered if kinds[s.span_id] is SpanKind.MODEL]
    turns = _turns(models, by_id)

    calls: dict[str, ToolCall] = {}
    for span in ordered:
        if kinds[span.span_id] is not SpanKind.TOOL or _merged(span):
            continue
        outer = _duplicate_of(span, by_id, kinds)
        if outer is not None and outer in calls:
            calls[outer] = _fill(calls[outer], _tool_call(span))
        else:
            calls[span.span_id] = _tool_call(span)
    if calls:  # tool spans are the record: the messages only fill their gaps
        tool_calls = fill_from_messages(list(calls.values()), turns)
    else:
        tool_calls = rebuild_tool_calls(turns)
    adk_content = _adk_content(ordered, kinds)
    for index, key in enumerate(calls):  # ADK's placeholder response is no result
        if _placeholders(by_id[key], adk_content):
            tool_calls[index] = tool_calls[index].model_copy(update={"result": None})
    # ADK's `set_model_response` carries the answer: the call is kept, its response is the
    # answer (when no span says another), never a result for the answer to be found in.
    answered: str | None = None
    for index, key in enumerate(calls):  # with tool spans, one call per span, in order
        given = _answered(tool_calls[index]) if _answering(by_id[key]) else None
        if given is not None:
            answered = given
            tool_calls[index] = tool_calls[index].model_copy(update={"result": None})
    silent = [by_id[key] for key in calls if _silent(by_id[key], adk_content)]

    agents = [s for s in ordered if kinds[s.span_id] is SpanKind.AGENT]
    top_agents = [
        a
        for a in agents
        if not any(kinds[b.span_id] is SpanKind.AGENT for b in _ancestors(a, by_id))
    ]
    specs = ToolSpecReader()
    for span in models:  # wrapping spans too: a framework declares the tools it offers
        specs.read(span)
    waits, retries = _waits([t.span for t in turns])
    start = min(s.start_ns for s in ordered)
    end = max(s.end_ns for s in ordered)
    output = _output(top_agents, turns, roots)
    if output is None:
        output = answered
    model_calls = [_model_call(t.spans) for t in turns]
    return SpanReading(
        tool_calls=tool_calls,
        model_calls=model_calls,
        node_visits=[_agent_name(s) for s in agents],
        output=output,
        failure=_failure(roots, top_agents),
        waits_s=waits,
        retries=retries,
        started_at=ordered[0].started_at,
        latency_s=max(0, end - start) / 1e9,
        tools=specs.tools,
        not_recorded=not_recorded(
            turns,
            tool_calls,
            has_tool_spans=bool(calls),
            output=output,
            silent_tools=silent,
            model_calls=model_calls,
        ),
    )
