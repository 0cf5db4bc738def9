"""Live capture with the raw OpenTelemetry SDK: spans the agent emits while a trial runs become
that trial's record, whatever TracerProvider is (or is not) configured, under concurrency."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

import agenteval
from agenteval import EvalCase, FailureCause, ModelCall, Usage
from agenteval.otel import CASE_ID_ATTRIBUTE, TRIAL_INDEX_ATTRIBUTE, live
from agenteval.otel.routing import router

CITIES = ["Paris", "Rome", "Oslo", "Lisbon", "Porto", "Madrid"]
CASES = [
    EvalCase(
        id=city.lower(),
        input=city,
        expected_output=f"sunny in {city}",
        expected_tools=["get_weather"],
    )
    for city in CITIES
]


def _tracer() -> trace.Tracer:
    return trace.get_tracer("test-agent")


def _tool(name: str, arguments: dict[str, Any], result: Any) -> None:
    with _tracer().start_as_current_span(
        f"execute_tool {name}",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.arguments": json.dumps(arguments),
            "gen_ai.tool.call.result": json.dumps(result),
        },
    ):
        pass


def _chat(tokens: int) -> None:
    with _tracer().start_as_current_span(
        "chat sim",
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "sim",
            "gen_ai.request.model": "sim-1",
            "gen_ai.usage.input_tokens": tokens,
            "gen_ai.usage.output_tokens": 1,
        },
    ):
        pass


async def async_agent(city: str) -> str:
    with _tracer().start_as_current_span(
        "invoke_agent weather", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        _chat(len(city))
        await asyncio.sleep(random.uniform(0, 0.01))  # interleave with the other trials
        _tool("get_weather", {"city": city}, {"sky": "sunny"})
        await asyncio.sleep(random.uniform(0, 0.01))
        _chat(len(city) + 10)
        return f"sunny in {city}"


def sync_agent(city: str) -> str:
    with _tracer().start_as_current_span(
        "invoke_agent weather", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        _chat(len(city))
        time.sleep(random.uniform(0, 0.005))
        _tool("get_weather", {"city": city}, {"sky": "sunny"})
        return f"sunny in {city}"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


def _check_own_trials(run: agenteval.Run, trials: int) -> None:
    assert len(run.results) == len(CASES) * trials
    for result in run.results:
        city = result.case.input
        assert [(c.name, c.arguments) for c in result.trial.tool_calls] == [
            ("get_weather", {"city": city})
        ], result.case.id
        assert result.trial.tool_calls[0].result == {"sky": "sunny"}
        assert result.trial.node_visits == ["weather"]
        assert result.trial.model_calls[0].usage.input_tokens == len(city)
        assert result.trial.model_calls[0].provider == "sim"
        assert result.scores["tool_selection"].passed is True


@pytest.mark.parametrize("agent", [async_agent, sync_agent], ids=["async", "sync"])
def test_with_no_provider_agenteval_installs_one_and_concurrent_trials_never_mix(
    no_provider: None, store: Path, agent: Any
) -> None:
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    run = agenteval.evaluate(agent, CASES, trials=4, concurrency=12, store=store)
    _check_own_trials(run, trials=4)
    assert isinstance(trace.get_tracer_provider(), TracerProvider)
    usage = run.results[0].trial.usage
    assert usage.input_tokens == sum(m.usage.input_tokens for m in run.results[0].trial.model_calls)


def test_a_users_provider_gets_the_processor_and_keeps_exporting(
    user_exporter: InMemorySpanExporter, store: Path
) -> None:
    provider = trace.get_tracer_provider()
    run = agenteval.evaluate(async_agent, CASES, trials=2, concurrency=6, store=store)
    _check_own_trials(run, trials=2)
    assert trace.get_tracer_provider() is provider
    exported = user_exporter.get_finished_spans()
    tool_spans = [s for s in exported if s.name == "execute_tool get_weather"]
    assert len(tool_spans) == len(CASES) * 2  # the user's exporter still sees every span
    trial_spans = [s for s in exported if s.instrumentation_scope.name == "agenteval"]
    assert len(trial_spans) == len(CASES) * 2
    assert {(s.attributes or {})[CASE_ID_ATTRIBUTE] for s in trial_spans} == {c.id for c in CASES}
    assert {(s.attributes or {})[TRIAL_INDEX_ATTRIBUTE] for s in trial_spans} == {0, 1}
    # Each trial is a trace of its own, rooted at agenteval's span.
    assert len({s.context.trace_id for s in trial_spans}) == len(CASES) * 2
    assert all(s.parent is None for s in trial_spans)
    # Running the run again adds no second processor: each span is exported once.
    user_exporter.clear()
    agenteval.evaluate(async_agent, CASES[:1], store=store)
    assert (
        len([s for s in user_exporter.get_finished_spans() if s.name.startswith("execute_tool")])
        == 1
    )


def test_spans_from_a_thread_the_agent_started_follow_their_trace(
    no_provider: None, store: Path
) -> None:
    def agent(city: str) -> str:
        carried = otel_context.get_current()  # what the agent's own code propagates

        def work() -> None:
            token = otel_context.attach(carried)
            try:
                _tool("get_weather", {"city": city}, {"sky": "sunny"})
            finally:
                otel_context.detach(token)

        # A plain thread: agenteval's context variables do not follow, the trace does.
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        return f"sunny in {city}"

    run = agenteval.evaluate(agent, CASES, trials=2, concurrency=6, store=store)
    for result in run.results:
        assert [c.arguments for c in result.trial.tool_calls] == [{"city": result.case.input}]


@agenteval.tool
def get_weather(city: str) -> dict[str, str]:
    """The weather in a city."""
    _tool("get_weather", {"city": city}, {"sky": "sunny"})  # an instrumented tool, too
    return {"sky": "sunny"}


def test_what_the_agent_recorded_itself_is_not_counted_twice(
    no_provider: None, store: Path
) -> None:
    def agent(city: str) -> str:
        get_weather(city)
        agenteval.record_model_call("own-model", input_tokens=5, output_tokens=1)
        _chat(99)
        return f"sunny in {city}"

    run = agenteval.evaluate(agent, CASES[:2], store=store)
    for result in run.results:
        assert len(result.trial.tool_calls) == 1
        assert [m.model for m in result.trial.model_calls] == ["own-model"]


def test_a_returned_trials_model_calls_win_over_the_spans_of_the_same_calls(
    no_provider: None, store: Path
) -> None:
    # An instrumented agent that also returns its own record of its model calls: the spans
    # describe the same calls, so they add none (before, tokens and cost counted twice).
    def agent(city: str) -> agenteval.Trial:
        _chat(7)
        _chat(8)
        own = [
            ModelCall(model="sim-1", usage=Usage(input_tokens=tokens, output_tokens=1))
            for tokens in (7, 8)
        ]
        return agenteval.Trial(output=f"sunny in {city}", model_calls=own)

    run = agenteval.evaluate(agent, CASES[:2], store=store)
    for result in run.results:
        assert [m.usage.input_tokens for m in result.trial.model_calls] == [7, 8]
        assert result.trial.usage.input_tokens == 15
        assert result.trial.usage.output_tokens == 2


def test_a_returned_trials_model_calls_are_metered_though_its_spans_are_not(
    no_provider: None, store: Path
) -> None:
    # Spans with no token count (a streamed call without include_usage) say the usage is
    # unknown; but they give way to the calls the agent returned, which count their tokens.
    def agent(city: str) -> agenteval.Trial:
        with _tracer().start_as_current_span(
            "chat sim", attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "s"}
        ):
            pass
        own = [ModelCall(model="sim-1", usage=Usage(input_tokens=7, output_tokens=1))]
        return agenteval.Trial(output=f"sunny in {city}", model_calls=own)

    [result] = agenteval.evaluate(agent, CASES[:1], store=store).results
    assert [m.usage_recorded for m in result.trial.model_calls] == [True]
    assert "usage" not in result.trial.not_recorded
    assert result.trial.usage.input_tokens == 7


def test_a_failed_trial_keeps_the_tool_calls_its_spans_recorded(
    no_provider: None, store: Path
) -> None:
    def agent(city: str) -> str:
        _tool("get_weather", {"city": city}, {"sky": "sunny"})
        raise ValueError("the model went away")

    run = agenteval.evaluate(agent, CASES[:1], store=store, retries=0)
    [result] = run.results
    assert result.trial.failure is not None
    assert result.trial.failure.cause is FailureCause.AGENT_ERROR
    assert [c.name for c in result.trial.tool_calls] == ["get_weather"]


def test_spans_ending_after_a_timeout_are_dropped_and_nothing_leaks(
    no_provider: None, store: Path
) -> None:
    release = threading.Event()

    def agent(city: str) -> str:
        _tool("early", {}, None)
        with _tracer().start_as_current_span(
            "execute_tool late",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "late"},
        ):
            release.wait(5)
        return "late"

    run = agenteval.evaluate(agent, CASES[:2], store=store, timeout=0.2, retries=0)
    release.set()
    time.sleep(0.1)  # the abandoned threads end their spans now, after their trials
    for result in run.results:
        assert result.trial.failure is not None
        assert result.trial.failure.cause is FailureCause.TIMEOUT
        assert [c.name for c in result.trial.tool_calls] == ["early"]
    assert router._by_span == {}
    assert router._by_trace == {}


def test_backoff_between_a_refused_model_call_and_its_retry_is_left_out_of_working_latency(
    no_provider: None, store: Path
) -> None:
    def agent(city: str) -> str:
        with _tracer().start_as_current_span(
            "chat sim",
            attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "sim-1"},
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            span.set_attribute("error.type", "429")
            span.set_status(Status(StatusCode.ERROR, "rate limited"))
        time.sleep(0.3)  # the SDK's backoff: no span, just time
        _chat(10)
        return f"sunny in {city}"

    run = agenteval.evaluate(agent, CASES[:1], store=store)
    [result] = run.results
    trial = result.trial
    assert trial.retries == {"rate_limited": 1}
    assert trial.latency_s is not None and trial.working_latency_s is not None
    assert trial.latency_s >= 0.3
    assert trial.latency_s - trial.working_latency_s >= 0.25


def test_otel_sdk_disabled_captures_nothing(
    no_provider: None, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    run = agenteval.evaluate(async_agent, CASES[:1], store=store)
    assert run.results[0].trial.tool_calls == []
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def test_a_provider_that_takes_no_processor_is_named_once(
    no_provider: None, store: Path, caplog: pytest.LogCaptureFixture
) -> None:
    trace.set_tracer_provider(trace.NoOpTracerProvider())
    live._warned.clear()
    agenteval.evaluate(async_agent, CASES[:2], store=store)
    warnings = [r for r in caplog.records if "takes no span processor" in r.getMessage()]
    assert len(warnings) == 1


@pytest.fixture
def nested_run_span(no_provider: None) -> Iterator[trace.Span]:
    tracer = TracerProvider().get_tracer("outer")
    with tracer.start_as_current_span("ci job") as span:
        yield span


def test_trials_run_inside_a_span_are_still_traces_of_their_own(
    nested_run_span: trace.Span, store: Path
) -> None:
    run = agenteval.evaluate(async_agent, CASES, trials=2, concurrency=12, store=store)
    _check_own_trials(run, trials=2)
