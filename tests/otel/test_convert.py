"""Spans to a trial's record: the GenAI conventions, their deprecated names, older shapes."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agenteval import EvalCase, FailureCause, RunStore
from agenteval.otel import SpanEvent, SpanKind, SpanRecord, SpanStatus, read_spans, span_kind
from agenteval.run import RunInfo, TrialResult

_ids = itertools.count(1)
MS = 1_000_000
T0 = 1_800_000_000_000_000_000


def span(
    name: str,
    attributes: dict[str, Any] | None = None,
    *,
    parent: SpanRecord | None = None,
    start_ms: float = 0,
    end_ms: float = 1,
    status: SpanStatus = SpanStatus.UNSET,
    message: str = "",
    events: tuple[SpanEvent, ...] = (),
) -> SpanRecord:
    return SpanRecord(
        name=name,
        trace_id="ab" * 16,
        span_id=f"{next(_ids):016x}",
        parent_id=parent.span_id if parent else None,
        start_ns=T0 + int(start_ms * MS),
        end_ns=T0 + int(end_ms * MS),
        attributes=attributes or {},
        status=status,
        status_message=message,
        events=events,
    )


def exception(kind: str, message: str) -> tuple[SpanEvent, ...]:
    return (SpanEvent("exception", {"exception.type": kind, "exception.message": message}),)


def test_execute_tool_span_is_a_tool_call_with_parsed_arguments_and_result() -> None:
    tool = span(
        "execute_tool search",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "search",
            "gen_ai.tool.call.id": "call_1",
            "gen_ai.tool.call.arguments": '{"query": "refund", "limit": 3}',
            "gen_ai.tool.call.result": '[{"id": "doc-1"}]',
        },
        start_ms=10,
        end_ms=35,
    )
    [call] = read_spans([tool]).tool_calls
    assert call.name == "search"
    assert call.id == "call_1"
    assert call.arguments == {"query": "refund", "limit": 3}
    assert call.result == [{"id": "doc-1"}]
    assert call.error is None
    assert call.duration_s == 0.025
    assert call.started_at is not None and call.started_at.tzinfo is not None


def test_a_failed_tool_span_records_its_error() -> None:
    tool = span(
        "execute_tool lookup",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"},
        status=SpanStatus.ERROR,
        message="no such city",
        events=exception("builtins.KeyError", "'Atlantis'"),
    )
    [call] = read_spans([tool]).tool_calls
    assert call.error == "KeyError: 'Atlantis'"
    bare = span(
        "execute_tool x", {"gen_ai.tool.name": "x"}, status=SpanStatus.ERROR, message="boom"
    )
    assert read_spans([bare]).tool_calls[0].error == "boom"


def test_plain_text_results_stay_text_and_unparsable_arguments_are_kept() -> None:
    tool = span(
        "execute_tool echo",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "echo",
            "gen_ai.tool.call.arguments": "not json",
            "gen_ai.tool.call.result": "sunny in Paris",
        },
    )
    [call] = read_spans([tool]).tool_calls
    assert call.arguments == {"input": "not json"}
    assert call.result == "sunny in Paris"


def test_secret_named_arguments_are_masked_where_the_trial_is_stored(tmp_path: Path) -> None:
    """As for every source of tool calls: one place, the store, masks them, at any depth (see
    tests/test_secret_keys.py)."""
    tool = span(
        "execute_tool fetch",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "fetch",
            "gen_ai.tool.call.arguments": json.dumps({"url": "https://x", "api_key": "pw-plain"}),
        },
    )
    trial = read_spans([tool]).trial()
    case = EvalCase(id="c", input="q")
    info = RunInfo(target="t")
    with RunStore(tmp_path / "s.db") as store:
        store.create_run(info, [case])
        store.add_result(info.run_id, TrialResult(case=case, trial=trial))
        [stored] = store.iter_results(info.run_id)
    [call] = stored.trial.tool_calls
    assert call.arguments == {"url": "https://x", "api_key": "[REDACTED]"}
    assert b"pw-plain" not in (tmp_path / "s.db").read_bytes()


def test_chat_span_is_a_model_call_with_every_kind_of_token() -> None:
    chat = span(
        "chat gpt-4o",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.response.model": "gpt-4o-2024-08-06",
            "gen_ai.usage.input_tokens": 812,
            "gen_ai.usage.output_tokens": 64,
            "gen_ai.usage.cache_read.input_tokens": 512,
            "gen_ai.usage.reasoning.output_tokens": 20,
        },
        end_ms=400,
    )
    reading = read_spans([chat])
    [call] = reading.model_calls
    assert (call.model, call.provider) == ("gpt-4o", "openai")
    assert call.usage.input_tokens == 812
    assert call.usage.output_tokens == 64
    assert call.usage.cached_tokens == 512
    assert call.usage.reasoning_tokens == 20
    assert call.duration_s == 0.4


def test_deprecated_names_give_the_same_model_call() -> None:
    old = span(
        "chat claude",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "anthropic",
            "gen_ai.request.model": "claude-3-5-haiku",
            "gen_ai.usage.prompt_tokens": "100",
            "gen_ai.usage.completion_tokens": 7,
        },
    )
    [call] = read_spans([old]).model_calls
    assert call.provider == "anthropic"
    assert (call.usage.input_tokens, call.usage.output_tokens) == (100, 7)


def test_generate_content_and_text_completion_are_model_calls_and_embeddings_are_not() -> None:
    spans = [
        span(
            "generate_content gemini-2.5-flash",
            {"gen_ai.operation.name": "generate_content", "gen_ai.request.model": "g"},
        ),
        span(
            "text_completion davinci",
            {"gen_ai.operation.name": "text_completion", "gen_ai.request.model": "d"},
            start_ms=2,
        ),
        span(
            "embeddings e",
            {"gen_ai.operation.name": "embeddings", "gen_ai.request.model": "e"},
            start_ms=3,
        ),
    ]
    assert [c.model for c in read_spans(spans).model_calls] == ["g", "d"]


def test_span_name_alone_tells_the_operation_when_the_attribute_is_missing() -> None:
    chat = span("chat gpt-4o-mini", {"gen_ai.system": "openai", "gen_ai.usage.input_tokens": 5})
    assert span_kind(chat) is SpanKind.MODEL
    assert read_spans([chat]).model_calls[0].model == "gpt-4o-mini"
    # A span called "chat" with no GenAI attribute at all is someone's web handler, not a model.
    assert span_kind(span("chat", {"http.route": "/chat"})) is None


def test_invoke_agent_spans_are_node_visits_in_order() -> None:
    root = span("invoke_agent planner", {"gen_ai.operation.name": "invoke_agent"}, end_ms=100)
    child = span(
        "invoke_agent researcher",
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "researcher"},
        parent=root,
        start_ms=10,
        end_ms=50,
    )
    writer = span(
        "invoke_agent writer",
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "writer"},
        parent=root,
        start_ms=60,
        end_ms=90,
    )
    assert read_spans([writer, child, root]).node_visits == ["planner", "researcher", "writer"]


def test_pydantic_ai_first_format_running_tool_and_agent_run() -> None:
    run = span("agent run", {"agent_name": "support", "model_name": "openai:gpt-4o"}, end_ms=50)
    tool = span(
        "running tool",
        {
            "gen_ai.tool.name": "get_order",
            "gen_ai.tool.call.id": "c9",
            "tool_arguments": '{"order_id": 42}',
            "tool_response": '{"status": "shipped"}',
        },
        parent=run,
        start_ms=5,
        end_ms=8,
    )
    reading = read_spans([run, tool])
    assert reading.node_visits == ["support"]
    [call] = reading.tool_calls
    assert (call.name, call.arguments, call.result) == (
        "get_order",
        {"order_id": 42},
        {"status": "shipped"},
    )


def test_google_adk_tool_attributes_and_call_llm_around_generate_content() -> None:
    agent = span(
        "invoke_agent weather_agent",
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather_agent"},
        end_ms=100,
    )
    call_llm = span(
        "call_llm",
        {
            "gen_ai.system": "gcp.vertex.agent",
            "gen_ai.request.model": "gemini-2.5-flash",
            "gen_ai.usage.input_tokens": 90,
            "gen_ai.usage.output_tokens": 9,
        },
        parent=agent,
        start_ms=1,
        end_ms=40,
    )
    inner = span(
        "generate_content gemini-2.5-flash",
        {
            "gen_ai.operation.name": "generate_content",
            "gen_ai.request.model": "gemini-2.5-flash",
            "gen_ai.usage.input_tokens": 90,
            "gen_ai.usage.output_tokens": 9,
        },
        parent=call_llm,
        start_ms=2,
        end_ms=39,
    )
    tool = span(
        "execute_tool get_weather",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_weather",
            "gcp.vertex.agent.tool_call_args": '{"city": "Oslo"}',
            "gcp.vertex.agent.tool_response": '{"temp": -3}',
        },
        parent=agent,
        start_ms=41,
        end_ms=45,
    )
    reading = read_spans([agent, call_llm, inner, tool])
    assert len(reading.model_calls) == 1  # the wrapper and the provider call count once
    assert reading.model_calls[0].usage.input_tokens == 90
    assert reading.tool_calls[0].arguments == {"city": "Oslo"}
    assert reading.tool_calls[0].result == {"temp": -3}
    assert span_kind(call_llm) is SpanKind.MODEL


def test_openinference_spans() -> None:
    agent = span("Agent", {"openinference.span.kind": "AGENT", "agent.name": "triage"}, end_ms=9)
    llm = span(
        "ChatCompletion",
        {
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o",
            "llm.provider": "openai",
            "llm.token_count.prompt": 30,
            "llm.token_count.completion": 4,
            "llm.token_count.prompt_details.cache_read": 10,
        },
        parent=agent,
        start_ms=1,
        end_ms=3,
    )
    tool = span(
        "lookup",
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "lookup",
            "input.value": '{"code": "OPO"}',
            "output.value": '{"fare": 120}',
        },
        parent=agent,
        start_ms=4,
        end_ms=5,
    )
    reading = read_spans([agent, llm, tool])
    assert reading.node_visits == ["triage"]
    assert reading.model_calls[0].usage.cached_tokens == 10
    assert reading.model_calls[0].provider == "openai"
    assert reading.tool_calls[0].arguments == {"code": "OPO"}
    assert reading.tool_calls[0].result == {"fare": 120}


def test_openllmetry_tool_inputs_are_unwrapped() -> None:
    tool = span(
        "search.tool",
        {
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": "search",
            "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"query": "bags"}}),
            "traceloop.entity.output": '"two bags"',
        },
    )
    llm = span(
        "openai.chat",
        {
            "llm.request.type": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.prompt_tokens": 11,
            "gen_ai.usage.completion_tokens": 2,
            "gen_ai.usage.cache_read_input_tokens": 3,
        },
        start_ms=2,
    )
    reading = read_spans([tool, llm])
    assert reading.tool_calls[0].name == "search"
    assert reading.tool_calls[0].arguments == {"query": "bags"}
    assert reading.model_calls[0].usage.cached_tokens == 3


def test_the_same_tool_call_seen_by_two_instrumentations_counts_once() -> None:
    outer = span(
        "execute_tool search",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"},
        end_ms=10,
    )
    inner = span(
        "search",
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "search",
            "input.value": '{"q": "x"}',
            "output.value": "found",
        },
        parent=outer,
        start_ms=1,
        end_ms=9,
    )
    [call] = read_spans([outer, inner]).tool_calls
    assert call.arguments == {"q": "x"}
    assert call.result == "found"


def test_a_tool_called_by_a_sub_agent_inside_a_tool_is_its_own_call() -> None:
    outer = span(
        "execute_tool ask_expert",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ask_expert"},
        end_ms=10,
    )
    agent = span(
        "invoke_agent expert", {"gen_ai.operation.name": "invoke_agent"}, parent=outer, start_ms=1
    )
    inner = span(
        "execute_tool search",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"},
        parent=agent,
        start_ms=2,
    )
    assert [c.name for c in read_spans([outer, agent, inner]).tool_calls] == [
        "ask_expert",
        "search",
    ]


def test_the_answer_comes_from_the_agent_span_else_the_last_model_call() -> None:
    message = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Paris"}]}])
    agent = span(
        "invoke_agent a",
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.output.messages": message},
        end_ms=10,
    )
    assert read_spans([agent]).output == "Paris"
    pydantic_ai = span(
        "invoke_agent a", {"gen_ai.operation.name": "invoke_agent", "final_result": "Rome"}
    )
    assert read_spans([pydantic_ai]).output == "Rome"
    first = span(
        "chat m",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "tool_call", "name": "x"}]}]
            ),
        },
    )
    last = span(
        "chat m",
        {"gen_ai.operation.name": "chat", "gen_ai.output.messages": message},
        start_ms=2,
        end_ms=3,
    )
    assert read_spans([first, last]).output == "Paris"
    assert read_spans([first]).output is None


def test_a_trace_without_an_answer_is_a_no_response_trial() -> None:
    tool = span(
        "execute_tool t", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"}
    )
    trial = read_spans([tool]).trial()
    assert trial.failure is not None and trial.failure.cause is FailureCause.NO_RESPONSE


def test_a_failed_root_span_is_the_trials_failure_with_its_cause() -> None:
    agent = span(
        "invoke_agent a",
        {"gen_ai.operation.name": "invoke_agent"},
        status=SpanStatus.ERROR,
        message="Rate limit reached",
        events=exception("openai.RateLimitError", "Rate limit reached"),
    )
    trial = read_spans([agent]).trial()
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.RATE_LIMITED
    assert trial.failure.error_type == "RateLimitError"
    crashed = span(
        "invoke_agent a",
        {"gen_ai.operation.name": "invoke_agent"},
        status=SpanStatus.ERROR,
        events=exception("ValueError", "bad"),
    )
    assert read_spans([crashed]).trial().failure.cause is FailureCause.AGENT_ERROR  # type: ignore[union-attr]


def test_backoff_after_a_rate_limited_model_call_is_a_wait_and_a_retry() -> None:
    agent = span("invoke_agent a", {"gen_ai.operation.name": "invoke_agent"}, end_ms=1000)
    refused = span(
        "chat m",
        {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "error.type": "429"},
        parent=agent,
        start_ms=0,
        end_ms=100,
        status=SpanStatus.ERROR,
    )
    retried = span(
        "chat m",
        {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
        parent=agent,
        start_ms=700,
        end_ms=1000,
    )
    reading = read_spans([agent, refused, retried])
    assert reading.waits_s == 0.6
    assert reading.retries == {"rate_limited": 1}
    trial = reading.trial()
    assert trial.latency_s == 1.0
    assert trial.working_latency_s is not None and abs(trial.working_latency_s - 0.4) < 1e-9
    assert trial.attempts == 2


def test_tools_offered_to_the_model_are_read_as_tool_specs() -> None:
    chat = span(
        "chat m",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.tool.definitions": json.dumps(
                [
                    {
                        "type": "function",
                        "name": "search",
                        "description": "Search.",
                        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
                    },
                    {"type": "function", "function": {"name": "calc", "parameters": {}}},
                ]
            ),
        },
    )
    tools = read_spans([chat]).tools
    assert sorted(tools) == ["calc", "search"]
    assert tools["search"].parameters["properties"] == {"q": {"type": "string"}}


def test_no_spans_is_an_empty_reading() -> None:
    reading = read_spans([])
    assert reading.tool_calls == [] and reading.latency_s is None


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.lists(st.text(max_size=5), max_size=3),
)
_keys = st.sampled_from(
    [
        "gen_ai.operation.name",
        "gen_ai.tool.name",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "gen_ai.usage.input_tokens",
        "gen_ai.request.model",
        "gen_ai.output.messages",
        "gen_ai.input.messages",
        "gen_ai.response.finish_reasons",
        "gen_ai.tool.definitions",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
        "llm.input_messages.0.message.role",
        "llm.tools.0.tool.json_schema",
        "gen_ai.completion.0.tool_calls.0.name",
        "llm.request.functions.0.name",
        "gcp.vertex.agent.llm_response",
        "openinference.span.kind",
        "traceloop.span.kind",
        "traceloop.entity.input",
        "final_result",
        "error.type",
    ]
)


@settings(max_examples=200, deadline=None)
# Found by this test: an infinite token count crashed the reading with an OverflowError.
@example([("chat m", {"gen_ai.usage.input_tokens": float("inf")}, SpanStatus.UNSET)])
@example([("chat m", {"gen_ai.usage.output_tokens": float("nan")}, SpanStatus.UNSET)])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["chat m", "execute_tool t", "invoke_agent a", "x", "running tool"]),
            st.dictionaries(_keys, _values, max_size=6),
            st.sampled_from(list(SpanStatus)),
        ),
        max_size=8,
    )
)
def test_any_attributes_read_without_crashing_and_every_tool_span_is_a_call(
    specs: list[tuple[str, dict[str, Any], SpanStatus]],
) -> None:
    spans = [
        span(name, attrs, start_ms=i, end_ms=i + 0.5, status=status)
        for i, (name, attrs, status) in enumerate(specs)
    ]
    reading = read_spans(spans)
    tool_spans = [s for s in spans if span_kind(s) is SpanKind.TOOL]
    if tool_spans:  # flat spans: no duplicates to fold, and messages add no call to them
        assert len(reading.tool_calls) == len(tool_spans)
    assert all(c.usage.input_tokens >= 0 for c in reading.model_calls)
    reading.trial()  # always a valid Trial
