"""The efficiency metrics of a real ADK `LlmAgent` (a scripted `BaseLlm`, parallel tool calls,
two turns) run through agenteval's ADK adapter, against ADK 2.13's own evaluators over the
invocations ADK's `EvaluationGenerator` makes of the same agent's session events.

Needs the ADK adapter (`agenteval.agents.frameworks.adk`) and its test helpers
(`tests/frameworks/adk/scripted.py`), which come from the `adk` branch: skipped without them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agenteval import EvalCase, Invocation
from agenteval.evalset import AgentEvaluator, EvalConfig
from agenteval.scorers.reported import reported_value

from .test_efficiency import _adk_evaluator

pytest.importorskip("agenteval.agents.frameworks.adk")
scripted = pytest.importorskip("tests.frameworks.adk.scripted")

PARIS_ROME = "Weather in Paris and Rome?"
REMEMBER = "Remember Paris"
SCRIPT: dict[str, list[Any]] = {
    PARIS_ROME: [
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
        "Paris 21, Rome 14.",
    ],
    REMEMBER: [[("remember", {"topic": "Paris"})], "Done."],
}
COUNTED = ("tool_call_count_v1", "inference_call_count_v1", "token_usage_v1")


async def _adk_invocations(agent: Any) -> list[Any]:
    """The two turns run by ADK's own runner, as ADK's evaluation makes invocations of them."""
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    service = InMemorySessionService()
    runner = Runner(agent=agent, app_name="app", session_service=service)
    session = await service.create_session(app_name="app", user_id="user")
    for text in (PARIS_ROME, REMEMBER):
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id="user", session_id=session.id, new_message=message):
            pass
    ended = await service.get_session(app_name="app", user_id="user", session_id=session.id)
    assert ended is not None
    return EvaluationGenerator.convert_events_to_eval_invocations(ended.events)


async def test_an_adk_agents_efficiency_as_adk_measures_it(tmp_path: Path) -> None:
    agent = scripted.weather_agent(SCRIPT, usage=(100, 20, 10, 5))
    case = EvalCase(
        id="paris", conversation=[Invocation(input=PARIS_ROME), Invocation(input=REMEMBER)]
    )
    config = EvalConfig.from_adk({"criteria": {}}, report_efficiency=True)
    evaluator = AgentEvaluator(agent, config, store=tmp_path / "runs.db", trials=2, concurrency=8)
    # No criteria: only the efficiency metrics, which ADK reports on every eval.
    report = await evaluator.evaluate([case])
    invocations = await _adk_invocations(agent)
    for name in COUNTED:
        adk = _adk_evaluator(name).evaluate_invocations(invocations).overall_score
        for result in report.results:
            assert reported_value(result.criterion_results[name]) == pytest.approx(adk), name
    # By hand: 3 tool calls and 4 model calls (2 a turn) in 2 turns.
    [first, _] = report.results
    assert reported_value(first.criterion_results["tool_call_count_v1"]) == 1.5
    assert reported_value(first.criterion_results["inference_call_count_v1"]) == 2.0
    # Each call: 100 prompt + 20 candidates + 5 thoughts = 125 tokens; 4 calls over 2 turns.
    assert reported_value(first.criterion_results["token_usage_v1"]) == 250.0
    assert first.criterion_results["tool_call_count_v1"].details["per_turn"] == [2, 1]
