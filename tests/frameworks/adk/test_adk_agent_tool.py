"""An ADK agent used as a tool (`AgentTool`) runs in a runner and session of its own: its events
never reach the trial's session, but its model calls are the trial's spending. ADK hands the
runner's plugins on to it, so agenteval's plugin counts them (priced by that agent's model);
the agent tool stays one call of the trial, and the trial's own model calls count once."""

from __future__ import annotations

from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool
from tests.frameworks.adk.scripted import ScriptedModel, station_weather

import agenteval
from agenteval.case import EvalCase


def root_with_helper_tool() -> LlmAgent:
    helper_script = {"Paris?": [[("station_weather", {"city": "Paris"})], "21 C in Paris"]}
    helper = LlmAgent(
        name="helper",
        description="Looks the weather up.",
        model=ScriptedModel(model="scripted-helper", script=helper_script, usage=(50, 5, 0, 0)),
        tools=[station_weather],
    )
    script = {"weather Paris": [[("helper", {"request": "Paris?"})], "It is 21 C."]}
    return LlmAgent(name="root", model=ScriptedModel(script=script), tools=[AgentTool(helper)])


def test_an_agent_tools_model_calls_are_the_trials_spending(tmp_path: Path) -> None:
    case = EvalCase(id="paris", input="weather Paris")
    (result,) = agenteval.evaluate(root_with_helper_tool(), [case], store=tmp_path / "r.db").results
    trial = result.trial
    assert trial.output == "It is 21 C."
    assert [(c.name, c.arguments, c.result) for c in trial.tool_calls] == [
        ("helper", {"request": "Paris?"}, {"result": "21 C in Paris"})
    ]
    assert sorted((c.model, c.usage.input_tokens) for c in trial.model_calls) == [
        ("scripted-gemini", 100),
        ("scripted-gemini", 100),
        ("scripted-helper", 50),
        ("scripted-helper", 50),
    ]
