"""The OpenAI Agents SDK adapter on one case at a time: what a real `Agent` on a Chat Completions
model (the loopback server) records, read into a trial; the SDK objects it refuses; and that
no run of agenteval's reaches the SDK's tracing (which exports to OpenAI's servers)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from agents.realtime import RealtimeAgent
from agents.tracing import TracingProcessor
from agents.tracing.processors import default_processor

from agenteval import EvalCase
from agenteval.agents.frameworks import as_framework_agent
from agenteval.agents.frameworks.openai_agents import OpenAIAgentsAgent, TurnLimitError
from agenteval.agents.recorder import TrialRecorder, recording
from agenteval.case import Invocation, Message
from agenteval.errors import AgentLoadError
from agenteval.trace import FailureCause, Trial
from agents import Agent, RunConfig, Runner, set_trace_processors

from . import scripted
from .loopback import REQUEST_MODEL, ScriptedServer, usage


async def run(agent: Any, case: EvalCase, **options: Any) -> Trial:
    return await OpenAIAgentsAgent(agent, **options).run_case(case)


def calls(trial: Trial) -> list[tuple[str, dict[str, Any], Any, str | None, str | None]]:
    return [(c.name, c.arguments, c.result, c.error, c.id) for c in trial.tool_calls]


async def test_parallel_tool_calls_pair_with_their_outputs_and_usage_is_per_request(
    server: ScriptedServer,
) -> None:
    trial = await run(scripted.weather_agent(server.base_url), EvalCase(input="Paris? #11"))
    assert trial.output == "It is sunny, 18 C, and 12:00 in Paris (#11)."
    assert calls(trial) == [
        ("get_weather", {"city": "Paris"}, "sunny, 18 C", None, "call_11_weather"),
        ("get_time", {"tz": "CET"}, "12:00", None, "call_11_time"),
    ]
    assert trial.node_visits == ["weather"]
    assert [(c.model, c.usage.input_tokens, c.usage.output_tokens) for c in trial.model_calls] == [
        (REQUEST_MODEL, *usage(0)[:2]),
        (REQUEST_MODEL, *usage(1)[:2]),
    ]
    assert [(c.usage.cached_tokens, c.usage.reasoning_tokens) for c in trial.model_calls] == [
        usage(0)[2:],
        usage(1)[2:],
    ]
    assert trial.failure is None
    assert "turn_outputs" not in trial.metadata


async def test_a_tool_that_raises_is_the_calls_error_and_the_model_goes_on(
    server: ScriptedServer,
) -> None:
    trial = await run(scripted.weather_agent(server.base_url), EvalCase(input="Atlantis #12"))
    assert calls(trial) == [
        (
            "get_weather",
            {"city": "Atlantis"},
            None,
            "ValueError: unknown city: Atlantis",
            "call_12_weather",
        )
    ]
    assert trial.output == "I could not find Atlantis (#12)."
    # The model saw the SDK's own message, not the error: agenteval changed nothing it sent.
    tool_messages = [
        m["content"]
        for body in server.requests
        for m in body["messages"]
        if m.get("tool_call_id") == "call_12_weather"
    ]
    assert tool_messages and all("unknown city" not in text for text in tool_messages)


async def test_a_users_tool_error_formatter_still_decides_what_the_model_sees(
    server: ScriptedServer,
) -> None:
    config = RunConfig(tool_error_formatter=lambda args: f"formatted: {args.error}")
    trial = await run(
        scripted.weather_agent(server.base_url), EvalCase(input="Atlantis #13"), run_config=config
    )
    assert trial.tool_calls[0].error == "ValueError: unknown city: Atlantis"
    seen = [
        m["content"]
        for body in server.requests
        for m in body["messages"]
        if m.get("tool_call_id") == "call_13_weather"
    ]
    assert seen and seen[0] == "formatted: unknown city: Atlantis"
    assert config.tracing_disabled is False  # the user's own config is left as it was


async def test_a_tool_error_that_propagates_fails_the_trial_and_keeps_the_calls(
    server: ScriptedServer,
) -> None:
    recorder = TrialRecorder()
    with recording(recorder), pytest.raises(Exception, match="the tool blew up"):
        await run(scripted.weather_agent(server.base_url), EvalCase(input="explode #14"))
    assert [(c.name, c.id, c.error) for c in recorder.tool_calls] == [
        ("explode", "call_14_explode", "RuntimeError: the tool blew up")
    ]
    assert len(recorder.model_calls) == 1
    assert recorder.node_visits == ["weather"]


async def test_a_handoff_is_a_node_visit_and_the_target_agents_tools_are_known(
    server: ScriptedServer,
) -> None:
    agent = scripted.triage_agent(server.base_url)
    adapter = OpenAIAgentsAgent.of(agent)
    assert set(adapter.tool_specs()) == {"refund_order"}
    spec = adapter.tool_specs()["refund_order"]
    assert spec.parameters["properties"].keys() == {"order_id", "amount"}
    assert spec.parameters["required"] == ["order_id", "amount"]
    trial = await adapter.run_case(EvalCase(input="A refund please #15"))
    assert trial.node_visits == ["triage", "refunds"]
    assert calls(trial) == [
        (
            "refund_order",
            {"order_id": "A15", "amount": 12.5},
            {"order_id": "A15", "refunded": 12.5},
            None,
            "call_15_refund",
        )
    ]
    assert trial.output == "Refunded 12.50 on order A15."
    assert len(trial.model_calls) == 3  # triage, then refunds twice
    assert trial.tool_specs == adapter.tool_specs()


async def test_an_input_guardrail_trip_is_a_recorded_outcome_without_an_answer(
    server: ScriptedServer,
) -> None:
    trial = await run(scripted.triage_agent(server.base_url), EvalCase(input="my password? #16"))
    assert trial.output is None
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.AGENT_ERROR
    assert trial.failure.error_type == "InputGuardrailTripwireTriggered"
    assert "input guardrail 'no_passwords' tripped" in trial.failure.message
    assert trial.metadata["guardrail"] == {
        "kind": "input",
        "name": "no_passwords",
        "output_info": {"asked_for_password": True},
    }


async def test_an_output_guardrail_trip_keeps_the_model_call_and_not_the_blocked_answer(
    server: ScriptedServer,
) -> None:
    trial = await run(scripted.weather_agent(server.base_url), EvalCase(input="a secret #17"))
    assert trial.output is None
    assert trial.failure is not None
    assert trial.failure.error_type == "OutputGuardrailTripwireTriggered"
    assert trial.metadata["guardrail"]["name"] == "no_secrets"
    assert trial.metadata["guardrail"]["kind"] == "output"
    assert len(trial.model_calls) == 1
    assert "1234" not in json.dumps(trial.model_dump(mode="json"))


async def test_a_structured_output_is_its_json_text(server: ScriptedServer) -> None:
    trial = await run(scripted.forecaster_agent(server.base_url), EvalCase(input="forecast"))
    assert trial.output is not None
    assert json.loads(trial.output) == {"city": "Paris", "celsius": 18}


async def test_running_out_of_turns_is_the_trials_failure_naming_the_limit(
    server: ScriptedServer,
) -> None:
    recorder = TrialRecorder()
    with recording(recorder), pytest.raises(TurnLimitError, match="all 3 turns") as caught:
        await run(scripted.weather_agent(server.base_url), EvalCase(input="loop #18"), max_turns=3)
    assert "max_turns=" in str(caught.value)
    assert [c.name for c in recorder.tool_calls] == ["get_time"] * 3
    assert all(c.result == "12:00" for c in recorder.tool_calls)


async def test_a_conversation_runs_each_turn_on_the_previous_turns_items(
    server: ScriptedServer,
) -> None:
    case = EvalCase(
        conversation=[
            Invocation(input="hello #19"),
            Invocation(input="A refund please #19"),
            Invocation(input="thanks #19"),
        ]
    )
    trial = await run(scripted.triage_agent(server.base_url), case)
    assert trial.metadata["turn_outputs"] == [
        "How can I help? (#19)",
        "Refunded 12.50 on order A19.",
        "You are welcome (#19).",
    ]
    assert [[c.name for c in step.tool_calls] for step in trial.steps] == [[], ["refund_order"], []]
    assert trial.output == "You are welcome (#19)."
    assert trial.node_visits == ["triage", "refunds"]  # the third turn stays with refunds
    last = next(
        body["messages"]
        for body in reversed(server.requests)
        if any("thanks #19" in str(m.get("content")) for m in body["messages"])
    )
    said = [str(m.get("content")) for m in last]
    assert "[agent:refunds] Refund orders." in said[0]
    assert "hello #19" in said and "How can I help? (#19)" in said
    assert "A refund please #19" in said and "Refunded 12.50 on order A19." in said


async def test_a_list_of_messages_becomes_the_runs_input_items(server: ScriptedServer) -> None:
    case = EvalCase(
        input=[
            Message(role="user", content="hello #20"),
            Message(role="assistant", content="Hello there."),
            Message(role="user", content="Paris? #20"),
        ]
    )
    trial = await run(scripted.weather_agent(server.base_url), case)
    assert trial.output == "It is sunny, 18 C, and 12:00 in Paris (#20)."
    assert len(trial.steps) == 1
    first = next(
        body["messages"]
        for body in server.requests
        if any("Paris? #20" in str(m.get("content")) for m in body["messages"])
    )
    assert [(m["role"], m["content"]) for m in first[1:]] == [
        ("user", "hello #20"),
        ("assistant", "Hello there."),
        ("user", "Paris? #20"),
    ]


async def test_a_message_of_a_role_the_sdk_cannot_take_is_refused(server: ScriptedServer) -> None:
    case = EvalCase(
        input=[Message(role="tool", content="42"), Message(role="user", content="hello")]
    )
    with pytest.raises(ValueError, match="role 'tool'"):
        await run(scripted.weather_agent(server.base_url), case)


async def test_each_trial_gets_a_fresh_context_from_its_factory(server: ScriptedServer) -> None:
    made: list[dict[str, int]] = []

    def context() -> dict[str, int]:
        made.append({})
        return made[-1]

    adapter = OpenAIAgentsAgent(scripted.weather_agent(server.base_url), context=context)
    await adapter.run_case(EvalCase(input="hello #21"))
    await adapter.run_case(EvalCase(conversation=[Invocation(input="a"), Invocation(input="b")]))
    assert len(made) == 2 and made[0] is not made[1]


def test_sdk_objects_that_are_not_runnable_agents_are_refused() -> None:
    voice = RealtimeAgent(name="voice")
    with pytest.raises(AgentLoadError) as caught:
        as_framework_agent(voice)
    assert "RealtimeAgent 'voice'" in caught.value.message
    assert "agents.Agent" in (caught.value.hint or "")
    with pytest.raises(AgentLoadError):
        OpenAIAgentsAgent.of(scripted.get_weather)


def test_an_agent_is_detected_and_named_by_its_name(server: ScriptedServer) -> None:
    adapter = as_framework_agent(scripted.weather_agent(server.base_url))
    assert isinstance(adapter, OpenAIAgentsAgent)
    assert adapter.reference == "openai-agents:weather"
    assert set(adapter.tool_specs()) == {"get_weather", "get_time", "explode"}
    assert adapter.tool_specs()["get_weather"].description == "Today's weather in a city."


class _Seen(TracingProcessor):
    """A tracing processor that only counts what reaches it (nothing leaves the process)."""

    def __init__(self) -> None:
        self.traces: list[Any] = []
        self.spans: list[Any] = []

    def on_trace_start(self, trace: Any) -> None:
        self.traces.append(trace)

    def on_trace_end(self, trace: Any) -> None:
        pass

    def on_span_start(self, span: Any) -> None:
        self.spans.append(span)

    def on_span_end(self, span: Any) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def force_flush(self) -> None:
        pass


@pytest.fixture
def seen() -> Iterator[_Seen]:
    """The SDK's tracing sent to a counter instead of OpenAI's exporter, for one test."""
    processor = _Seen()
    set_trace_processors([processor])
    try:
        yield processor
    finally:
        set_trace_processors([default_processor()])


async def test_no_trace_of_agentevals_runs_reaches_the_sdks_tracing(
    server: ScriptedServer, seen: _Seen
) -> None:
    agent = scripted.triage_agent(server.base_url)
    await run(agent, EvalCase(input="A refund please #22"))
    await run(agent, EvalCase(input="my password #22"))
    assert seen.traces == [] and seen.spans == []
    # The same run made by the user, tracing on, is traced: the counter does see traces.
    await Runner.run(agent, "A refund please #22")
    assert seen.traces and seen.spans


def test_the_agent_must_be_an_agent_instance_not_its_class() -> None:
    assert as_framework_agent(Agent) is None


async def test_a_handoff_objects_target_adds_its_tools_when_it_runs(
    server: ScriptedServer,
) -> None:
    from agents import handoff

    triage = scripted.triage_agent(server.base_url)
    (refunds,) = triage.handoffs
    triage = triage.clone(handoffs=[handoff(refunds)])
    adapter = OpenAIAgentsAgent.of(triage)
    assert adapter.tool_specs() == {}  # the SDK keeps a handoff()'s target to itself
    trial = await adapter.run_case(EvalCase(input="A refund please #23"))
    assert trial.node_visits == ["triage", "refunds"]
    assert set(trial.tool_specs) == {"refund_order"}
    assert trial.tool_specs["refund_order"].parameters["required"] == ["order_id", "amount"]
