"""What a trial's spans leave unknown, said as such instead of read as an absence.

An instrumentation without message content capture (openai-v2's default) records that a model
answered, or asked for tools, without saying what. Reading that as "no answer" or "no tool
called" fails an agent for a gap in its trace. These rules name the gap instead
(`Trial.not_recorded`), with why and the setting that fills it:

- `tool_calls`: the trial has no tool span, and a model call asked for tools (its finish reason
  is `tool_calls`, `tool_call`, `function_call` or `tool_use`) without any call being readable
  from its messages, or a model call recorded neither its response nor a finish reason (a call
  that finished with `stop` and no content does say it asked for no tool).
- `tool_arguments`: tool calls whose arguments were left out: rebuilt from requests without
  them (names and ids are known, what they were called with is not), tool spans without
  arguments whose request (same call id) left them out too (pydantic-ai with
  `include_content=False`: a tool that takes no arguments still records `{}`), or Google ADK
  tool spans with no arguments attribute at all (ADK 2's schema writes
  `gen_ai.tool.call.arguments`, `{}` included, only when it records content) or with its
  older schema's `{}` placeholders for both arguments and response (`convert._placeholders`).
- `output`: no span carries the answer's text, and the last model call (which did not fail)
  recorded no response content.
- `tool_results`: tool calls rebuilt from the messages (no tool span) whose result no later
  request carried: OpenInference with its inputs hidden records the calls a response asked for
  but not the results sent back, and a conversation that ended right after the model asked
  for tools never says what they returned. Read as "no result", a tool that failed passed
  `tool_execution`. Also tool results sent back to Anthropic's Messages API recorded without
  their `is_error` flag (OpenLLMetry's Anthropic instrumentation keeps only the content;
  OpenInference's keeps the raw request, `input.value`, so it is read there): a failed tool's
  result then reads as one that worked, so whether each failed is unknown.
- `usage`: a model call (which did not fail) whose spans carry no token count at all, not even
  0: an OpenAI chat completion streamed without `stream_options={"include_usage": True}`
  reports none, and every instrumentation then records none. Its tokens read 0 and its
  `ModelCall.usage_recorded` is False, so that its cost is reported missing, never as free
  (a cost gate would otherwise pass any agent that streams).
"""

from __future__ import annotations

from collections.abc import Sequence

from agenteval.trace import ModelCall, ToolCall

from .attributes import (
    CACHED_TOKENS,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    PROVIDER_NAMES,
    REASONING_TOKENS,
)
from .rebuilt import ModelTurn, results_by_id
from .spans import SpanRecord, SpanStatus

__all__ = ["capture_fix", "not_recorded", "usage_recorded"]

_TOKENS = (*INPUT_TOKENS, *OUTPUT_TOKENS, *CACHED_TOKENS, *REASONING_TOKENS)

_STREAMED_USAGE = (
    "a streamed OpenAI chat completion reports its usage only when asked: pass "
    'stream_options={"include_usage": True} (or the framework\'s own switch, such as '
    "LangChain's stream_usage=True)"
)

_OPENAI_V2 = (
    "the official openai-v2 instrumentation records no message content by default: set "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY (opentelemetry-util-genai "
    "1.x; on the older event path, `true`, and capture its log records too)"
)
_OPENINFERENCE = (
    "OpenInference hides message content when OPENINFERENCE_HIDE_INPUTS, "
    "OPENINFERENCE_HIDE_OUTPUTS, OPENINFERENCE_HIDE_INPUT_MESSAGES or "
    "OPENINFERENCE_HIDE_OUTPUT_MESSAGES is set: unset them"
)
_OPENLLMETRY = (
    "OpenLLMetry (traceloop) records message content only with TRACELOOP_TRACE_CONTENT=true "
    "(its default)"
)
_PYDANTIC_AI = (
    "pydantic-ai records message content only with InstrumentationSettings(include_content=True) "
    "(its default)"
)
_ADK = (
    "Google ADK records message content only with "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY (its default telemetry schema "
    "since 2.x; its older spans, ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1, with "
    "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=true)"
)
_ANTHROPIC_SDK = (
    "the anthropic SDK's own spans never record the messages (its content mode adds none): "
    "instrument it with openinference-instrumentation-anthropic (or OpenLLMetry's "
    "opentelemetry-instrumentation-anthropic with TRACELOOP_TRACE_CONTENT=true)"
)
_ANY = "turn on message content capture in the instrumentation that wrote these spans"


def capture_fix(span: SpanRecord) -> str:
    """The setting that makes the span's instrumentation record message content."""
    scope = span.scope
    attrs = span.attributes
    if scope.startswith(("opentelemetry.instrumentation.openai_v2", "opentelemetry.util.genai")):
        return _OPENAI_V2
    if scope.startswith("openinference") or "openinference.span.kind" in attrs:
        return _OPENINFERENCE
    if (
        scope.startswith("opentelemetry.instrumentation.")
        or "traceloop.span.kind" in attrs
        or "llm.request.type" in attrs
        or "gen_ai.is_streaming" in attrs
    ):
        return _OPENLLMETRY
    if scope == "pydantic-ai":
        return _PYDANTIC_AI
    if scope == "gcp.vertex.agent" or "gcp.vertex.agent.llm_response" in attrs:
        return _ADK
    if scope == "com.anthropic.sdk.python":
        return _ANTHROPIC_SDK
    return _ANY


def _turn_fix(turn: ModelTurn) -> str:
    """`capture_fix` for a model call's spans: an instrumentation's own setting first, the
    anthropic SDK's span (nested in OpenInference's, beside OpenLLMetry's) only when no other
    span says more."""
    fixes = [capture_fix(span) for span in turn.spans]
    return next(
        (fix for fix in fixes if fix not in (_ANY, _ANTHROPIC_SDK)),
        _ANTHROPIC_SDK if _ANTHROPIC_SDK in fixes else _ANY,
    )


def usage_recorded(spans: Sequence[SpanRecord]) -> bool:
    """Whether a model call's spans (innermost first) record its token usage: any token count,
    0 included. A call that failed counts as recorded: a refused request (a 429, a 5xx) uses
    no tokens, and its spans have none to record."""
    if spans and spans[0].status is SpanStatus.ERROR:
        return True
    return any(span.first(*_TOKENS) is not None for span in spans)


def _usage_gap(model_calls: Sequence[ModelCall]) -> str | None:
    """Why the tokens of some model calls are unknown, if they are (each call's
    `usage_recorded`, read once from its spans by `convert`)."""
    unmetered = [call for call in model_calls if not call.usage_recorded]
    if not unmetered:
        return None
    they = "it" if len(unmetered) == 1 else "they"
    which = _which(len(unmetered), len(model_calls))
    return f"{which} recorded no token usage, so what {they} cost is unknown: {_STREAMED_USAGE}"


def _results_gap(turns: Sequence[ModelTurn], tool_calls: Sequence[ToolCall]) -> str | None:
    """Why some rebuilt tool calls' results are unknown, if they are (see the module docs)."""
    # A result the requests carried as JSON null (a tool that returned nothing) is recorded:
    # only a call whose id no request answered is missing its result.
    answered = results_by_id(turns)
    missing = [
        call
        for call in tool_calls
        if call.result is None and call.error is None and call.id not in answered
    ]
    if not missing:
        return None
    final = {requested.id for requested in turns[-1].messages.requested}
    if all(call.id in final for call in missing):
        why = "the conversation ended after the model asked for them, so no request carried them"
    elif any(turn.messages.results for turn in turns):
        why = "no later request carried them back (or not in a form the trace names)"
    else:
        why = f"the requests after them record no tool result: {_turn_fix(turns[-1])}"
    return f"{len(missing)} tool call(s) were recorded without their results: {why}"


_ANTHROPIC_ERRORS = (
    "{n} tool result(s) were sent back to Anthropic's Messages API, whose `tool_result` says a "
    "tool failed with `is_error`, and the spans record them without that flag (OpenLLMetry's "
    "Anthropic instrumentation keeps only their content), so whether each tool failed is "
    "unknown: trace the tools themselves (tool spans record their exceptions) or use "
    "openinference-instrumentation-anthropic, which records the raw request"
)


def _errors_gap(turns: Sequence[ModelTurn]) -> str | None:
    """Why whether the rebuilt tool calls failed is unknown, if it is: Anthropic requests
    carrying tool results, none of whose spans kept the raw request (`input.value`, where
    OpenInference keeps `is_error`)."""
    unflagged: set[str] = set()
    for turn in turns:
        if not turn.messages.results or any("input.value" in s.attributes for s in turn.spans):
            continue
        if any(s.first(*PROVIDER_NAMES) == "anthropic" for s in turn.spans):
            unflagged.update(turn.messages.results)
    return _ANTHROPIC_ERRORS.format(n=len(unflagged)) if unflagged else None


def _which(n: int, of: int) -> str:
    return "the model call" if of == 1 else f"{n} of {of} model calls"


def _tool_calls_gap(turns: Sequence[ModelTurn]) -> str | None:
    """Why the tool calls are unknown in a trial without tool spans, if they are."""
    asked = [t for t in turns if t.messages.asks_for_tools and not t.messages.requested]
    if asked:
        return (
            f"{_which(len(asked), len(turns))} asked for tools (finish reason "
            f"{', '.join(sorted(set(asked[0].messages.finish_reasons)))}) but the spans "
            f"record no tool span and not which tools: {_turn_fix(asked[0])}"
        )
    silent = [t for t in turns if t.messages.says_nothing and t.span.status is not SpanStatus.ERROR]
    if silent:
        return (
            f"{_which(len(silent), len(turns))} recorded neither the response nor a finish "
            f"reason, and there is no tool span, so whether tools were called is unknown: "
            f"{_turn_fix(silent[0])}"
        )
    return None


def _arguments_gap(
    turns: Sequence[ModelTurn],
    tool_calls: Sequence[ToolCall],
    *,
    has_tool_spans: bool,
    silent_tools: Sequence[SpanRecord],
) -> str | None:
    """Why some tool calls' arguments are unknown, if they are: calls rebuilt from requests
    whose arguments were left out, tool spans without arguments whose request (same id) left
    them out too (pydantic-ai with `include_content=False`), or tool spans of a family that
    writes the arguments whenever it records content and wrote none (`silent_tools`)."""
    if silent_tools:
        return (
            f"{len(silent_tools)} tool call(s) were recorded without their arguments: "
            f"{capture_fix(silent_tools[0])}"
        )
    if has_tool_spans and all(call.arguments for call in tool_calls):
        return None  # every tool span has its arguments: the messages are not read
    unrecorded: dict[object, ModelTurn] = {}
    for index, turn in enumerate(turns):
        if turn.messages.output_recorded:
            continue  # content captured: a request without arguments had none to record
        for position, requested in enumerate(turn.messages.requested):
            if requested.arguments is None:
                unrecorded.setdefault(requested.id or (index, position), turn)
    if has_tool_spans:
        ids = {call.id for call in tool_calls if not call.arguments and call.id is not None}
        unrecorded = {key: turn for key, turn in unrecorded.items() if key in ids}
    if not unrecorded:
        return None
    first = next(iter(unrecorded.values()))
    return (
        f"{len(unrecorded)} tool call(s) were recorded without their arguments: {_turn_fix(first)}"
    )


def not_recorded(
    turns: Sequence[ModelTurn],
    tool_calls: Sequence[ToolCall],
    *,
    has_tool_spans: bool,
    output: str | None,
    silent_tools: Sequence[SpanRecord] = (),
    model_calls: Sequence[ModelCall] = (),
) -> dict[str, str]:
    """The fields the spans leave unknown, each with why and the fix (`silent_tools`: tool
    spans whose family left their arguments out, see `_arguments_gap`; `model_calls`: the
    turns' model calls as read, for `usage`)."""
    gaps: dict[str, str] = {}
    if not turns:
        return gaps
    if not has_tool_spans and (why := _tool_calls_gap(turns)) is not None:
        gaps["tool_calls"] = why
    why = _arguments_gap(
        turns, tool_calls, has_tool_spans=has_tool_spans, silent_tools=silent_tools
    )
    if why is not None:
        gaps["tool_arguments"] = why
    if not has_tool_spans:
        why = _results_gap(turns, tool_calls) or _errors_gap(turns)
        if why is not None:
            gaps["tool_results"] = why
    why = _usage_gap(model_calls)
    if why is not None:
        gaps["usage"] = why
    last = max(turns, key=lambda t: t.span.end_ns)
    if (
        output is None
        and not last.messages.output_recorded
        and last.span.status is not SpanStatus.ERROR
    ):
        gaps["output"] = (
            "the answer's text is on no span: the last model call recorded no response "
            f"content: {_turn_fix(last)}"
        )
    return gaps
