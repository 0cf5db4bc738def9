"""A trace's shape for matching, and the trials one trace holds."""

from __future__ import annotations

from typing import Any

from agenteval.otel.shape import trace_shape, trials_of_trace
from agenteval.otel.spans import SpanEvent, SpanRecord

CASE = "agenteval.case.id"


def span(name: str, parent: str | None = None, start: int = 0, **attributes: Any) -> SpanRecord:
    return SpanRecord(
        name=name,
        trace_id="t" * 32,
        span_id=name,
        parent_id=parent,
        start_ns=start,
        attributes=attributes,
    )


def names(trials: list[list[SpanRecord]]) -> list[list[str]]:
    return [sorted(s.span_id for s in spans) for spans in trials]


def test_a_trace_is_one_trial_unless_spans_below_a_root_naming_no_case_name_several() -> None:
    one = [span("root", **{CASE: "a"}), span("x", "root", **{CASE: "b"}), span("y", "root")]
    assert names(trials_of_trace(one, CASE)) == [["root", "x", "y"]]
    server = [span("root"), span("agent", "root", **{CASE: "a"}), span("chat", "agent")]
    assert names(trials_of_trace(server, CASE)) == [["agent", "chat", "root"]]
    batch = [
        span("batch"),
        span("t2", "batch", start=2, **{CASE: "b"}),
        span("t1", "batch", start=1, **{CASE: "a"}),
        span("c1", "t1", **{CASE: "a"}),  # copied below its trial's span: the same trial
        span("c1b", "c1"),
        span("c2", "t2"),
        span("setup", "batch"),
    ]
    assert names(trials_of_trace(batch, CASE)) == [["c1", "c1b", "t1"], ["c2", "t2"]]


def test_a_lone_model_call_is_told_by_its_root_span() -> None:
    chat = span("chat gpt", **{"gen_ai.operation.name": "chat"})
    assert trace_shape([chat]).lone_model_call
    http = span("POST", "chat gpt")
    assert trace_shape([chat, http]).lone_model_call
    agent = span("agent", **{"gen_ai.operation.name": "invoke_agent"})
    inner = span("chat gpt", "agent", **{"gen_ai.operation.name": "chat"})
    assert not trace_shape([agent, inner]).lone_model_call
    assert not trace_shape([chat, span("other")]).lone_model_call  # two roots: not one call


def test_a_trace_whose_top_span_hangs_under_a_missing_parent_lacks_its_root() -> None:
    orphan = span("chat gpt", "gone", **{"gen_ai.operation.name": "chat"})
    shape = trace_shape([orphan])
    assert shape.rootless and not shape.lone_model_call
    batch = [span("batch"), span("t1", "batch", **{CASE: "a"}), span("t2", "batch", **{CASE: "b"})]
    first, _ = trials_of_trace(batch, CASE)
    assert not trace_shape(first, batch).rootless  # its parent is in the trace, around it


def test_the_older_per_message_events_say_a_call_goes_on_from_tool_results() -> None:
    event = SpanEvent("gen_ai.tool.message", body={"content": "sunny", "id": "call_1"})
    chat = SpanRecord(
        name="chat gpt",
        trace_id="t" * 32,
        span_id="c",
        attributes={"gen_ai.operation.name": "chat"},
        events=(event,),
    )
    assert trace_shape([chat]).continues
    choice = SpanEvent("gen_ai.choice", body={"index": 0, "finish_reason": "tool_calls"})
    asking = SpanRecord(
        name="chat gpt",
        trace_id="t" * 32,
        span_id="c",
        attributes={"gen_ai.operation.name": "chat"},
        events=(choice,),
    )
    assert trace_shape([asking]).asks_for_tools and not trace_shape([asking]).continues
