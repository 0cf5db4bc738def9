"""What the spans leave unknown is said (`not_recorded`), never read as "no tool called" or
"no answer". On agenteval 543b07e a trace from openai-v2 without content capture was a
`no_response` trial that called no tool."""

from __future__ import annotations

import json
from typing import Any

from tests.otel.installed import import_or_skip

from agenteval import FailureCause
from agenteval.otel import SpanRecord, SpanStatus, read_spans

from .captured import LOOP, MS, T0, TRACE, captured


def _chat(i: int, attributes: dict[str, Any], *, scope: str = "", **kw: Any) -> SpanRecord:
    return SpanRecord(
        name="chat m",
        trace_id=TRACE,
        span_id=f"{i + 1:016x}",
        start_ns=T0 + i * 100 * MS,
        end_ns=T0 + (i * 100 + 50) * MS,
        attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", **attributes},
        scope=scope,
        **kw,
    )


def test_openai_v2_without_content_is_unknown_not_absent() -> None:
    reading = read_spans(captured("v2_nocontent", LOOP))
    assert reading.tool_calls == [] and reading.output is None
    assert set(reading.not_recorded) == {"tool_calls", "output"}
    for why in reading.not_recorded.values():
        assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY" in why
    assert "finish reason tool_calls" in reading.not_recorded["tool_calls"]
    trial = reading.trial()
    assert trial.not_recorded == reading.not_recorded
    assert trial.failure is None  # not `no_response`: the answer is only unknown


def test_openllmetry_without_content_names_its_setting() -> None:
    reading = read_spans(captured("tl_nocontent", LOOP))
    assert set(reading.not_recorded) == {"tool_calls", "output"}
    assert "TRACELOOP_TRACE_CONTENT=true" in reading.not_recorded["tool_calls"]
    assert "finish reason tool_call" in reading.not_recorded["tool_calls"]


def test_openinference_with_hidden_messages_names_its_variables() -> None:
    hidden = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "m",
        "llm.token_count.prompt": 5,
    }
    reading = read_spans([_chat(0, hidden, scope="openinference.instrumentation.openai")])
    assert "OPENINFERENCE_HIDE_OUTPUTS" in reading.not_recorded["output"]
    # No finish reason and no response: whether it asked for tools is unknown.
    assert "OPENINFERENCE_HIDE" in reading.not_recorded["tool_calls"]


def test_openinference_s_redaction_marker_is_no_content() -> None:
    # OPENINFERENCE_HIDE_INPUTS / _OUTPUTS write "__REDACTED__" where the content was (seen with
    # openinference-instrumentation-openai 0.1.66): a hidden answer, not an answer of that text.
    def hidden(i: int, finish: str) -> SpanRecord:
        attributes = {
            "openinference.span.kind": "LLM",
            "llm.system": "openai",
            "llm.model_name": "gpt-test-2025",
            "llm.finish_reason": finish,
            "input.value": "__REDACTED__",
            "output.value": "__REDACTED__",
            # Tokens are on the span whatever is hidden (as the real instrumentation writes).
            "llm.token_count.prompt": 12,
            "llm.token_count.completion": 4,
        }
        return SpanRecord(
            name="ChatCompletion",
            trace_id=TRACE,
            span_id=f"{i + 1:016x}",
            start_ns=T0 + i * 100 * MS,
            end_ns=T0 + (i * 100 + 50) * MS,
            attributes=attributes,
            status=SpanStatus.OK,
            scope="openinference.instrumentation.openai",
        )

    reading = read_spans([hidden(0, "tool_calls"), hidden(1, "stop")])
    assert reading.output is None
    assert set(reading.not_recorded) == {"tool_calls", "output"}
    assert "OPENINFERENCE_HIDE_OUTPUTS" in reading.not_recorded["output"]
    assert reading.trial().failure is None


def test_calls_that_all_finished_with_stop_say_no_tool_was_asked_for() -> None:
    spans = [_chat(i, {"gen_ai.response.finish_reasons": ["stop"]}) for i in range(2)]
    reading = read_spans(spans)
    assert "tool_calls" not in reading.not_recorded
    assert "turn on message content capture" in reading.not_recorded["output"]


def test_one_silent_call_among_recorded_ones_leaves_the_calls_unknown() -> None:
    spans = [
        _chat(0, {"gen_ai.response.finish_reasons": ["stop"]}),
        _chat(1, {}),
    ]
    assert "1 of 2 model calls" in read_spans(spans).not_recorded["tool_calls"]


def test_with_tool_spans_the_calls_are_recorded_even_without_messages() -> None:
    tool = SpanRecord(
        name="execute_tool t",
        trace_id=TRACE,
        span_id="00000000000000ff",
        start_ns=T0 + 60 * MS,
        end_ns=T0 + 70 * MS,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"},
    )
    spans = [_chat(0, {"gen_ai.response.finish_reasons": ["tool_calls"]}), tool]
    assert "tool_calls" not in read_spans(spans).not_recorded


def test_a_recorded_response_without_text_is_no_answer() -> None:
    """Content captured, the last response only asked for tools: the agent gave no answer.
    What those calls returned, no later request says: unknown, not "no result"."""
    spans = captured("v2_span", slice(0, 1))
    reading = read_spans(spans)
    assert reading.output is None and set(reading.not_recorded) == {"tool_results"}
    assert "the conversation ended" in reading.not_recorded["tool_results"]
    trial = reading.trial()
    assert trial.failure is not None and trial.failure.cause is FailureCause.NO_RESPONSE


def test_a_last_call_that_failed_leaves_no_output_gap() -> None:
    spans = [
        _chat(0, {"gen_ai.response.finish_reasons": ["stop"]}),
        _chat(1, {"error.type": "BadRequestError"}, status=SpanStatus.ERROR),
    ]
    assert "output" not in read_spans(spans).not_recorded


def test_spans_without_a_model_call_keep_today_s_reading() -> None:
    tool = SpanRecord(
        name="execute_tool t",
        trace_id=TRACE,
        span_id="00000000000000ff",
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"},
    )
    reading = read_spans([tool])
    assert reading.not_recorded == {}
    trial = reading.trial()
    assert trial.failure is not None and trial.failure.cause is FailureCause.NO_RESPONSE


def test_pydantic_ai_without_content_keeps_the_shape_of_its_messages_only() -> None:
    """pydantic-ai with `include_content=False` still writes `gen_ai.output.messages`, with
    the parts' types and no content: the answer is unknown, not missing."""
    import_or_skip("pydantic_ai")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    from agenteval.otel.live import span_record

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("It is sunny.")])

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent: Agent[None, str] = Agent(FunctionModel(answer))
    agent.instrument = InstrumentationSettings(tracer_provider=provider, include_content=False)
    assert agent.run_sync("Weather?").output == "It is sunny."
    spans = [span_record(s) for s in exporter.get_finished_spans()]
    assert any("gen_ai.output.messages" in s.attributes for s in spans)

    reading = read_spans(spans)
    assert reading.output is None
    assert "include_content=True" in reading.not_recorded["output"]
    assert reading.trial().failure is None


def test_pydantic_ai_tool_spans_without_content_have_unknown_arguments() -> None:
    """Without content pydantic-ai's tool span has no arguments, and the request naming the
    same call id has none either: unknown, not "called with nothing"."""
    import_or_skip("pydantic_ai")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    from agenteval.otel.live import span_record

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if isinstance(messages[-1].parts[-1], ToolReturnPart):
            return ModelResponse(parts=[TextPart("It is sunny.")])
        return ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"}, "c1")])

    readings = []
    for content in (False, True):
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        agent: Agent[None, str] = Agent(FunctionModel(script))

        @agent.tool_plain
        def get_weather(city: str) -> str:
            return "sunny"

        agent.instrument = InstrumentationSettings(
            tracer_provider=provider, include_content=content
        )
        agent.run_sync("Weather?")
        readings.append(read_spans(span_record(s) for s in exporter.get_finished_spans()))
    hidden, shown = readings
    [call] = hidden.tool_calls
    assert (call.name, call.id, call.arguments) == ("get_weather", "c1", {})
    assert "1 tool call(s)" in hidden.not_recorded["tool_arguments"]
    assert "include_content=True" in hidden.not_recorded["tool_arguments"]
    assert shown.tool_calls[0].arguments == {"city": "Paris"}
    assert shown.not_recorded == {}


def _genai_turns(response: dict[str, Any]) -> list[SpanRecord]:
    """Two chat spans as openai-v2 (latest conventions) writes them: the model asks for `f`,
    then the next request carries the tool's answer part `response` (without its value or with
    it) back."""
    asked = [
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": {}}],
            "finish_reason": "tool_calls",
        }
    ]
    answer = {"type": "tool_call_response", "id": "c1", **response}
    answered = [
        {"role": "user", "parts": [{"type": "text", "content": "go"}]},
        *asked,
        {"role": "tool", "parts": [answer]},
    ]
    final = [{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}]
    return [
        _chat(0, {"gen_ai.output.messages": json.dumps(asked)}),
        _chat(
            1,
            {
                "gen_ai.input.messages": json.dumps(answered),
                "gen_ai.output.messages": json.dumps(final),
            },
        ),
    ]


def test_a_tool_result_recorded_as_null_is_a_result_not_a_gap() -> None:
    # Before: a `response` recorded as JSON null read as no result at all, so the trial said
    # "tool_results" not recorded and tool_execution & co. gave no score.
    reading = read_spans(_genai_turns({"response": None}))
    (call,) = reading.tool_calls
    assert (call.name, call.id, call.result, call.error) == ("f", "c1", None, None)
    assert "tool_results" not in reading.not_recorded


def test_a_tool_answer_without_its_result_is_still_a_gap() -> None:
    reading = read_spans(_genai_turns({}))
    (call,) = reading.tool_calls
    assert call.result is None
    assert "tool_results" in reading.not_recorded
