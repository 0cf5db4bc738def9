"""Model calls' fields from every family: cached and reasoning tokens, nested spans of one call
merged, error types as openai-v2 2.4b0 writes them. On agenteval 543b07e pydantic-ai's and
OpenLLMetry's `llm.usage.*` token names read 0, the wrapping span's fields were lost, and the
class repr was the error type; the other tests here guard what already worked."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agenteval.otel import SpanEvent, SpanRecord, SpanStatus, read_spans

from .captured import LOOP, MS, T0, TRACE, captured


def _span(
    name: str,
    attributes: dict[str, Any],
    *,
    span_id: int,
    parent: int | None = None,
    start_ms: int = 0,
    end_ms: int = 10,
    scope: str = "",
    status: SpanStatus = SpanStatus.UNSET,
) -> SpanRecord:
    return SpanRecord(
        name=name,
        trace_id=TRACE,
        span_id=f"{span_id:016x}",
        parent_id=f"{parent:016x}" if parent is not None else None,
        start_ns=T0 + start_ms * MS,
        end_ns=T0 + end_ms * MS,
        attributes=attributes,
        scope=scope,
        status=status,
    )


@pytest.mark.parametrize(
    ("attributes", "cached", "reasoning"),
    [
        # pydantic-ai (usage.py `opentelemetry_attributes`: OpenAI models' `details`)
        ({"gen_ai.usage.details.reasoning_tokens": 7}, 0, 7),
        ({"gen_ai.usage.details.cache_read_tokens": 11}, 11, 0),
        # OpenLLMetry (semconv_ai LLM_USAGE_REASONING_TOKENS)
        ({"llm.usage.reasoning_tokens": 5}, 0, 5),
        # OpenLLMetry 0.62.4 as captured, and OpenInference as captured
        ({"gen_ai.usage.cache_read.input_tokens": 10, "gen_ai.usage.reasoning_tokens": 5}, 10, 5),
        (
            {
                "llm.token_count.prompt_details.cache_read": 10,
                "llm.token_count.completion_details.reasoning": 5,
            },
            10,
            5,
        ),
    ],
)
def test_cached_and_reasoning_tokens_of_every_family(
    attributes: dict[str, Any], cached: int, reasoning: int
) -> None:
    chat = _span(
        "chat gpt-4o",
        {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 50, **attributes},
        span_id=1,
    )
    [call] = read_spans([chat]).model_calls
    assert (call.usage.cached_tokens, call.usage.reasoning_tokens) == (cached, reasoning)


def test_captured_families_read_their_cached_and_reasoning_tokens() -> None:
    for capture in ("oi", "tl"):
        [first, _] = read_spans(captured(capture, LOOP)).model_calls
        assert (first.usage.input_tokens, first.usage.output_tokens) == (50, 20)
        assert (first.usage.cached_tokens, first.usage.reasoning_tokens) == (10, 5)


def test_a_model_call_seen_by_two_instrumentations_counts_once_with_both_s_fields() -> None:
    """pydantic-ai's span around openai-v2's: the inner span's fields, filled from the outer
    one where the inner lacks them (cached tokens, tool definitions, the answer)."""
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    outer = _span(
        "chat gpt-4o",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 50,
            "gen_ai.usage.output_tokens": 20,
            "gen_ai.usage.cache_read.input_tokens": 10,
            "gen_ai.usage.details.reasoning_tokens": 5,
            "gen_ai.tool.definitions": json.dumps(tools),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny"}]}]
            ),
        },
        span_id=1,
        end_ms=100,
        scope="pydantic-ai",
    )
    inner = _span(
        "chat gpt-4o",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.provider.name": "openai",
            "gen_ai.response.finish_reasons": ["stop"],
            "gen_ai.usage.input_tokens": 50,
            "gen_ai.usage.output_tokens": 20,
        },
        span_id=2,
        parent=1,
        start_ms=5,
        end_ms=95,
        scope="opentelemetry.util.genai.handler",
    )
    reading = read_spans([outer, inner])
    [call] = reading.model_calls
    assert (call.provider, call.duration_s) == ("openai", 0.09)  # the inner span's
    assert (call.usage.input_tokens, call.usage.cached_tokens) == (50, 10)
    assert call.usage.reasoning_tokens == 5
    assert list(reading.tools) == ["get_weather"]
    assert reading.output == "Sunny"
    assert reading.not_recorded == {}


def test_a_span_around_several_model_calls_merges_into_none() -> None:
    """A framework's span around a retry loop holds two calls: its totals belong to neither."""
    loop = _span(
        "chat m",
        {"gen_ai.operation.name": "chat", "gen_ai.usage.cache_read.input_tokens": 99},
        span_id=1,
        end_ms=100,
    )
    calls = [
        _span(
            "chat m",
            {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 5},
            span_id=2 + i,
            parent=1,
            start_ms=10 + 40 * i,
            end_ms=40 + 40 * i,
        )
        for i in range(2)
    ]
    model_calls = read_spans([loop, *calls]).model_calls
    assert [c.usage.cached_tokens for c in model_calls] == [0, 0]


def test_openai_v2_class_repr_error_type_reads_as_the_short_name() -> None:
    """openai-v2 2.4b0 writes `error.type = "<class 'openai.BadRequestError'>"`."""
    [failed] = captured("v2_nocontent")[2:]
    assert failed.attributes["error.type"] == "<class 'openai.BadRequestError'>"
    trial = read_spans([failed]).trial()
    assert trial.failure is not None and trial.failure.error_type == "BadRequestError"
    tool = _span(
        "execute_tool t",
        {"gen_ai.operation.name": "execute_tool", "error.type": "<class 'x.y.ToolError'>"},
        span_id=9,
        status=SpanStatus.ERROR,
    )
    tool = SpanRecord(**{**tool.__dict__, "status_message": "boom"})
    assert read_spans([tool]).tool_calls[0].error == "ToolError: boom"


def test_an_exception_event_type_still_wins_over_error_type() -> None:
    chat = _span(
        "chat m",
        {"gen_ai.operation.name": "chat", "error.type": "<class 'openai.APIError'>"},
        span_id=1,
        status=SpanStatus.ERROR,
    )
    chat = SpanRecord(
        **{
            **chat.__dict__,
            "events": (SpanEvent("exception", {"exception.type": "httpx.ReadTimeout"}),),
        }
    )
    failure = read_spans([chat]).failure
    assert failure is not None and failure.error_type == "ReadTimeout"


@pytest.mark.parametrize("capture", ["v2_span", "v2_nocontent", "v2_legacy_content", "oi", "tl"])
def test_each_family_s_failed_model_call_names_its_error_type(capture: str) -> None:
    [failed] = captured(capture)[2:]
    failure = read_spans([failed]).failure
    assert failure is not None and failure.error_type == "BadRequestError"
    assert "bad request scripted" in failure.message
