"""A Google ADK agent run by agenteval: real ADK agents and runners on a scripted `BaseLlm`, driven
through `agenteval.evaluate`, and what the store keeps checked against what ADK's own session
events say."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import BaseAgent, LlmAgent, SequentialAgent
from google.adk.apps import App
from google.adk.events import Event
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools import FunctionTool
from google.adk.tools.base_toolset import BaseToolset
from google.genai import errors as genai_errors
from google.genai import types
from tests.frameworks.adk.scripted import ScriptedModel, station_weather, team, weather_agent

import agenteval
from agenteval.agents.frameworks import adk as adk_adapter
from agenteval.agents.frameworks import as_framework_agent
from agenteval.agents.frameworks.adk import AdkAgent
from agenteval.case import EvalCase, Invocation, Message
from agenteval.errors import AgentLoadError
from agenteval.evalset.session import final_session_state_match
from agenteval.pricing import ModelPrice, PriceTable
from agenteval.records import TrialResult
from agenteval.store import RunStore
from agenteval.trace import FailureCause

PARALLEL = "What is the weather in Paris and Rome?"
SCRIPT: dict[str, list[Any]] = {
    PARALLEL: [
        [("station_weather", {"city": "Paris"}), ("station_weather", {"city": "Rome", "days": 2})],
        "Paris 21C, Rome 14C",
    ],
    "Remember the weather": [[("note_topic", {"topic": "weather"})], "Noted."],
    "And again": [[("note_topic", {"topic": "again"})], "Noted again."],
    "Atlantis and Paris?": [
        [("station_weather", {"city": "Paris"}), ("station_weather", {"city": "Atlantis"})],
        "never reached",
    ],
    "Bad arguments": [[("station_weather", {"town": "Paris"})], "Sorry."],
}


def _run(agent: Any, cases: list[EvalCase], tmp_path: Path, **options: Any) -> agenteval.Run:
    return agenteval.evaluate(agent, cases, store=tmp_path / "runs.db", **options)


def _stored(run: agenteval.Run, path: Path) -> list[TrialResult]:
    with RunStore(path, create=False) as store:
        return sorted(store.iter_results(run.run_id), key=lambda r: (r.case.id, r.trial.trial))


def test_the_keys_are_those_of_the_layers_above() -> None:
    from agenteval.casefiles.adk_keys import SESSION_INPUT
    from agenteval.evalset.session import SESSION_STATE

    assert adk_adapter.SESSION_INPUT == SESSION_INPUT
    assert adk_adapter.SESSION_STATE == SESSION_STATE


def test_parallel_calls_usage_cost_and_the_declared_schemas(tmp_path: Path) -> None:
    agent = weather_agent(SCRIPT, usage=(1000, 200, 400, 50))
    prices = PriceTable({"scripted-gemini": ModelPrice(input=1.0, output=10.0, cached_input=0.5)})
    run = _run(
        agent,
        [
            EvalCase(
                id="parallel", input=PARALLEL, expected_tools=["station_weather", "station_weather"]
            )
        ],
        tmp_path,
        prices=prices,
        scorers=["tool_arguments_valid"],
    )
    (result,) = _stored(run, tmp_path / "runs.db")
    trial = result.trial
    assert trial.failure is None
    assert trial.output == "Paris 21C, Rome 14C"
    assert [(c.name, c.arguments, c.result) for c in trial.tool_calls] == [
        ("station_weather", {"city": "Paris"}, {"city": "Paris", "celsius": 21, "days": 1}),
        (
            "station_weather",
            {"city": "Rome", "days": 2},
            {"city": "Rome", "celsius": 14, "days": 2},
        ),
    ]
    assert len({c.id for c in trial.tool_calls}) == 2
    # Two model calls, each 1000 prompt (400 cached), 200 candidates + 50 thoughts.
    assert [c.model for c in trial.model_calls] == ["scripted-gemini", "scripted-gemini"]
    assert trial.usage.input_tokens == 2000
    assert trial.usage.output_tokens == 500
    assert trial.usage.cached_tokens == 800
    assert trial.usage.reasoning_tokens == 100
    expected_usd = 2 * ((1000 - 400) * 1.0 + 400 * 0.5 + 250 * 10.0) / 1e6
    assert run.summary.cost.agent_usd == pytest.approx(expected_usd)
    # ADK's declarations are the tool schemas, in the trial and in the run.
    assert set(trial.tool_specs) == {"station_weather", "note_topic"}
    assert trial.tool_specs["station_weather"].parameters["required"] == ["city"]
    assert "tool_context" not in trial.tool_specs["note_topic"].parameters["properties"]
    assert result.scores["tool_arguments_valid"].passed is True
    assert trial.node_visits == ["weather_agent"]
    # ADK's own OpenTelemetry spans repeat nothing (they gave the trial its trace id alone).
    assert trial.trace_id is not None


def test_arguments_outside_the_declared_schema_fail_tool_arguments_valid(tmp_path: Path) -> None:
    run = _run(
        weather_agent(SCRIPT),
        [EvalCase(id="bad", input="Bad arguments")],
        tmp_path,
        scorers=["tool_arguments_valid"],
    )
    (result,) = _stored(run, tmp_path / "runs.db")
    assert result.trial.tool_calls[0].arguments == {"town": "Paris"}
    score = result.scores["tool_arguments_valid"]
    assert score.passed is False
    assert "city" in (score.reason or "")


def test_a_toolsets_tools_get_the_schemas_adk_offered_the_model(tmp_path: Path) -> None:
    closed: list[bool] = []

    class CityTools(BaseToolset):
        """Tools listed only when a run asks (as an MCP server's)."""

        async def get_tools(self, readonly_context: Any = None) -> list[Any]:
            return [FunctionTool(station_weather)]

        async def close(self) -> None:
            closed.append(True)

    agent = LlmAgent(
        name="toolset_agent",
        model=ScriptedModel(
            script={
                "ok": [[("station_weather", {"city": "Paris"})], "21C"],
                "bad": [[("station_weather", {"city": 3})], "??"],
            }
        ),
        tools=[CityTools()],
    )
    assert AdkAgent.of(agent).tool_specs() == {}  # not listed before a run
    run = _run(
        agent,
        [EvalCase(id="ok", input="ok"), EvalCase(id="bad", input="bad")],
        tmp_path,
        scorers=["tool_arguments_valid"],
    )
    bad, ok = _stored(run, tmp_path / "runs.db")
    assert ok.trial.tool_specs["station_weather"].parameters["required"] == ["city"]
    assert ok.scores["tool_arguments_valid"].passed is True
    assert bad.scores["tool_arguments_valid"].passed is False
    # The toolset is the user's, shared by every trial: no trial closes it.
    assert closed == []


def test_a_conversation_plays_every_turn_in_one_session_from_its_initial_state(
    tmp_path: Path,
) -> None:
    case = EvalCase(
        id="talk",
        conversation=[Invocation(input="Remember the weather"), Invocation(input="And again")],
        metadata={
            "session_input": {"app_name": "weather app", "user_id": "ada", "state": {"count": 5}},
            "final_session_state": {"count": 7, "topic": "again"},
        },
    )
    wrong = case.model_copy(
        update={
            "id": "talk-wrong",
            "metadata": {**case.metadata, "final_session_state": {"count": 6}},
        }
    )
    run = _run(weather_agent(SCRIPT), [case, wrong], tmp_path, scorers=[final_session_state_match])
    right, off = _stored(run, tmp_path / "runs.db")
    trial = right.trial
    assert [s.output for s in trial.steps] == ["Noted.", "Noted again."]
    assert trial.metadata["turn_outputs"] == ["Noted.", "Noted again."]
    assert [c.result for c in trial.tool_calls] == [
        {"result": "remembered weather (6)"},
        {"result": "remembered again (7)"},
    ]
    assert trial.metadata["session_state"] == {"count": 7, "topic": "again"}
    assert right.scores["final_session_state_match"].passed is True
    assert off.scores["final_session_state_match"].passed is False


def test_the_session_carries_the_case_app_and_user(tmp_path: Path) -> None:
    services: list[InMemorySessionService] = []

    def service() -> InMemorySessionService:
        services.append(InMemorySessionService())
        return services[-1]

    agent = AdkAgent(weather_agent(SCRIPT), session_service=service)
    case = EvalCase(
        input="Remember the weather",
        metadata={"session_input": {"app_name": "weather app", "user_id": "ada", "state": {}}},
    )
    trial = asyncio_run(agent.run_case(case))
    (svc,) = services
    listed = asyncio_run(svc.list_sessions(app_name="weather app", user_id="ada"))
    (session,) = listed.sessions
    assert session.id.startswith("agenteval-")
    assert trial.metadata["session_state"] == {"count": 1, "topic": "weather"}


def asyncio_run(coro: Any) -> Any:
    import asyncio

    return asyncio.run(coro)


def test_a_tool_that_raises_fails_the_trial_and_keeps_the_calls_made(tmp_path: Path) -> None:
    # ADK 2.13 lets a tool's exception out of Runner.run_async: the trial fails as the agent's
    # error, keeping the call that succeeded and the one that raised, with its error.
    run = _run(
        weather_agent(SCRIPT), [EvalCase(id="atlantis", input="Atlantis and Paris?")], tmp_path
    )
    (result,) = _stored(run, tmp_path / "runs.db")
    trial = result.trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.AGENT_ERROR
    assert trial.failure.error_type == "LookupError"
    calls = {c.arguments["city"]: c for c in trial.tool_calls}
    assert calls["Paris"].result == {"city": "Paris", "celsius": 21, "days": 1}
    assert calls["Paris"].error is None
    assert calls["Atlantis"].error == "LookupError: no weather station in Atlantis"
    assert calls["Atlantis"].result is None
    assert len(trial.model_calls) == 1


def test_a_tool_error_a_callback_answers_keeps_the_error_and_the_run_goes_on() -> None:
    def fallback(tool: Any, args: Any, tool_context: Any, error: Exception) -> dict[str, Any]:
        return {"error": "station offline"}

    agent = weather_agent(SCRIPT)
    agent.on_tool_error_callback = fallback
    trial = asyncio_run(AdkAgent.of(agent).run_case(EvalCase(input="Atlantis and Paris?")))
    assert trial.output == "never reached"
    calls = {c.arguments["city"]: c for c in trial.tool_calls}
    assert calls["Atlantis"].error == "LookupError: no weather station in Atlantis"
    assert calls["Atlantis"].result == {"error": "station offline"}
    assert calls["Paris"].error is None


def test_a_trial_past_its_time_limit_keeps_the_call_it_was_waiting_on(tmp_path: Path) -> None:
    async def wait_forever(city: str) -> str:
        """A tool that never answers."""
        await asyncio.Event().wait()
        return city

    agent = LlmAgent(
        name="stuck",
        model=ScriptedModel(script={"go": [[("wait_forever", {"city": "Oslo"})], "never"]}),
        tools=[wait_forever],
    )
    run = _run(agent, [EvalCase(id="stuck", input="go")], tmp_path, timeout=2.0, retries=0)
    (result,) = _stored(run, tmp_path / "runs.db")
    trial = result.trial
    assert trial.failure is not None and trial.failure.cause is FailureCause.TIMEOUT
    # The call was cancelled by the time limit: no error of its own (the trial says why).
    assert [(c.name, c.result, c.error) for c in trial.tool_calls] == [("wait_forever", None, None)]


def test_a_model_error_keeps_its_classification(tmp_path: Path) -> None:
    script = {"hi": [genai_errors.ServerError(503, {"error": {"message": "overloaded"}})]}
    run = _run(weather_agent(script), [EvalCase(id="down", input="hi")], tmp_path, retries=0)
    (result,) = _stored(run, tmp_path / "runs.db")
    assert result.trial.failure is not None
    assert result.trial.failure.cause is FailureCause.PROVIDER_ERROR


def test_a_model_response_without_usage_is_a_call_whose_cost_is_unknown(tmp_path: Path) -> None:
    # A model that reports no usage_metadata (a LiteLlm model whose provider left usage out)
    # still made the call: it counts, its tokens unknown, and a cost gate cannot pass it as $0.
    bare = LlmResponse(content=types.Content(role="model", parts=[types.Part(text="21C")]))
    agent = weather_agent({"hi": [[("station_weather", {"city": "Paris"})], bare]})
    prices = PriceTable({"scripted-gemini": ModelPrice(input=1.0, output=10.0)})
    run = _run(agent, [EvalCase(id="bare", input="hi")], tmp_path, prices=prices)
    (result,) = _stored(run, tmp_path / "runs.db")
    trial = result.trial
    assert trial.output == "21C"
    assert [(c.model, c.usage_recorded) for c in trial.model_calls] == [
        ("scripted-gemini", True),
        ("scripted-gemini", False),
    ]
    assert trial.usage.input_tokens == 100  # the measured call's only
    assert "usage_metadata" in trial.not_recorded["usage"]
    assert run.summary.cost.models_without_usage == ["scripted-gemini"]


def test_a_callback_that_rewrites_the_response_keeps_the_model_call_and_its_usage(
    tmp_path: Path,
) -> None:
    # A guardrail `after_model_callback` that returns a new response (its text rewritten, no
    # usage_metadata copied) is how ADK's docs change an answer: the model was still called,
    # and spent what it reported. agenteval counts calls from the events, so this holds
    # because ADK gives a callback's response the original's unset fields (usage among them,
    # `_inherit_unset_model_fields`); were that to change, the call would vanish from the trial.
    def guardrail(callback_context: Any, llm_response: LlmResponse) -> LlmResponse | None:
        parts = (llm_response.content.parts or []) if llm_response.content else []
        if not any(part.text for part in parts):
            return None
        text = "".join(part.text or "" for part in parts).replace("21C", "[redacted]")
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))

    case = EvalCase(id="rewritten", input="Remember the weather")
    script = {"Remember the weather": [[("note_topic", {"topic": "weather"})], "It is 21C."]}
    agent = weather_agent(script)
    agent.after_model_callback = guardrail
    run = _run(agent, [case], tmp_path)
    (result,) = _stored(run, tmp_path / "runs.db")
    trial = result.trial
    assert trial.output == "It is [redacted]."
    assert [(c.model, c.usage_recorded) for c in trial.model_calls] == [
        ("scripted-gemini", True),
        ("scripted-gemini", True),
    ]
    assert trial.usage.input_tokens == 200  # what the model reported for each call
    assert "usage" not in trial.not_recorded


def test_a_turn_adk_ends_on_an_error_code_says_why_it_has_no_answer(tmp_path: Path) -> None:
    blocked = LlmResponse(error_code="SAFETY", error_message="blocked by the safety filter")
    run = _run(weather_agent({"hi": [blocked]}), [EvalCase(id="blocked", input="hi")], tmp_path)
    (result,) = _stored(run, tmp_path / "runs.db")
    failure = result.trial.failure
    assert failure is not None
    assert failure.cause is FailureCause.NO_RESPONSE
    assert failure.message == (
        "ADK ended the turn without an answer: SAFETY: blocked by the safety filter"
    )


def test_a_transfer_to_a_sub_agent_is_a_node_visit(tmp_path: Path) -> None:
    root = team(
        {"Weather in Paris?": [[("transfer_to_agent", {"agent_name": "helper"})]]},
        {"Weather in Paris?": [[("station_weather", {"city": "Paris"})], "Paris: 21C"]},
    )
    run = _run(
        root,
        [EvalCase(id="t", input="Weather in Paris?")],
        tmp_path,
        scorers=["tool_arguments_valid"],
    )
    (result,) = _stored(run, tmp_path / "runs.db")
    trial = result.trial
    assert trial.output == "Paris: 21C"
    assert trial.node_visits == ["root", "helper"]
    assert [c.name for c in trial.tool_calls] == ["transfer_to_agent", "station_weather"]
    assert [c.model for c in trial.model_calls] == [
        "scripted-gemini",
        "scripted-helper",
        "scripted-helper",
    ]
    assert trial.tool_specs["transfer_to_agent"].parameters["properties"]["agent_name"]["enum"]
    assert result.scores["tool_arguments_valid"].passed is True


@pytest.mark.filterwarnings("ignore:SequentialAgent is deprecated:DeprecationWarning")
def test_a_workflow_agent_and_a_custom_agent_run_too() -> None:
    class Greeter(BaseAgent):
        """A custom agent calling no model: it writes one event."""

        async def _run_async_impl(self, ctx: Any) -> Any:
            yield Event(
                author=self.name,
                invocation_id=ctx.invocation_id,
                content=types.Content(role="model", parts=[types.Part(text="hello there")]),
            )

    first = weather_agent({"go": [[("station_weather", {"city": "Paris"})], "Paris done"]})
    pipeline = SequentialAgent(name="pipeline", sub_agents=[first, Greeter(name="greeter")])
    trial = asyncio_run(AdkAgent.of(pipeline).run_case(EvalCase(input="go")))
    assert trial.failure is None
    assert trial.output == "hello there"
    assert trial.node_visits == ["weather_agent", "greeter"]
    assert [c.name for c in trial.tool_calls] == ["station_weather"]
    assert set(AdkAgent.of(pipeline).tool_specs()) == {"station_weather", "note_topic"}


def test_earlier_messages_become_the_sessions_events() -> None:
    services: list[InMemorySessionService] = []

    def service() -> InMemorySessionService:
        services.append(InMemorySessionService())
        return services[-1]

    seen: list[list[str]] = []

    class Echo(ScriptedModel):
        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            seen.append([p.text or "" for c in llm_request.contents for p in c.parts or ()])
            async for response in super().generate_content_async(llm_request, stream):
                yield response

    agent = LlmAgent(name="echo", model=Echo(script={"And now?": ["Now: 2"]}))
    case = EvalCase(
        input=[
            Message(role="user", content="Count with me: 1"),
            Message(role="assistant", content="1"),
            Message(role="user", content="And now?"),
        ]
    )
    trial = asyncio_run(AdkAgent(agent, session_service=service).run_case(case))
    assert trial.output == "Now: 2"
    assert seen == [["Count with me: 1", "1", "And now?"]]
    (svc,) = services
    (session,) = asyncio_run(svc.list_sessions(app_name="EvaluationGenerator")).sessions
    full = asyncio_run(
        svc.get_session(app_name=session.app_name, user_id=session.user_id, session_id=session.id)
    )
    assert [e.author for e in full.events] == ["user", "echo", "user", "echo"]


def test_a_system_message_before_the_first_turn_is_refused_clearly() -> None:
    case = EvalCase(
        id="sys",
        input=[Message(role="system", content="Be brief."), Message(role="user", content="hi")],
    )
    with pytest.raises(ValueError, match="no place for a 'system' message"):
        asyncio_run(AdkAgent.of(weather_agent(SCRIPT)).run_case(case))


def test_an_adk_object_that_is_not_an_agent_is_refused_naming_the_fix() -> None:
    with pytest.raises(AgentLoadError) as caught:
        AdkAgent.of(FunctionTool(station_weather))
    assert "FunctionTool" in caught.value.message
    assert "Agent / LlmAgent" in (caught.value.hint or "")
    runner = Runner(
        app_name="weather", agent=weather_agent(SCRIPT), session_service=InMemorySessionService()
    )
    with pytest.raises(AgentLoadError) as caught:
        AdkAgent.of(runner)
    assert "Runner.agent" in (caught.value.hint or "")
    adapted = as_framework_agent(weather_agent(SCRIPT))
    assert isinstance(adapted, AdkAgent)
    assert adapted.reference == "adk:weather_agent"


def test_an_app_runs_with_its_plugins_under_its_name() -> None:
    services: list[InMemorySessionService] = []

    def service() -> InMemorySessionService:
        services.append(InMemorySessionService())
        return services[-1]

    calls: list[str] = []

    class CountModelCalls(BasePlugin):
        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
            calls.append(callback_context.agent_name)

    app = App(name="weather_app", root_agent=weather_agent(SCRIPT), plugins=[CountModelCalls("n")])
    adapted = as_framework_agent(app)
    assert isinstance(adapted, AdkAgent)
    assert adapted.reference == "adk:weather_app"
    assert set(adapted.tool_specs()) == {"station_weather", "note_topic"}
    trial = asyncio_run(AdkAgent(app, session_service=service).run_case(EvalCase(input=PARALLEL)))
    assert trial.output == "Paris 21C, Rome 14C"
    assert calls == ["weather_agent", "weather_agent"]  # the App's own plugin ran
    assert app.plugins[1:] == []  # the trial's plugin went on a copy of the App
    (svc,) = services
    (session,) = asyncio_run(svc.list_sessions(app_name="weather_app")).sessions
    assert session.user_id == "test_user_id"


CITIES = ["Paris", "Rome", "Oslo", "Lima", "Cairo", "Quito"]


def test_concurrent_trials_each_keep_their_own_record(tmp_path: Path) -> None:
    services: list[InMemorySessionService] = []

    def service() -> InMemorySessionService:
        services.append(InMemorySessionService())
        return services[-1]

    script = {
        f"Weather in {city}?": [
            [("station_weather", {"city": city}), ("note_topic", {"topic": city})],
            f"{city} checked",
        ]
        for city in CITIES
    }
    cases = [
        EvalCase(id=city.lower(), input=f"Weather in {city}?", expected_output=f"{city} checked")
        for city in CITIES
    ]
    # No ids from the model (as Gemini): ADK gives each call its own.
    agent = AdkAgent(weather_agent(script, ids=False), session_service=service)
    run = _run(agent, cases, tmp_path, trials=3, concurrency=8)
    stored = _stored(run, tmp_path / "runs.db")
    assert len(stored) == 18
    for result in stored:
        city = result.case.id.capitalize()
        trial = result.trial
        assert trial.failure is None, trial.failure
        assert trial.output == f"{city} checked"
        assert [c.arguments for c in trial.tool_calls] == [{"city": city}, {"topic": city}]
        # A fresh session per trial: the count starts from nothing every time.
        assert trial.metadata["session_state"] == {"topic": city, "count": 1}
        assert trial.tool_calls[1].result == {"result": f"remembered {city} (1)"}

    # What ADK's own sessions recorded agrees with what the store kept, trial by trial.
    assert len(services) == 18
    adk_side = []
    for svc in services:
        (listed,) = asyncio_run(svc.list_sessions(app_name="EvaluationGenerator")).sessions
        session = asyncio_run(
            svc.get_session(app_name=listed.app_name, user_id=listed.user_id, session_id=listed.id)
        )
        calls = [
            (p.function_call.id, p.function_call.name, p.function_call.args)
            for e in session.events
            for p in (e.content.parts if e.content else None) or ()
            if p.function_call
        ]
        responses = {
            p.function_response.id: p.function_response.response
            for e in session.events
            for p in (e.content.parts if e.content else None) or ()
            if p.function_response
        }
        finals = [
            "".join(p.text or "" for p in e.content.parts or ())
            for e in session.events
            if e.is_final_response() and e.content and e.author != "user"
        ]
        usages = [e.usage_metadata for e in session.events if e.usage_metadata]
        adk_side.append(
            (
                finals[-1],
                [(i, n, a, responses[i]) for i, n, a in calls],
                dict(session.state),
                sum(u.prompt_token_count or 0 for u in usages),
                sum(u.candidates_token_count or 0 for u in usages),
                len(usages),
                sorted({e.author for e in session.events} - {"user"}),
            )
        )
    ours = [
        (
            r.trial.output,
            [(c.id, c.name, c.arguments, c.result) for c in r.trial.tool_calls],
            r.trial.metadata["session_state"],
            r.trial.usage.input_tokens,
            r.trial.usage.output_tokens,
            len(r.trial.model_calls),
            sorted(r.trial.node_visits),
        )
        for r in stored
    ]
    key = repr
    assert sorted(adk_side, key=key) == sorted(ours, key=key)
