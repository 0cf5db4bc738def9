"""A pydantic-ai `Agent` run by agenteval as a first-class agent: what each trial records, read
back from the run's SQLite store and checked against the framework's own messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from tests.frameworks.pydantic_ai.scripted import (
    MODEL,
    Forecast,
    KeepRuns,
    Ledger,
    ledger_agent,
    memory_agent,
    usage_of,
    weather_agent,
)

import agenteval
from agenteval import EvalCase, RunStore
from agenteval.agents.frameworks import as_framework_agent
from agenteval.agents.frameworks.pydantic_ai import PydanticAIAgent
from agenteval.case import Invocation, Message
from agenteval.errors import AgentLoadError
from agenteval.pricing import ModelPrice, PriceTable
from agenteval.run import TrialResult

PRICES = PriceTable({MODEL: ModelPrice(input=1.0, output=2.0, cached_input=0.5)})


def stored(store: Path) -> dict[tuple[str, int], TrialResult]:
    """Every trial of the store's latest run, read back from the SQLite file."""
    with RunStore(store) as runs:
        run_id = runs.resolve_run_id("latest")
        return {(r.case.id, r.trial.trial): r for r in runs.iter_results(run_id)}


def only(store: Path) -> TrialResult:
    (result,) = stored(store).values()
    return result


def test_parallel_calls_pair_with_their_returns_and_usage_is_per_response(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    case = EvalCase(id="two", input="Weather in Paris and Rome?", expected_output="x")
    agenteval.evaluate(weather_agent(), [case], store=store, prices=PRICES)
    trial = only(store).trial
    assert [(c.name, c.arguments, c.id, c.result, c.error) for c in trial.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "w0-Paris", "Paris: sunny", None),
        ("get_weather", {"city": "Rome"}, "w1-Rome", "Rome: rainy", None),
    ]
    assert trial.output == "Paris: sunny; Rome: rainy"
    assert [c.model for c in trial.model_calls] == [MODEL, MODEL]
    assert trial.usage.input_tokens == 100 + 110
    assert trial.usage.output_tokens == 5 + 6
    assert trial.usage.cached_tokens == 4
    assert trial.usage.reasoning_tokens == 1
    assert trial.node_visits == ["weather"]
    assert trial.retries == {}
    assert trial.failure is None


def test_a_model_retry_is_the_calls_error_and_counts_a_tool_retry(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    # `paris` in lower case: the tool raises ModelRetry, the model calls it again as `Paris`.
    case = EvalCase(id="retry", input="Weather in paris?", expected_tools=["get_weather"])
    agenteval.evaluate(weather_agent(), [case], store=store)
    result = only(store)
    calls = result.trial.tool_calls
    assert [(c.arguments, c.result) for c in calls] == [
        ({"city": "paris"}, None),
        ({"city": "Paris"}, "Paris: sunny"),
    ]
    assert calls[0].error == "write the city's name capitalised, not 'paris'"
    assert calls[1].id == f"{calls[0].id}-again"
    assert result.trial.retries == {"tool_retry": 1}
    assert result.trial.output == "Paris: sunny"
    assert result.scores["tool_execution"].passed is False  # one call of two failed


def test_invalid_arguments_are_retried_and_fail_tool_arguments_valid(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    case = EvalCase(id="bad", input="badargs: weather in Oslo?")
    agenteval.evaluate(weather_agent(), [case], store=store)
    result = only(store)
    calls = result.trial.tool_calls
    assert [c.arguments for c in calls] == [{"town": "Oslo"}, {"city": "Oslo"}]
    assert "Field required" in (calls[0].error or "")
    assert result.trial.retries == {"tool_retry": 1}
    spec = result.trial.tool_specs["get_weather"]
    assert spec.description == "Today's weather in a city, by its name."
    assert spec.parameters["required"] == ["city"]
    score = result.scores["tool_arguments_valid"]
    assert score.value == 0.0  # one call of two broke the schema
    assert score.passed is False


def test_declared_schemas_make_tool_arguments_valid_apply(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    agenteval.evaluate(
        weather_agent(), [EvalCase(id="ok", input="Weather in Lisbon?")], store=store
    )
    result = only(store)
    assert set(result.trial.tool_specs) == {"get_weather", "explode"}
    assert result.trial.tool_specs["get_weather"].parameters["properties"] == {
        "city": {"type": "string"}
    }
    assert result.scores["tool_arguments_valid"].value == 1.0


def test_a_tool_that_raises_fails_the_trial_and_keeps_the_calls_made(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    case = EvalCase(id="crash", input="crash: weather in Porto?")
    agenteval.evaluate(weather_agent(), [case], store=store)
    trial = only(store).trial
    assert trial.failure is not None
    assert trial.failure.cause == "agent_error"
    assert trial.failure.error_type == "RuntimeError"
    assert trial.failure.message == "the forecast service is down"
    # The calls made before are kept: the one that answered, the one that raised.
    assert [(c.name, c.id, c.result) for c in trial.tool_calls] == [
        ("get_weather", "w0-Porto", "Porto: misty"),
        ("explode", "boom", None),
    ]
    assert [c.model for c in trial.model_calls] == [MODEL, MODEL]
    assert trial.usage.input_tokens == 100 + 110
    assert set(trial.tool_specs) == {"get_weather", "explode"}


def test_a_structured_output_is_the_answer_as_json_and_output_tools_are_no_calls(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    case = EvalCase(
        id="forecast",
        input="Forecast for Paris?",
        expected_output='{"city":"Paris","celsius":21}',
    )
    agenteval.evaluate(weather_agent(output_type=Forecast), [case], store=store)
    result = only(store)
    trial = result.trial
    assert trial.output == '{"city":"Paris","celsius":21}'
    assert result.scores["exact_match"].passed is True
    # `final_result` carried the answer (twice: its first arguments failed validation).
    assert [c.name for c in trial.tool_calls] == ["get_weather"]
    assert "final_result" not in trial.tool_specs
    assert trial.retries == {"output_retry": 1}
    assert len(trial.model_calls) == 3


def test_a_conversation_runs_every_turn_with_the_history_so_far(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    case = EvalCase(
        id="talk",
        conversation=[
            Invocation(input="Hi, my name is Ada."),
            Invocation(input="What is my name?"),
        ],
    )
    agenteval.evaluate(memory_agent(), [case], store=store)
    trial = only(store).trial
    # The second run saw the first turn's request and response, then its own prompt.
    assert trial.metadata["turn_outputs"] == [
        "Hello Ada. (1 messages)",
        "Your name is Ada. (3 messages)",
    ]
    assert trial.output == "Your name is Ada. (3 messages)"
    assert len(trial.steps) == 2
    assert len(trial.model_calls) == 2


def test_a_list_of_messages_is_the_initial_history(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    case = EvalCase(
        id="history",
        input=[
            Message(role="system", content="Be brief."),
            Message(role="user", content="My name is Grace."),
            Message(role="assistant", content="Hello Grace."),
            Message(role="user", content="What is my name?"),
        ],
    )
    agenteval.evaluate(memory_agent(), [case], store=store)
    trial = only(store).trial
    assert trial.output == "Your name is Grace. (3 messages)"
    assert "turn_outputs" not in trial.metadata


def test_concurrent_trials_each_record_their_own_run(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    cities = ["Paris", "Rome", "Oslo", "Lisbon", "Porto"]
    cases = [EvalCase(id=city, input=f"Weather in {city.lower()}?") for city in cities]
    agenteval.evaluate(weather_agent(), cases, store=store, trials=4, concurrency=8)
    results = stored(store)
    assert len(results) == len(cities) * 4
    for (case_id, _), result in results.items():
        trial = result.trial
        assert [(c.arguments, c.result) for c in trial.tool_calls] == [
            ({"city": case_id.lower()}, None),
            ({"city": case_id}, f"{case_id}: {WEATHER_OF[case_id]}"),
        ], case_id
        assert trial.retries == {"tool_retry": 1}
        assert trial.usage.input_tokens == 100 + 110 + 120
        assert trial.output == f"{case_id}: {WEATHER_OF[case_id]}"


WEATHER_OF = {
    "Paris": "sunny",
    "Rome": "rainy",
    "Oslo": "snowy",
    "Lisbon": "windy",
    "Porto": "misty",
}


def test_what_agenteval_stored_agrees_with_the_frameworks_messages(tmp_path: Path) -> None:
    """Each stored trial against `result.all_messages()` of the runs agenteval made, as kept by
    a capability of the agent's own: the calls (output tools left out), their returns, errors
    and ids, the models and the usage of every response."""
    store = tmp_path / "runs.db"
    prompts = {
        "two": "Weather in Oslo and Porto?",
        "retry": "Weather in rome?",
        "bad": "badargs: weather in Paris?",
    }
    cases = [EvalCase(id=key, input=text) for key, text in prompts.items()]
    kept = KeepRuns()
    agent = weather_agent(capabilities=[kept])
    agenteval.evaluate(agent, cases, store=store, trials=2, concurrency=8)
    assert sorted(kept.runs) == sorted(prompts.values())
    for (case_id, _), result in stored(store).items():
        runs = kept.runs[prompts[case_id]]
        assert len(runs) == 2  # one run per trial
        messages = runs[0]  # the trials' runs are alike but for ids and timestamps
        calls = [p for m in messages if isinstance(m, ModelResponse) for p in m.parts]
        returns = {
            p.tool_call_id: p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)
        }
        expected = [
            (p.tool_name, p.args_as_dict(), p.tool_call_id)
            for p in calls
            if isinstance(p, ToolCallPart)
        ]
        trial = result.trial
        assert [(c.name, c.arguments, c.id) for c in trial.tool_calls] == expected
        for call in trial.tool_calls:
            answer = returns[call.id or ""]
            if answer.outcome == "success":
                assert (call.result, call.error) == (answer.content, None)
            else:
                assert call.result is None
                assert call.error is not None
        responses = [m for m in messages if isinstance(m, ModelResponse)]
        assert [c.model for c in trial.model_calls] == [m.model_name for m in responses]
        assert [c.usage.input_tokens for c in trial.model_calls] == [
            m.usage.input_tokens for m in responses
        ]
        assert trial.usage.output_tokens == sum(m.usage.output_tokens for m in responses)


def test_cost_is_priced_per_response_model(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run = agenteval.evaluate(
        weather_agent(), [EvalCase(id="c", input="Weather in paris?")], store=store, prices=PRICES
    )
    steps = [usage_of(step) for step in range(3)]
    cached = sum(u.cache_read_tokens for u in steps)
    uncached = sum(u.input_tokens for u in steps) - cached
    output = sum(u.output_tokens for u in steps)
    expected = (uncached * 1.0 + cached * 0.5 + output * 2.0) / 1_000_000
    assert run.summary.cost.agent_usd == pytest.approx(expected)


def test_deps_come_fresh_from_the_factory_for_each_trial(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    made: list[Ledger] = []

    def make_deps(case: EvalCase) -> Ledger:
        ledger = Ledger()
        made.append(ledger)
        return ledger

    agent = PydanticAIAgent(ledger_agent(), deps=make_deps)
    cases = [EvalCase(id=c, input=f"Weather in {c} and Rome?") for c in ("Paris", "Oslo")]
    agenteval.evaluate(agent, cases, store=store, trials=3, concurrency=8)
    assert len(made) == 6
    for (case_id, _), result in stored(store).items():
        # Each trial's own ledger: its two cities, asked in parallel, and no other trial's.
        calls = result.trial.tool_calls
        assert sorted(c.arguments["city"] for c in calls) == sorted([case_id, "Rome"])
        asked = sorted(str(c.result).rsplit("asked ", 1)[1] for c in calls)
        assert asked == ["1)", "2)"], case_id
    assert sorted(len(ledger.cities) for ledger in made) == [2] * 6


async def test_an_async_deps_factory_with_no_argument(tmp_path: Path) -> None:
    async def make_deps() -> Ledger:
        return Ledger()

    run = await agenteval.evaluate_async(
        PydanticAIAgent(ledger_agent(), deps=make_deps),
        [EvalCase(id="a", input="Weather in Oslo?")],
        store=tmp_path / "runs.db",
    )
    assert run.results[0].trial.output == "Oslo: snowy (asked 1)"


def test_an_agent_needing_deps_without_a_factory_is_refused_naming_the_fix() -> None:
    with pytest.raises(AgentLoadError) as caught:
        as_framework_agent(ledger_agent())
    assert "deps_type=Ledger" in str(caught.value)
    assert "PydanticAIAgent(my_agent, deps=make_deps)" in (caught.value.hint or "")


def test_objects_it_cannot_run_are_refused_clearly() -> None:
    with pytest.raises(AgentLoadError, match="is not a pydantic-ai agent"):
        PydanticAIAgent(Agent)
    with pytest.raises(AgentLoadError, match="is not a pydantic-ai agent"):
        PydanticAIAgent(object())
    with pytest.raises(AgentLoadError, match="not a factory"):
        PydanticAIAgent(ledger_agent(), deps=Ledger())  # type: ignore[arg-type]


def test_the_adapter_names_the_run_and_reads_the_tools_without_a_run() -> None:
    adapter = as_framework_agent(weather_agent())
    assert isinstance(adapter, PydanticAIAgent)
    assert adapter.reference == "pydantic-ai:weather"
    assert set(adapter.tool_specs()) == {"get_weather", "explode"}


def test_the_users_agent_keeps_its_name(tmp_path: Path) -> None:
    agent: Agent[None, str] = Agent(weather_agent().model)
    assert agent.name is None
    run = agenteval.evaluate(agent, [EvalCase(id="n", input="hello")], store=tmp_path / "r.db")
    assert agent.name is None  # pydantic-ai's name inference would have renamed it
    assert run.results[0].trial.node_visits == ["Agent"]


async def test_called_as_a_plain_agent_it_returns_the_whole_trial() -> None:
    adapter = PydanticAIAgent(weather_agent())
    trial = await adapter("Weather in Rome?")
    assert trial.output == "Rome: rainy"
    assert [c.name for c in trial.tool_calls] == ["get_weather"]
    assert [c.model for c in trial.model_calls] == [MODEL, MODEL]  # no recorder: kept here


@pytest.mark.parametrize("kind", ["model", "tool", "toolset"])
def test_a_pydantic_ai_object_that_is_no_agent_is_refused_naming_the_agent(
    kind: str, tmp_path: Path
) -> None:
    from pydantic_ai import Tool
    from pydantic_ai.toolsets import FunctionToolset

    agent = weather_agent()
    obj = {
        "model": agent.model,
        "tool": Tool(lambda city: city, name="echo"),
        "toolset": FunctionToolset(),
    }[kind]
    with pytest.raises(AgentLoadError, match="is not a pydantic-ai agent") as caught:
        agenteval.evaluate(obj, [EvalCase(id="x", input="hi")], store=tmp_path / "r.db")
    assert "pass the pydantic-ai Agent itself" in (caught.value.hint or "")


def test_an_agent_without_a_model_is_refused_or_given_one(tmp_path: Path) -> None:
    bare: Agent[None, str] = Agent(name="bare")
    with pytest.raises(AgentLoadError, match="has no model") as caught:
        as_framework_agent(bare)
    assert "PydanticAIAgent(my_agent, model=" in (caught.value.hint or "")
    given = PydanticAIAgent(bare, model=memory_agent().model)
    run = agenteval.evaluate(given, [EvalCase(id="m", input="Hello")], store=tmp_path / "r.db")
    assert run.results[0].trial.output == "Hello. (1 messages)"


def test_a_call_of_a_tool_that_does_not_exist_is_recorded_as_failed(tmp_path: Path) -> None:
    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("get_wether", {"city": "Paris"}, "x1")])
        return ModelResponse(parts=[TextPart("Sorry.")])

    agent: Agent[None, str] = Agent(FunctionModel(model), name="typo")
    agent.tool_plain(lambda city: city, name="get_weather")
    store = tmp_path / "runs.db"
    agenteval.evaluate(agent, [EvalCase(id="t", input="Weather in Paris?")], store=store)
    result = only(store)
    (call,) = result.trial.tool_calls
    assert (call.name, call.result) == ("get_wether", None)
    assert "Unknown tool name: 'get_wether'" in (call.error or "")
    assert result.trial.retries == {"tool_retry": 1}
    assert result.scores["tool_arguments_valid"].passed is False


def test_a_delegate_agents_usage_is_counted_as_an_unknown_model(tmp_path: Path) -> None:
    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            call = ToolCallPart("ask_helper", {"question": "my name is Bo"}, "h1")
            return ModelResponse(parts=[call], usage=usage_of(0), model_name=MODEL)
        return ModelResponse(parts=[TextPart("Done.")], usage=usage_of(1), model_name=MODEL)

    parent: Agent[None, str] = Agent(FunctionModel(model, model_name=MODEL), name="parent")
    helper = memory_agent()

    @parent.tool
    async def ask_helper(ctx: RunContext[None], question: str) -> str:
        """Ask the helper agent."""
        return (await helper.run(question, usage=ctx.usage)).output

    store = tmp_path / "runs.db"
    agenteval.evaluate(parent, [EvalCase(id="d", input="Delegate")], store=store)
    trial = only(store).trial
    assert [c.model for c in trial.model_calls] == [MODEL, MODEL, "unknown"]
    assert trial.model_calls[2].usage.input_tokens == usage_of(0).input_tokens
    assert trial.usage.input_tokens == 100 + 110 + 100


def test_a_wrapper_agent_runs_as_the_agent_it_wraps(tmp_path: Path) -> None:
    from pydantic_ai.agent import WrapperAgent

    store = tmp_path / "runs.db"
    agenteval.evaluate(
        WrapperAgent(weather_agent()), [EvalCase(id="w", input="Weather in Rome?")], store=store
    )
    trial = only(store).trial
    assert trial.output == "Rome: rainy"
    assert [c.name for c in trial.tool_calls] == ["get_weather"]
    assert set(trial.tool_specs) == {"get_weather", "explode"}


def test_a_providers_own_tool_and_a_deferred_tool_are_recorded(tmp_path: Path) -> None:
    """A native tool (the provider ran it: call and return both in the response) and a tool
    needing approval (the run ends with pydantic-ai's `DeferredToolRequests`, as JSON)."""
    from pydantic_ai import DeferredToolRequests
    from pydantic_ai.messages import NativeToolCallPart, NativeToolReturnPart

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        search = NativeToolCallPart("web_search", {"q": "Paris"}, "n1", provider_name="acme")
        found = NativeToolReturnPart("web_search", ["paris.fr"], "n1", provider_name="acme")
        approve = ToolCallPart("book", {"city": "Paris"}, "b1")
        return ModelResponse(parts=[search, found, TextPart("Booking."), approve])

    agent: Agent[None, Any] = Agent(
        FunctionModel(model), name="booker", output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain(requires_approval=True)
    def book(city: str) -> str:
        """Book a trip."""
        return city

    store = tmp_path / "runs.db"
    agenteval.evaluate(agent, [EvalCase(id="b", input="Book Paris")], store=store)
    trial = only(store).trial
    assert [(c.name, c.arguments, c.result) for c in trial.tool_calls] == [
        ("web_search", {"q": "Paris"}, ["paris.fr"]),
        ("book", {"city": "Paris"}, None),
    ]
    assert trial.output is not None
    assert '"approvals":[{"tool_name":"book"' in trial.output
