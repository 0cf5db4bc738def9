"""An instrumented pydantic-ai agent (its OpenTelemetry spans on, as `tests/otel` runs it) run as
a framework agent: live span capture reads the same calls from the spans, and the adapter's
record must win, never adding them twice."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent
from tests.frameworks.pydantic_ai.scripted import MODEL, weather_agent
from tests.otel.conftest import no_provider, user_exporter  # noqa: F401 - fixtures

import agenteval
from agenteval import EvalCase

CITIES = ["Paris", "Rome", "Oslo"]


@pytest.fixture
def instrumented() -> Iterator[None]:
    Agent.instrument_all()
    yield
    Agent.instrument_all(False)


def _check(run: agenteval.Run) -> None:
    for result in run.results:
        city = result.case.id
        trial = result.trial
        assert [(c.name, c.arguments) for c in trial.tool_calls] == [
            ("get_weather", {"city": city.lower()}),
            ("get_weather", {"city": city}),
        ], city
        assert [c.model for c in trial.model_calls] == [MODEL] * 3, city
        assert trial.usage.input_tokens == 100 + 110 + 120
        assert trial.usage.output_tokens == 5 + 6 + 7
        assert trial.retries == {"tool_retry": 1}
        assert trial.node_visits == ["weather"]
        assert trial.not_recorded == {}
        assert trial.trace_id is not None  # the spans were captured for this trial


def test_an_instrumented_agent_records_each_call_once(
    user_exporter: InMemorySpanExporter,  # noqa: F811 - a fixture
    instrumented: None,
    tmp_path: Path,
) -> None:
    cases = [EvalCase(id=city, input=f"Weather in {city.lower()}?") for city in CITIES]
    run = agenteval.evaluate(
        weather_agent(), cases, store=tmp_path / "runs.db", trials=2, concurrency=8
    )
    _check(run)
    # The spans were there to be read: pydantic-ai's model and tool spans, for every trial.
    names = [span.name for span in user_exporter.get_finished_spans()]
    assert names.count("execute_tool get_weather") == 2 * 2 * len(CITIES)


def test_a_failed_run_of_an_instrumented_agent_keeps_its_calls_once(
    user_exporter: InMemorySpanExporter,  # noqa: F811 - a fixture
    instrumented: None,
    tmp_path: Path,
) -> None:
    cases = [EvalCase(id=city, input=f"crash: weather in {city}?") for city in CITIES]
    run = agenteval.evaluate(weather_agent(), cases, store=tmp_path / "runs.db", concurrency=8)
    for result in run.results:
        trial = result.trial
        assert trial.failure is not None
        assert trial.failure.message == "the forecast service is down"
        assert [c.name for c in trial.tool_calls] == ["get_weather", "explode"]
        assert [c.model for c in trial.model_calls] == [MODEL, MODEL]
        assert trial.usage.input_tokens == 100 + 110


def test_with_no_provider_of_the_users_the_record_is_the_same(
    no_provider: None,  # noqa: F811 - a fixture
    instrumented: None,
    tmp_path: Path,
) -> None:
    cases = [EvalCase(id=city, input=f"Weather in {city.lower()}?") for city in CITIES]
    run = agenteval.evaluate(weather_agent(), cases, store=tmp_path / "runs.db", concurrency=8)
    _check(run)
