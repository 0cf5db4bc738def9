"""Tool calls rebuilt from model-call messages, family by family, from spans the real
instrumentation packages wrote (`captured.py`). Each of these read no tool call before the
messages were read (agenteval 543b07e): an agent that called both its tools was failed for
"answered without calling any tool"."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.otel import SpanEvent, SpanRecord, read_spans

from .captured import LOOP, MS, T0, TRACE, captured

WEATHER = {"city": "Paris"}
TIME = {"tz": "CET"}


def _assert_the_tool_loop(spans: list[SpanRecord], *, arguments: bool = True) -> None:
    reading = read_spans(spans)
    calls = reading.tool_calls
    assert [(c.name, c.id) for c in calls] == [("get_weather", "call_A"), ("get_time", "call_B")]
    if arguments:
        assert [c.arguments for c in calls] == [WEATHER, TIME]
        assert [c.result for c in calls] == ["sunny", "ERROR: tz lookup failed"]
    # No family marks a failed tool: the failure shows only in the result text.
    assert all(c.error is None for c in calls)
    # They started when the model call that asked for them ended; how long they ran is unknown.
    first_end = datetime.fromtimestamp(spans[0].end_ns / 1e9, UTC)
    assert all(c.started_at == first_end and c.duration_s is None for c in calls)


@pytest.mark.parametrize(
    "capture",
    [
        "v2_span",  # GenAI latest, message attributes on the span (JSON text)
        "v2_newevent",  # GenAI latest, on the EVENT_ONLY details log record (lists)
        "v2_legacy_content",  # GenAI per-message events (gen_ai.choice, gen_ai.tool.message)
        "oi",  # OpenInference flat keys
        "tl",  # OpenLLMetry 0.62.4 (GenAI latest, arguments as objects)
    ],
)
def test_each_family_s_messages_give_the_tool_calls_with_their_results(capture: str) -> None:
    spans = captured(capture, LOOP)
    _assert_the_tool_loop(spans)
    reading = read_spans(spans)
    assert reading.output == "Sunny, 12:00"
    assert reading.not_recorded == {}
    trial = reading.trial()
    assert trial.failure is None and trial.not_recorded == {}


def test_legacy_events_without_content_name_the_calls_but_not_their_arguments() -> None:
    """openai-v2's legacy events keep tool names and ids without content capture; the
    arguments and results are left out, which is said, not read as `{}`."""
    spans = captured("v2_legacy_nocontent", LOOP)
    _assert_the_tool_loop(spans, arguments=False)
    reading = read_spans(spans)
    assert [c.result for c in reading.tool_calls] == [None, None]
    assert "tool_calls" not in reading.not_recorded
    assert "2 tool call(s)" in reading.not_recorded["tool_arguments"]
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in reading.not_recorded["output"]


def _chat(
    i: int,
    attributes: dict[str, Any],
    *,
    events: tuple[SpanEvent, ...] = (),
    parent: str | None = None,
    span_id: str | None = None,
) -> SpanRecord:
    return SpanRecord(
        name="chat m",
        trace_id=TRACE,
        span_id=span_id or f"{i + 100:016x}",
        parent_id=parent,
        start_ns=T0 + i * 100 * MS,
        end_ns=T0 + (i * 100 + 50) * MS,
        attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", **attributes},
        events=events,
    )


def _part_call(name: str, call_id: str | None, arguments: Any = None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "tool_call", "name": name}
    if call_id is not None:
        part["id"] = call_id
    if arguments is not None:
        part["arguments"] = arguments
    return part


def _genai(
    *, inputs: list[dict[str, Any]] | None = None, outputs: list[dict[str, Any]] | None = None
) -> dict[str, str]:
    attrs = {}
    if inputs is not None:
        attrs["gen_ai.input.messages"] = json.dumps(inputs)
    if outputs is not None:
        attrs["gen_ai.output.messages"] = json.dumps(outputs)
    return attrs


def _asks(*parts: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "assistant", "parts": list(parts), "finish_reason": "tool_calls"}]


def _answers(text: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]


def _result(call_id: str, value: Any, key: str = "response") -> dict[str, Any]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, key: value}]}


def test_a_result_repeated_in_every_later_request_counts_once_and_the_first_read_wins() -> None:
    history = [_result("c1", '{"temp": 12}')]
    spans = [
        _chat(0, _genai(outputs=_asks(_part_call("weather", "c1", {"city": "Oslo"})))),
        _chat(1, _genai(inputs=history, outputs=_asks(_part_call("time", "c2", {})))),
        _chat(2, _genai(inputs=[*history, _result("c2", "noon")], outputs=_answers("ok"))),
        _chat(3, _genai(inputs=[_result("c1", "changed"), _result("c2", "noon")])),
    ]
    calls = read_spans(spans).tool_calls
    assert [(c.name, c.id) for c in calls] == [("weather", "c1"), ("time", "c2")]
    # JSON text of an object reads as the object, like a tool span's result; text stays text.
    assert [c.result for c in calls] == [{"temp": 12}, "noon"]


def test_pydantic_ai_results_and_arguments_as_json_text() -> None:
    """pydantic-ai names the result `result` (its `ToolCallResponsePart`); other producers
    write the arguments as JSON text."""
    spans = [
        _chat(0, _genai(outputs=_asks(_part_call("lookup", "c1", '{"code": "OPO"}')))),
        _chat(1, _genai(inputs=[_result("c1", {"fare": 120}, key="result")])),
    ]
    [call] = read_spans(spans).tool_calls
    assert call.arguments == {"code": "OPO"}
    assert call.result == {"fare": 120}


def test_calls_without_ids_are_told_apart_by_position_and_an_unanswered_call_has_no_result() -> (
    None
):
    spans = [
        _chat(0, _genai(outputs=_asks(_part_call("ping", None, {}), _part_call("ping", None, {})))),
        _chat(1, _genai(outputs=_asks(_part_call("final", "c9", {"x": 1})))),
    ]
    calls = read_spans(spans).tool_calls
    assert [c.name for c in calls] == ["ping", "ping", "final"]
    assert all(c.result is None and c.id is None for c in calls[:2])
    assert calls[2].result is None  # asked for in the last response: no later request


def test_calls_named_by_item_id_take_the_next_request_s_results_in_order() -> None:
    """OpenLLMetry 0.62.4 on the Responses API: a response's calls carry their item ids
    (`fc_...`), the next request's results their call ids (`call_...`). Paired in order, only
    when the counts agree and no result answers a known id; else left unpaired, never guessed."""
    asked = _asks(_part_call("weather", "fc_1", {"city": "Oslo"}), _part_call("time", "fc_2", {}))
    both = [_result("call_a", "cold"), _result("call_b", "noon")]
    spans = [
        _chat(0, _genai(outputs=asked)),
        _chat(1, _genai(inputs=both, outputs=_answers("ok"))),
    ]
    calls = read_spans(spans).tool_calls
    assert [(c.name, c.id, c.result) for c in calls] == [
        ("weather", "call_a", "cold"),
        ("time", "call_b", "noon"),
    ]
    one = [_result("call_a", "cold")]
    spans = [_chat(0, _genai(outputs=asked)), _chat(1, _genai(inputs=one, outputs=_answers("ok")))]
    calls = read_spans(spans).tool_calls
    assert [(c.id, c.result) for c in calls] == [("fc_1", None), ("fc_2", None)]


def test_calls_are_ordered_by_the_requesting_call_s_start_then_position() -> None:
    late = _chat(1, _genai(outputs=_asks(_part_call("b", "2", {}), _part_call("c", "3", {}))))
    early = _chat(0, _genai(outputs=_asks(_part_call("a", "1", {}))))
    assert [c.name for c in read_spans([late, early]).tool_calls] == ["a", "b", "c"]


def test_history_in_a_request_is_not_a_call_of_this_trial() -> None:
    """An assistant message with tool calls in the input may come from the case's
    conversation: only responses count."""
    past = {"role": "assistant", "parts": [_part_call("old", "c0", {})]}
    spans = [_chat(0, _genai(inputs=[past, _result("c0", "x")], outputs=_answers("hi")))]
    assert read_spans(spans).tool_calls == []


def test_legacy_choice_events_with_tool_calls_at_the_top_of_the_body() -> None:
    """OpenLLMetry's events mode puts `tool_calls` beside `message` in `gen_ai.choice`."""
    choice = SpanEvent(
        "gen_ai.choice",
        body={
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {},
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    )
    tool = SpanEvent("gen_ai.tool.message", body={"id": "c1", "content": "[1, 2]"})
    spans = [_chat(0, {}, events=(choice,)), _chat(1, {}, events=(tool,))]
    [call] = read_spans(spans).tool_calls
    assert (call.name, call.arguments, call.result) == ("f", {}, [1, 2])


def test_openllmetry_older_flat_keys_calls_results_schemas_and_tokens() -> None:
    """OpenLLMetry before 0.55: `gen_ai.completion.N.*`, `gen_ai.prompt.N.*`,
    `llm.request.functions.N.*`, `llm.usage.*`."""
    first = _chat(
        0,
        {
            "llm.request.type": "chat",
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "weather?",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.finish_reason": "tool_calls",
            "gen_ai.completion.0.tool_calls.0.id": "call_A",
            "gen_ai.completion.0.tool_calls.0.name": "get_weather",
            "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Paris"}',
            "llm.request.functions.0.name": "get_weather",
            "llm.request.functions.0.description": "Weather for a city",
            "llm.request.functions.0.parameters": '{"type": "object", "properties": {}}',
            "llm.usage.prompt_tokens": 50,
            "llm.usage.completion_tokens": 20,
            "llm.usage.reasoning_tokens": 5,
        },
    )
    second = _chat(
        1,
        {
            "gen_ai.prompt.1.role": "tool",
            "gen_ai.prompt.1.tool_call_id": "call_A",
            "gen_ai.prompt.1.content": "sunny",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "Sunny",
        },
    )
    reading = read_spans([first, second])
    [call] = reading.tool_calls
    assert (call.name, call.id, call.arguments, call.result) == (
        "get_weather",
        "call_A",
        WEATHER,
        "sunny",
    )
    spec = reading.tools["get_weather"]
    assert spec.description == "Weather for a city"
    assert spec.parameters == {"type": "object", "properties": {}}
    usage = reading.model_calls[0].usage
    assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens) == (50, 20, 5)
    assert reading.output == "Sunny"


def test_openinference_tool_schemas_are_the_trial_s_tool_specs() -> None:
    reading = read_spans(captured("oi", LOOP))
    assert sorted(reading.tools) == ["get_time", "get_weather"]
    weather = reading.tools["get_weather"]
    assert weather.description == "Weather for a city"
    assert weather.parameters["required"] == ["city"]
    assert reading.trial().tool_specs == reading.tools


def test_openllmetry_tool_definitions_reach_the_trial() -> None:
    reading = read_spans(captured("tl", LOOP))
    assert sorted(reading.trial().tool_specs) == ["get_time", "get_weather"]


def _tool_span(i: int, attributes: dict[str, Any]) -> SpanRecord:
    return SpanRecord(
        name=f"execute_tool {attributes['gen_ai.tool.name']}",
        trace_id=TRACE,
        span_id=f"{i + 500:016x}",
        start_ns=T0 + (i * 100 + 60) * MS,
        end_ns=T0 + (i * 100 + 70) * MS,
        attributes={"gen_ai.operation.name": "execute_tool", **attributes},
    )


def test_tool_spans_win_and_the_messages_only_fill_their_gaps() -> None:
    """With tool spans in the trace they are the record (never a call twice); a span's
    missing arguments and result come from the messages by call id, and a span without an id
    takes the id of the first unclaimed request of its name."""
    asks = _asks(
        _part_call("search", "s1", {"q": "a"}),
        _part_call("search", "s2", {"q": "b"}),
        _part_call("extra", "e1", {}),
    )
    spans = [
        _chat(0, _genai(outputs=asks)),
        _tool_span(0, {"gen_ai.tool.name": "search", "gen_ai.tool.call.id": "s2"}),
        _tool_span(1, {"gen_ai.tool.name": "search", "gen_ai.tool.call.result": "mine"}),
        _chat(2, _genai(inputs=[_result("s1", "one"), _result("s2", "two")])),
    ]
    calls = read_spans(spans).tool_calls
    assert len(calls) == 2  # the tool spans; `extra` had no span and is not added
    assert (calls[0].id, calls[0].arguments, calls[0].result) == ("s2", {"q": "b"}, "two")
    assert (calls[1].id, calls[1].arguments, calls[1].result) == ("s1", {"q": "a"}, "mine")


_KEYS = st.sampled_from(
    [
        "id",
        "content",
        "message",
        "tool_calls",
        "function",
        "name",
        "arguments",
        "finish_reason",
        "role",
        "parts",
        "type",
        "response",
        "result",
    ]
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(["tool", "tool_call", "x", "{"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "gen_ai.choice",
                    "gen_ai.tool.message",
                    "gen_ai.client.inference.operation.details",
                ]
            ),
            _JSON,
            _JSON,
        ),
        max_size=4,
    ),
    _JSON,
)
def test_any_message_shapes_read_without_crashing(
    events: list[tuple[str, Any, Any]], messages: Any
) -> None:
    span_events = tuple(
        SpanEvent(name, {"gen_ai.input.messages": attrs, "gen_ai.output.messages": attrs}, body)
        for name, attrs, body in events
    )
    spans = [
        _chat(0, {"gen_ai.output.messages": json.dumps(messages)}, events=span_events),
        _chat(1, {"gen_ai.input.messages": messages}),
    ]
    reading = read_spans(spans)
    assert all(call.name for call in reading.tool_calls)
    reading.trial()  # always a valid Trial


def test_openinference_content_as_a_list_of_parts() -> None:
    """OpenInference writes list content as `message.contents.N.message_content.text`."""
    base = {"openinference.span.kind": "LLM", "llm.model_name": "m"}
    first = _chat(
        0,
        {
            **base,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "f",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{}",
        },
    )
    second = _chat(
        1,
        {
            **base,
            "llm.input_messages.0.message.role": "tool",
            "llm.input_messages.0.message.tool_call_id": "c1",
            "llm.input_messages.0.message.contents.1.message_content.text": "b",
            "llm.input_messages.0.message.contents.0.message_content.text": "a",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.contents.0.message_content.text": "done",
        },
    )
    reading = read_spans([first, second])
    assert [(c.name, c.result) for c in reading.tool_calls] == [("f", "ab")]
    assert reading.output == "done"
