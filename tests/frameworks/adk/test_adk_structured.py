"""An ADK agent with an `output_schema` and tools answers through ADK's `set_model_response`
tool, whose response is the structured answer itself. The call stays in the trial (ADK's own
eval sets list it among the tool uses), but its response is no tool's result: read as one,
every number of the answer would be "found in a tool result", and `tool_faithfulness` would
pass an answer the tools never supported."""

from __future__ import annotations

import json
from pathlib import Path

from google.adk.agents import LlmAgent
from pydantic import BaseModel
from tests.frameworks.adk.scripted import ScriptedModel, station_weather

import agenteval
from agenteval.case import EvalCase


class Forecast(BaseModel):
    city: str
    celsius: int


def forecaster(celsius: int) -> LlmAgent:
    """Looks the weather up (21 C in Paris), then answers `celsius` as its structured output."""
    answer = {"city": "Paris", "celsius": celsius}
    script = {
        "weather Paris": [
            [("station_weather", {"city": "Paris"})],
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


def test_the_structured_answer_is_not_its_own_tool_result(tmp_path: Path) -> None:
    case = EvalCase(id="paris", input="weather Paris")
    scores = {}
    for celsius in (21, 12):
        (result,) = agenteval.evaluate(
            forecaster(celsius),
            [case],
            store=tmp_path / f"runs-{celsius}.db",
            scorers=["tool_faithfulness", "tool_execution"],
        ).results
        trial = result.trial
        assert json.loads(trial.output or "") == {"city": "Paris", "celsius": celsius}
        assert [(c.name, c.arguments, c.result) for c in trial.tool_calls] == [
            ("station_weather", {"city": "Paris"}, {"city": "Paris", "celsius": 21, "days": 1}),
            ("set_model_response", {"city": "Paris", "celsius": celsius}, None),
        ]
        assert result.scores["tool_execution"].passed is True
        scores[celsius] = result.scores["tool_faithfulness"].passed
    # 21 came from the weather station; 12 from nowhere.
    assert scores == {21: True, 12: False}
