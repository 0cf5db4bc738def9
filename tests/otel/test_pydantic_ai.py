"""Live capture and offline scoring with a real agent framework: pydantic-ai, instrumented
with `Agent.instrument_all()`, its model a scripted `FunctionModel` (offline)."""

from __future__ import annotations

import asyncio
import io
import random
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from opentelemetry import trace
from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.usage import RequestUsage

import agenteval
from agenteval import EvalCase
from agenteval.otel.scoring import score_traces_async

CITIES = ["Paris", "Rome", "Oslo", "Lisbon", "Porto", "Atlantis"]
CASES = [
    EvalCase(
        id=city.lower(),
        input=f"What is the weather in {city}?",
        expected_output=f"It is sunny in {city}.",
        expected_tools=["get_weather"],
    )
    for city in CITIES
]


async def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Call get_weather for the city asked about, then answer with what it returned."""
    await asyncio.sleep(random.uniform(0, 0.01))  # let concurrent trials interleave
    last = messages[-1].parts[-1]
    if isinstance(last, ToolReturnPart):
        return ModelResponse(
            parts=[TextPart(f"It is {last.content}.")],
            usage=RequestUsage(input_tokens=40, output_tokens=6, cache_read_tokens=8),
        )
    if isinstance(last, RetryPromptPart):
        return ModelResponse(parts=[TextPart("I could not find it.")])
    city = str(getattr(last, "content", "")).rsplit(" ", 1)[-1].rstrip("?")
    return ModelResponse(
        parts=[ToolCallPart("get_weather", {"city": city}, tool_call_id=f"call-{city}")],
        usage=RequestUsage(input_tokens=20, output_tokens=4),
    )


def make_agent() -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(scripted_model), name="weather")

    @agent.tool_plain
    async def get_weather(city: str) -> str:
        """Today's weather in a city."""
        await asyncio.sleep(random.uniform(0, 0.005))
        if city == "Atlantis":
            raise ModelRetry("unknown city")
        return f"sunny in {city}"

    return agent


@pytest.fixture
def instrumented() -> Iterator[None]:
    Agent.instrument_all()
    yield
    Agent.instrument_all(False)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


def _check(run: agenteval.Run, trials: int) -> None:
    assert len(run.results) == len(CASES) * trials
    for result in run.results:
        city = CITIES[[c.id for c in CASES].index(result.case.id)]
        trial = result.trial
        assert [(c.name, c.arguments, c.id) for c in trial.tool_calls] == [
            ("get_weather", {"city": city}, f"call-{city}")
        ], result.case.id
        assert trial.node_visits == ["weather"]
        assert len(trial.model_calls) == 2
        assert trial.model_calls[0].model == "function:scripted_model:"
        if city == "Atlantis":
            assert trial.tool_calls[0].error is not None
            assert "unknown city" in str(trial.tool_calls[0].result or trial.tool_calls[0].error)
            assert result.scores["tool_execution"].passed is False
        else:
            assert trial.tool_calls[0].error is None
            assert trial.tool_calls[0].result == f"sunny in {city}"
            assert trial.usage.input_tokens == 60
            assert trial.usage.cached_tokens == 8
            assert result.scores["exact_match"].passed is True
        assert result.scores["tool_selection"].passed is True


def test_concurrent_trials_of_an_instrumented_agent_each_get_their_own_spans(
    no_provider: None, instrumented: None, store: Path
) -> None:
    agent = make_agent()

    async def answer(question: str) -> str:
        return (await agent.run(question)).output

    run = agenteval.evaluate(answer, CASES, trials=3, concurrency=12, store=store)
    _check(run, trials=3)


def test_a_sync_agent_calling_run_sync_in_its_thread(
    no_provider: None, instrumented: None, store: Path
) -> None:
    agent = make_agent()

    def answer(question: str) -> str:
        return agent.run_sync(question).output

    run = agenteval.evaluate(answer, CASES, trials=2, concurrency=6, store=store)
    _check(run, trials=2)


def test_the_older_pydantic_ai_span_format_reads_the_same(no_provider: None, store: Path) -> None:
    """pydantic-ai's first span format: `agent run`, `running tool` with `tool_arguments`
    and `tool_response`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated, and still what older releases emit
        settings = InstrumentationSettings(version=2)
    Agent.instrument_all(settings)
    try:
        agent = make_agent()

        async def answer(question: str) -> str:
            return (await agent.run(question)).output

        run = agenteval.evaluate(answer, CASES, trials=2, concurrency=6, store=store)
    finally:
        Agent.instrument_all(False)
    _check(run, trials=2)


def test_the_users_exporter_keeps_receiving_pydantic_ai_spans(
    user_exporter: InMemorySpanExporter, instrumented: None, store: Path
) -> None:
    agent = make_agent()

    async def answer(question: str) -> str:
        return (await agent.run(question)).output

    run = agenteval.evaluate(answer, CASES, trials=1, concurrency=6, store=store)
    _check(run, trials=1)
    names = [s.name for s in user_exporter.get_finished_spans()]
    assert names.count("invoke_agent weather") == len(CASES)
    assert names.count("execute_tool get_weather") == len(CASES)


async def test_traces_exported_as_otlp_json_score_offline_like_the_live_run(
    user_exporter: InMemorySpanExporter, instrumented: None, tmp_path: Path
) -> None:
    """Record with the user's own OTLP JSON file exporter during a live run, then score the
    file with no agent: the same trials, matched by the case id agenteval put on each root."""
    stream = io.StringIO()
    provider: Any = trace.get_tracer_provider()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(stream=stream)))
    agent = make_agent()

    async def answer(question: str) -> str:
        return (await agent.run(question)).output

    live_run = await agenteval.evaluate_async(
        answer, CASES, trials=2, concurrency=6, store=tmp_path / "live.db"
    )
    traces = tmp_path / "traces.jsonl"
    traces.write_text(stream.getvalue())
    offline = await score_traces_async(traces, CASES, store=tmp_path / "offline.db")
    _check(offline, trials=2)
    live_calls = sorted(
        (
            r.case.id,
            [c.model_dump(exclude={"started_at", "duration_s"}) for c in r.trial.tool_calls],
        )
        for r in live_run.results
    )
    offline_calls = sorted(
        (
            r.case.id,
            [c.model_dump(exclude={"started_at", "duration_s"}) for c in r.trial.tool_calls],
        )
        for r in offline.results
    )
    assert live_calls == offline_calls
    assert offline.summary.scorers["exact_match"].pass_rate == pytest.approx(5 / 6)
    # The tools offered to the model come with the traces: arguments are checked against them.
    assert "get_weather" in offline.info.tools
    assert offline.results[0].scores["tool_arguments_valid"].value is not None
