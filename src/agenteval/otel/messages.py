"""One model call's messages, in every instrumentation family's shape: the tool calls the model
asked for, the tool results its request carried back, its answer text and finish reasons.

| family | tools asked for (the response) | tool results (a later request's input) |
|---|---|---|
| GenAI latest (openai-v2 with content capture, OpenLLMetry 0.62, pydantic-ai): `gen_ai.output.messages` / `gen_ai.input.messages`, JSON text on the span or lists on its `gen_ai.client.inference.operation.details` event | parts `type=tool_call`: `name`, `arguments` (object or JSON text), `id` | parts `type=tool_call_response`: `id`, `response` (pydantic-ai: `result`) |
| GenAI per-message events (openai-v2 on util-genai 0.4, OpenLLMetry's events mode) | `gen_ai.choice` body `message.tool_calls[]` (or `tool_calls[]`): `id`, `function.name`, `function.arguments` (JSON text) | `gen_ai.tool.message` body `{id, content}` |
| OpenInference | `llm.output_messages.N.message.tool_calls.M.tool_call.{id, function.name, function.arguments}` | `llm.input_messages.K.message.{role=tool, tool_call_id, content}`; on Anthropic, which of them failed (`is_error`) only in the raw request, `input.value` |
| OpenLLMetry before 0.55 | `gen_ai.completion.N.tool_calls.M.{id, name, arguments}` | `gen_ai.prompt.K.{role=tool, tool_call_id, content}` |
| Google ADK (`call_llm`) | `gcp.vertex.agent.llm_response` parts `function_call` (its tool spans are read anyway) | — |

Only a model's response says which tools it asked for. An assistant message with tool calls in
a request's input is history, possibly a conversation the case supplied, so it is never read as
a call of this trial. Something the instrumentation did not record (arguments or a result left
out without content capture) reads as None, never as an empty value.

Reading is lazy: a span without message attributes or message events (no content capture, or
an instrumentation that writes none) costs a few set look-ups, no JSON parsing and no pass
over its attribute names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .attributes import FINISH_REASONS, TOOL_FINISH_REASONS
from .spans import SpanEvent, SpanRecord
from .values import as_arguments, json_or_value

__all__ = ["Messages", "RequestedCall", "merge_messages", "read_messages", "tool_result"]

DETAILS_EVENT = "gen_ai.client.inference.operation.details"
"""openai-v2's EVENT_ONLY / SPAN_AND_EVENT log record: the span's attributes plus the messages
as structured lists."""
_CHOICE_EVENT = "gen_ai.choice"
_TOOL_MESSAGE_EVENT = "gen_ai.tool.message"
_FLAT_PREFIXES = (
    "llm.input_messages.",
    "llm.output_messages.",
    "gen_ai.prompt.",
    "gen_ai.completion.",
)
_OPENINFERENCE_KEY = re.compile(r"llm\.(input|output)_messages\.(\d+)\.message\.(.+)")
_OPENINFERENCE_CALL = re.compile(
    r"tool_calls\.(\d+)\.tool_call\.(id|function\.name|function\.arguments)"
)
_TRACELOOP_KEY = re.compile(r"gen_ai\.(prompt|completion)\.(\d+)\.(.+)")
_TRACELOOP_CALL = re.compile(r"tool_calls\.(\d+)\.(id|name|arguments)")


@dataclass(frozen=True)
class RequestedCall:
    """A tool call a model asked for in its response, as its message recorded it."""

    name: str
    arguments: dict[str, Any] | None
    """None when the instrumentation left the arguments out (no content capture)."""
    id: str | None


@dataclass(frozen=True)
class Messages:
    """What one model call's messages say; empty when the span carries none."""

    requested: tuple[RequestedCall, ...] = ()
    results: Mapping[str, Any] = field(default_factory=dict)
    """Tool results the request carried, by call id (only the ones recorded), the first of an
    id the request carries."""
    latest_results: Mapping[str, Any] = field(default_factory=dict)
    """The same, the last of an id: the newest round's, when an instrumentation reuses an id
    across rounds (google-genai's `{name}_{position}`)."""
    output_text: str | None = None
    output_recorded: bool = False
    """Whether the response's content is on the span: with it, no text means the model gave
    none; without it, the text is unknown."""
    finish_reasons: tuple[str, ...] = ()
    failed: frozenset[str] = frozenset()
    """Call ids whose result the request flagged as a failure: Anthropic's `tool_result`
    blocks with `is_error: true`, which OpenInference keeps only in the raw request
    (`input.value`); its tool messages drop the flag."""

    @property
    def asks_for_tools(self) -> bool:
        """Whether a finish reason says the model asked for tools."""
        return any(reason.lower() in TOOL_FINISH_REASONS for reason in self.finish_reasons)

    @property
    def says_nothing(self) -> bool:
        """Neither its response nor a finish reason is recorded: whether it asked for tools
        is unknown."""
        return not (self.output_recorded or self.finish_reasons or self.requested)


def tool_result(value: Any) -> Any:
    """A tool result as tool spans' results read: JSON text of an object or array parsed,
    anything else as it is."""
    return json_or_value(value)


class _Reader:
    """Collects one span's messages, family by family."""

    def __init__(self) -> None:
        self.requested: list[RequestedCall] = []
        self.results: dict[str, Any] = {}
        self.latest: dict[str, Any] = {}
        self.output_text: str | None = None
        self.output_recorded = False
        self.finish_reasons: list[str] = []

    def messages(self) -> Messages:
        return Messages(
            requested=tuple(self.requested),
            results=self.results,
            latest_results=self.latest,
            output_text=self.output_text,
            output_recorded=self.output_recorded,
            finish_reasons=tuple(dict.fromkeys(self.finish_reasons)),
        )

    def call(self, name: Any, arguments: Any, call_id: Any, *, recorded: bool) -> None:
        if not isinstance(name, str) or not name:
            return
        self.requested.append(
            RequestedCall(
                name=name,
                arguments=as_arguments(arguments) if recorded else None,
                id=str(call_id) if call_id not in (None, "") else None,
            )
        )

    def result(self, call_id: Any, value: Any, *, recorded: bool = False) -> None:
        """The result sent back for `call_id`. None is no result (a message without content)
        unless `recorded`: the trace holds the result, and it is JSON null (a tool that
        returned nothing), which is a result, not a gap (`gaps._results_gap`)."""
        if call_id in (None, "") or (value is None and not recorded):
            return
        self.results.setdefault(str(call_id), tool_result(value))
        self.latest[str(call_id)] = tool_result(value)

    def text(self, value: Any) -> None:
        if isinstance(value, str) and self.output_text is None:
            self.output_text = value

    # --- GenAI latest: message lists with typed parts

    def genai(self, inputs: Any, outputs: Any) -> None:
        requests = _messages(inputs)
        for message in requests:
            for part in _parts(message):
                if part.get("type") == "tool_call_response":
                    key = next((k for k in ("response", "result") if k in part), None)
                    if key is not None:  # present, JSON null included: a result recorded
                        self.result(part.get("id"), part[key], recorded=True)
        listed = _messages(outputs)
        # pydantic-ai without content keeps the messages' shape and drops their content: the
        # response is recorded only when some message carries content.
        if listed and (_has_content(listed) or _has_content(requests)):
            self.output_recorded = True
        for message in listed:
            if isinstance(message.get("finish_reason"), str):
                self.finish_reasons.append(message["finish_reason"])
            if message.get("role") not in ("assistant", "model", None):
                continue
            texts: list[str] = []
            for part in _parts(message):
                kind = part.get("type")
                if kind == "tool_call":
                    self.call(
                        part.get("name"),
                        part.get("arguments"),
                        part.get("id"),
                        recorded="arguments" in part,
                    )
                elif kind == "text" and isinstance(part.get("content"), str):
                    texts.append(part["content"])
            if not texts and isinstance(message.get("content"), str):
                texts = [message["content"]]
            if texts:
                self.output_text = "".join(texts)  # the last assistant message's text

    # --- GenAI per-message log events

    def event(self, event: SpanEvent) -> None:
        if event.name == DETAILS_EVENT:
            attrs = event.attributes
            self.genai(attrs.get("gen_ai.input.messages"), attrs.get("gen_ai.output.messages"))
            self.finish_reasons.extend(_strings(attrs.get("gen_ai.response.finish_reasons")))
            return
        body = json_or_value(event.body)
        if not isinstance(body, dict):
            return
        if event.name == _TOOL_MESSAGE_EVENT:
            self.result(body.get("id") or body.get("tool_call_id"), body.get("content"))
        elif event.name == _CHOICE_EVENT:
            if isinstance(body.get("finish_reason"), str):
                self.finish_reasons.append(body["finish_reason"])
            message = body.get("message")
            message = message if isinstance(message, dict) else {}
            calls = message.get("tool_calls") or body.get("tool_calls")
            arguments_recorded = False
            for item in calls if isinstance(calls, list) else []:
                if not isinstance(item, dict):
                    continue
                function = item.get("function")
                function = function if isinstance(function, dict) else {}
                recorded = function.get("arguments") is not None
                arguments_recorded = arguments_recorded or recorded
                self.call(
                    function.get("name"),
                    function.get("arguments"),
                    item.get("id"),
                    recorded=recorded,
                )
            content = message.get("content")
            if content is not None or arguments_recorded:
                self.output_recorded = True
            self.text(content)

    # --- flat keys: OpenInference, OpenLLMetry before 0.55

    def flat(self, attrs: Mapping[str, Any]) -> None:
        messages: dict[tuple[str, int], dict[str, Any]] = {}
        calls: dict[tuple[str, int, int], dict[str, Any]] = {}
        for key, value in attrs.items():
            if not key.startswith(_FLAT_PREFIXES):
                continue
            match = _OPENINFERENCE_KEY.fullmatch(key) or _TRACELOOP_KEY.fullmatch(key)
            if match is None:
                continue
            side = "output" if match[1] in ("output", "completion") else "input"
            index, rest = int(match[2]), match[3]
            if side == "output" and rest != "role" and not rest.endswith("finish_reason"):
                self.output_recorded = True  # content, not only the message's role
            call = _OPENINFERENCE_CALL.fullmatch(rest) or _TRACELOOP_CALL.fullmatch(rest)
            if call is not None:
                name = call[2].removeprefix("function.")
                calls.setdefault((side, index, int(call[1])), {})[name] = value
            else:
                messages.setdefault((side, index), {})[rest] = value
        for (side, _), message in sorted(messages.items(), key=lambda item: item[0]):
            if side == "input" and message.get("role") == "tool":
                self.result(message.get("tool_call_id"), _flat_content(message))
            elif side == "output":
                if isinstance(message.get("finish_reason"), str):
                    self.finish_reasons.append(message["finish_reason"])
                self.text(_flat_content(message))
        for (side, _, _), fields in sorted(calls.items(), key=lambda item: item[0]):
            if side == "output":
                self.call(
                    fields.get("name"),
                    fields.get("arguments"),
                    fields.get("id"),
                    recorded="arguments" in fields,
                )

    # --- Google ADK: the whole LlmResponse as JSON text ("{}" without content capture)

    def adk(self, value: Any) -> None:
        response = json_or_value(value)
        if not isinstance(response, dict) or not response:
            return
        if isinstance(response.get("finish_reason"), str):
            self.finish_reasons.append(response["finish_reason"])
        content = response.get("content")
        if not isinstance(content, dict):
            return
        self.output_recorded = True
        texts: list[str] = []
        for part in _parts(content):
            call = part.get("function_call")
            if isinstance(call, dict):
                self.call(
                    call.get("name"), call.get("args"), call.get("id"), recorded="args" in call
                )
            elif isinstance(part.get("text"), str) and not part.get("thought"):
                texts.append(part["text"])
        if texts:
            self.output_text = "".join(texts)


_CONTENTS_TEXT = re.compile(r"contents\.(\d+)\.message_content\.text")


def _flat_content(message: Mapping[str, Any]) -> Any:
    """A flat message's content: `content`, else OpenInference's list of parts
    (`contents.N.message_content.text`) joined."""
    if "content" in message:
        return message["content"]
    texts = sorted(
        (int(match[1]), value)
        for key, value in message.items()
        if (match := _CONTENTS_TEXT.fullmatch(key)) and isinstance(value, str)
    )
    return "".join(text for _, text in texts) if texts else None


_CONTENT_KEYS = ("content", "arguments", "response", "result")


def _has_content(messages: list[dict[str, Any]]) -> bool:
    """Whether the messages carry content, or only its shape (roles, part types, names)."""
    for message in messages:
        if "content" in message:
            return True
        for part in _parts(message):
            if any(key in part for key in _CONTENT_KEYS):
                return True
    return False


def _messages(value: Any) -> list[dict[str, Any]]:
    data = json_or_value(value)
    if not isinstance(data, list):
        return []
    return [message for message in data if isinstance(message, dict)]


def _parts(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    parts = message.get("parts")
    if not isinstance(parts, list):
        return []
    return [part for part in parts if isinstance(part, dict)]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [item for item in value if isinstance(item, str)]
    return []


_MESSAGE_KEYS = frozenset(
    {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gcp.vertex.agent.llm_response",
        "output.value",
    }
)
_FLAT_MARKERS = frozenset(
    {
        f"{prefix}0.{field}"
        for prefix in ("llm.input_messages.", "llm.output_messages.")
        for field in ("message.role", "message.content", "message.tool_calls.0.tool_call.id")
    }
    | {
        f"{prefix}0.{field}"
        for prefix in ("gen_ai.prompt.", "gen_ai.completion.")
        for field in ("role", "content", "finish_reason", "tool_calls.0.name")
    }
)
"""Keys one of which every span with flat message keys carries (each family numbers its
messages from 0 and names the role or content of each): a set look-up instead of a pass over
every attribute name of every model span."""
_MESSAGE_EVENTS = frozenset({DETAILS_EVENT, _CHOICE_EVENT, _TOOL_MESSAGE_EVENT})
_NO_MESSAGES = Messages()


def _finish_reasons(attrs: Mapping[str, Any]) -> list[str]:
    reasons: list[str] = []
    for name in FINISH_REASONS:
        value = attrs.get(name)
        if value is not None:
            reasons.extend(_strings(value))
    return reasons


def read_messages(span: SpanRecord) -> Messages:
    """The messages of one model call's span (and of the log events naming it)."""
    attrs = span.attributes
    keys = attrs.keys()
    flat = not keys.isdisjoint(_FLAT_MARKERS)
    if (
        not flat
        and keys.isdisjoint(_MESSAGE_KEYS)
        and not (span.events and any(event.name in _MESSAGE_EVENTS for event in span.events))
    ):  # the common case without content capture: no parsing, one small object at most
        reasons = _finish_reasons(attrs)
        return Messages(finish_reasons=tuple(reasons)) if reasons else _NO_MESSAGES
    reader = _Reader()
    reader.finish_reasons = _finish_reasons(attrs)
    if "gen_ai.input.messages" in attrs or "gen_ai.output.messages" in attrs:
        reader.genai(attrs.get("gen_ai.input.messages"), attrs.get("gen_ai.output.messages"))
    for event in span.events:
        if event.name in _MESSAGE_EVENTS:
            reader.event(event)
    if flat:
        reader.flat(attrs)
    if "gcp.vertex.agent.llm_response" in attrs:
        reader.adk(attrs["gcp.vertex.agent.llm_response"])
    if span.first("output.value") is not None:
        reader.output_recorded = True  # OpenInference's raw response (hidden with the outputs)
    messages = reader.messages()
    if messages.results and (failed := _flagged_errors(attrs.get("input.value"))):
        return replace(messages, failed=failed)
    return messages


def _flagged_errors(raw: Any) -> frozenset[str]:
    """The `tool_use_id`s of the `tool_result` blocks flagged `is_error` in OpenInference's raw
    Anthropic request (`input.value`, the request's JSON): parsed only when the text names
    the flag at all."""
    if not isinstance(raw, str) or '"is_error"' not in raw:
        return frozenset()
    request = json_or_value(raw)
    found: set[str] = set()
    for message in request.get("messages", []) if isinstance(request, dict) else []:
        blocks = message.get("content") if isinstance(message, dict) else None
        for block in blocks if isinstance(blocks, list) else []:
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_result"
                and block.get("is_error") is True
                and isinstance(block.get("tool_use_id"), str)
            ):
                found.add(block["tool_use_id"])
    return frozenset(found)


def merge_messages(read: Sequence[Messages]) -> Messages:
    """One model call's messages from its nested spans, innermost first: each part from the
    first span that has it, the tool results of all."""
    if len(read) == 1:
        return read[0]
    results: dict[str, Any] = {}
    for messages in read:
        for call_id, result in messages.results.items():
            results.setdefault(call_id, result)
    return Messages(
        requested=next((m.requested for m in read if m.requested), ()),
        results=results,
        output_text=next((m.output_text for m in read if m.output_text is not None), None),
        output_recorded=any(m.output_recorded for m in read),
        finish_reasons=next((m.finish_reasons for m in read if m.finish_reasons), ()),
        failed=frozenset().union(*(m.failed for m in read)),
    )
