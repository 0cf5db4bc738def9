"""Google ADK's own spans, from a real ADK run on a scripted model, read as a trace (live, or
by `agenteval score`), under ADK 2's default telemetry schema:

- parallel calls each have a tool span, and one more, `(merged tools)`, which is no call;
- with no content capture, its tool spans name the tool and the call id but not the arguments:
  the trial says so (`not_recorded["tool_arguments"]`, with the setting that records them)
  instead of scoring `{}` as what the tool was called with;
- with content (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`), an agent with an
  `output_schema` and tools answers through `set_model_response`, whose response is the answer
  itself: the answer is that response (not "no answer"), and the call keeps no result, so
  `tool_faithfulness` does not find the answer in itself.

ADK's tracer binds to the first TracerProvider it sees, so one test makes every run."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel
from tests.frameworks.adk.scripted import ScriptedModel, station_weather

from agenteval import EvalCase
from agenteval.agents.frameworks.adk import AdkAgent
from agenteval.otel import read_spans
from agenteval.otel.routing import span_record
from agenteval.scorers.grounding import ToolFaithfulness
from agenteval.scorers.recorded import declared_reads, unrecorded
from agenteval.scorers.tools.habits import RedundantCalls
from agenteval.trace import Trial

CASE = EvalCase(id="paris", input="weather Paris")


class Forecast(BaseModel):
    city: str
    celsius: int


def forecaster(celsius: int) -> LlmAgent:
    """Looks the weather up (21 C in Paris, then Oslo), then answers `celsius` for Paris."""
    answer = {"city": "Paris", "celsius": celsius}
    script = {
        "weather Paris": [
            [("station_weather", {"city": "Paris"}), ("station_weather", {"city": "Oslo"})],
            [("set_model_response", answer)],
            "done",
        ]
    }
    return LlmAgent(
        name="forecaster",
        model=ScriptedModel(script=script),
        instruction="Give the forecast.",
        tools=[station_weather],
        output_schema=Forecast,
    )


def _traced(exporter: InMemorySpanExporter, celsius: int) -> Trial:
    exporter.clear()
    asyncio.run(AdkAgent(forecaster(celsius)).run_case(CASE))
    return read_spans([span_record(s) for s in exporter.get_finished_spans()]).trial()


def test_adks_own_spans_with_and_without_content(
    user_exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    bare = _traced(user_exporter, 21)
    # ADK's `(merged tools)` span beside parallel calls' own spans is no call.
    names = ["station_weather", "station_weather", "set_model_response"]
    assert [c.name for c in bare.tool_calls] == names
    why = bare.not_recorded.get("tool_arguments", "")
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY" in why
    # Not "the same call twice": what each was called with is unknown.
    skipped = unrecorded("redundant_calls", declared_reads(RedundantCalls()), bare)
    assert skipped is not None and skipped.passed is None

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    for celsius in (21, 12):
        trial = _traced(user_exporter, celsius)
        assert trial.not_recorded == {}
        assert trial.failure is None
        assert json.loads(trial.output or "") == {"city": "Paris", "celsius": celsius}
        assert [(c.name, c.arguments, c.result) for c in trial.tool_calls] == [
            ("station_weather", {"city": "Paris"}, {"city": "Paris", "celsius": 21, "days": 1}),
            ("station_weather", {"city": "Oslo"}, {"city": "Oslo", "celsius": 14, "days": 1}),
            ("set_model_response", {"city": "Paris", "celsius": celsius}, None),
        ]
        # 21 came from the weather station; 12 from nowhere.
        assert ToolFaithfulness()(CASE, trial).passed is (celsius == 21)
