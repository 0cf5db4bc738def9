"""What a recorded trace looks like, as far as matching it to a case needs: whether it is a
lone model call, and whether that call went on from tool results or ended asking for tools.

Under the instrumentations most agents run (openai-v2, OpenInference, OpenLLMetry), with no
span of the app's own around a trial, every model call is a trace of its own: one trial of a
two-call agent is two traces. Such a trace is not a trial, and pairing it with a case as one
would score half a conversation. These facts let matching say so instead of guessing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .attributes import FINISH_REASONS, TOOL_FINISH_REASONS
from .convert import SpanKind, span_kind
from .spans import SpanRecord

__all__ = ["TraceShape", "trace_shape", "trials_of_trace"]

_FINISH_KEY = re.compile(r"^gen_ai\.completion\.\d+\.finish_reason$")
# Flattened tool-call requests in a model call's output (OpenInference, OpenLLMetry < 0.55).
_REQUEST_KEY = re.compile(
    r"^(llm\.output_messages\.\d+\.message\.tool_calls|gen_ai\.completion\.\d+\.tool_calls)\."
)
# Flattened message roles in a model call's input (OpenInference, OpenLLMetry < 0.55).
_ROLE_KEY = re.compile(r"^(llm\.input_messages\.\d+\.message\.role|gen_ai\.prompt\.\d+\.role)$")
# The per-message log events of the older GenAI conventions, read as events of their span.
_TOOL_RESULT_EVENT = "gen_ai.tool.message"
_INPUT = "gen_ai.input.messages"
_INSTANCE = "service.instance.id"
_OUTPUT = "gen_ai.output.messages"


@dataclass(frozen=True)
class TraceShape:
    """The shape of one recorded trace, for matching. Only OTLP traces have one (a trial line
    of agenteval's own JSONL is a whole trial by construction)."""

    lone_model_call: bool = False
    """The trace is one model call and nothing else: its root span (a true root) is a
    model-call span (with perhaps an HTTP span or a nested model span below), no span of the
    app's own around it.
    A whole trial only when the agent makes one model call per trial."""
    asks_for_tools: bool = False
    """A lone model call that ended asking for tool calls: the trial it belongs to went on
    (ran the tools, called the model again) somewhere else."""
    continues: bool = False
    """A lone model call whose input holds tool results: it goes on from an earlier call of
    the same trial (readable only when message content is captured)."""
    rootless: bool = False
    """The trace lacks its root span: a top span's parent is in no file read (never exported,
    as when the app exits before its span ends, or exported by another process to another
    file). The span that named its case may be the one missing."""
    process: str | None = None
    """The process that recorded it (its resource's `service.instance.id`, which the SDKs of
    Python and others set by default), to tell recordings apart."""


def _messages(value: Any) -> list[Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return value if isinstance(value, list) else []


def _attribute_maps(span: SpanRecord) -> list[Mapping[str, Any]]:
    """The span's attributes and its events' (a GenAI event logged with the span, such as
    `gen_ai.client.inference.operation.details`, carries the messages as attributes)."""
    return [span.attributes, *(event.attributes for event in span.events)]


def _finish_reasons(span: SpanRecord) -> Iterable[str]:
    for attributes in _attribute_maps(span):
        for key, value in attributes.items():
            if key in FINISH_REASONS or _FINISH_KEY.match(key):
                values = value if isinstance(value, list | tuple) else [value]
                yield from (str(v).lower() for v in values)
        for message in _messages(attributes.get(_OUTPUT)):
            if isinstance(message, dict) and message.get("finish_reason") is not None:
                yield str(message["finish_reason"]).lower()
    for event in span.events:  # the older conventions' `gen_ai.choice` event
        if isinstance(event.body, Mapping) and event.body.get("finish_reason") is not None:
            yield str(event.body["finish_reason"]).lower()


def _parts(value: Any) -> Iterable[Mapping[str, Any]]:
    """The messages of a GenAI messages attribute, and their parts."""
    for message in _messages(value):
        if isinstance(message, Mapping):
            yield message
            for part in message.get("parts") or ():
                if isinstance(part, Mapping):
                    yield part


def _asks_for_tools(span: SpanRecord) -> bool:
    if any(reason in TOOL_FINISH_REASONS for reason in _finish_reasons(span)):
        return True
    return any(
        any(_REQUEST_KEY.match(key) for key in attributes)
        or any(part.get("type") == "tool_call" for part in _parts(attributes.get(_OUTPUT)))
        for attributes in _attribute_maps(span)
    )


def _continues(span: SpanRecord) -> bool:
    if any(event.name == _TOOL_RESULT_EVENT for event in span.events):
        return True
    return any(
        any(_ROLE_KEY.match(key) and value == "tool" for key, value in attributes.items())
        or any(
            item.get("role") == "tool" or item.get("type") == "tool_call_response"
            for item in _parts(attributes.get(_INPUT))
        )
        for attributes in _attribute_maps(span)
    )


def trace_shape(
    spans: Sequence[SpanRecord], within: Sequence[SpanRecord] | None = None
) -> TraceShape:
    """The shape of the trace `spans` make up (or of this part of the trace `within`)."""
    ids = {span.span_id for span in spans}
    known = ids | {span.span_id for span in within or ()}
    roots = [s for s in spans if s.parent_id is None or s.parent_id not in ids]
    rootless = any(s.parent_id is not None and s.parent_id not in known for s in roots)
    instance = next((s.resource.get(_INSTANCE) for s in roots if s.resource.get(_INSTANCE)), None)
    process = None if instance is None else str(instance)
    if len(roots) != 1 or rootless or span_kind(roots[0]) is not SpanKind.MODEL:
        return TraceShape(rootless=rootless, process=process)
    # The root is the call; a model span nested in it (a framework's around the SDK's) is the
    # same call, and may be the one carrying the messages.
    models = [s for s in spans if span_kind(s) is SpanKind.MODEL]
    return TraceShape(
        lone_model_call=True,
        asks_for_tools=any(_asks_for_tools(s) for s in models),
        continues=any(_continues(s) for s in models),
        process=process,
    )


def _names_case(span: SpanRecord, attribute: str) -> bool:
    value = span.attributes.get(attribute)
    return value is not None and value != ""


def trials_of_trace(spans: Sequence[SpanRecord], attribute: str) -> list[list[SpanRecord]]:
    """The trials one trace holds, each as its spans: the trace itself, unless its root names
    no case and several spans below it do. That is a span of the app's own around several
    trials (a batch loop, a long-lived request), putting them all in one trace: then each
    topmost span naming a case is a trial, with the spans below it (the trials in the order
    they started), and the spans around them belong to no trial."""
    by_id = {span.span_id: span for span in spans}
    roots = [s for s in spans if s.parent_id is None or s.parent_id not in by_id]
    if any(_names_case(root, attribute) for root in roots):
        return [list(spans)]

    def named_above(span: SpanRecord) -> bool:
        seen: set[str] = set()
        parent = by_id.get(span.parent_id or "")
        while parent is not None and parent.span_id not in seen:
            if _names_case(parent, attribute):
                return True
            seen.add(parent.span_id)
            parent = by_id.get(parent.parent_id or "")
        return False

    tops = sorted(
        (s for s in spans if _names_case(s, attribute) and not named_above(s)),
        key=lambda s: s.start_ns,
    )
    if len(tops) < 2:
        return [list(spans)]
    children: dict[str, list[SpanRecord]] = {}
    for span in spans:
        if span.parent_id is not None:
            children.setdefault(span.parent_id, []).append(span)
    trials = []
    for top in tops:
        below, stack, seen = [top], [top.span_id], {top.span_id}
        while stack:
            for child in children.get(stack.pop(), ()):
                if child.span_id not in seen:
                    seen.add(child.span_id)
                    below.append(child)
                    stack.append(child.span_id)
        trials.append(below)
    return trials
