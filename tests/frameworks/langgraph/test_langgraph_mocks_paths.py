"""Where a LangGraph tool call meets a mock: under the user's own `ToolNode` interceptors, in a
subgraph, from a node of the graph's own (`tool.invoke`), and answered from a replayed run."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.prebuilt import InjectedState, ToolNode, ToolRuntime
from tests.frameworks.langgraph.mocked_tools import (
    RAN,
    TOOLS,
    get_weather,
    own_node_graph,
    parent_of,
    ran,
    react_agent,
)

from agenteval import EvalCase, evaluate
from agenteval.agents.environment import ReplayBook, ReplayMissError, ToolEnvironment
from agenteval.agents.frameworks.langgraph import GraphAgent
from agenteval.agents.frameworks.langgraph_mocks import (
    handled_as_without_wrapper,
    tool_node_settings,
)
from agenteval.agents.recorder import TrialRecorder, recording
from agenteval.run import Run
from agenteval.trace import FailureCause, ToolCall, Trial


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()


def trials(run: Run) -> dict[str, Trial]:
    return {result.trial.case_id: result.trial for result in run.results}


def run(agent: Any, cases: list[EvalCase], tmp_path: Path, **options: Any) -> Run:
    return evaluate(agent, cases, store=tmp_path / "runs.db", **options)


RETRY_THEN_OK = {"charge": {"sequence": [{"error": "timeout"}, {"result": "paid"}]}}


class Retrying:
    """A user's interceptor: one more try after a `TimeoutError`, counting the tries."""

    def __init__(self) -> None:
        self.tries = 0

    def sync(self, request: Any, execute: Callable[[Any], Any]) -> Any:
        for attempt in range(2):
            self.tries += 1
            try:
                return execute(request)
            except TimeoutError:
                if attempt:
                    raise
        raise AssertionError("unreachable")

    async def run_async(self, request: Any, execute: Callable[[Any], Awaitable[Any]]) -> Any:
        for attempt in range(2):
            self.tries += 1
            try:
                return await execute(request)
            except TimeoutError:
                if attempt:
                    raise
        raise AssertionError("unreachable")


@pytest.mark.parametrize("kind", ["async", "sync-only"])
def test_the_users_interceptor_sees_the_injected_error_and_retries(
    tmp_path: Path, kind: str
) -> None:
    retrying = Retrying()
    if kind == "async":
        node = ToolNode(TOOLS, wrap_tool_call=retrying.sync, awrap_tool_call=retrying.run_async)
    else:  # LangGraph runs a sync-only interceptor in async runs too: so do the mocks
        node = ToolNode(TOOLS, wrap_tool_call=retrying.sync)
    case = EvalCase(id="pay", input="charge 5", tool_mocks=RETRY_THEN_OK)
    trial = trials(run(react_agent(node), [case], tmp_path))["pay"]
    assert RAN == []
    assert retrying.tries == 2
    (call,) = trial.tool_calls
    assert (call.result, call.error, call.mocked) == ("paid", None, "mock")
    assert trial.failure is None
    # The user's node keeps its own interceptors.
    settings = tool_node_settings(node)
    assert settings is not None
    assert settings["_wrap_tool_call"] == retrying.sync
    assert settings["_awrap_tool_call"] == (retrying.run_async if kind == "async" else None)


def test_the_settings_read_from_a_tool_node_exist_in_the_installed_langgraph() -> None:
    # The answering copy remakes a ToolNode from these: a LangGraph that renamed them would
    # leave every ToolNode unanswered (the guard refusing mocked results), so this test says.
    settings = tool_node_settings(ToolNode(TOOLS, handle_tool_errors=(ValueError,)))
    assert settings is not None
    assert settings["_handle_tool_errors"] == (ValueError,)
    assert settings["_wrap_tool_call"] is None and settings["_awrap_tool_call"] is None


def test_a_subgraphs_tool_node_is_answered_and_the_subgraph_left_alone(tmp_path: Path) -> None:
    inner = react_agent()
    inner_node = inner.nodes["tools"].bound
    graph = parent_of(inner)
    case = EvalCase(id="sub", input="add 1 2", tool_mocks={"add": {"result": 40}})
    trial = trials(run(graph, [case], tmp_path))["sub"]
    assert RAN == []
    assert trial.output == "add=40"
    assert trial.tool_calls[0].mocked == "mock"
    assert graph.nodes["inner"].bound is inner and inner.nodes["tools"].bound is inner_node


def test_a_tool_called_by_a_node_of_the_graphs_own(tmp_path: Path) -> None:
    cases = [
        EvalCase(
            id="error",
            input="Atlantis",
            tool_mocks={"get_weather": {"error": "UnknownCityError: no such city"}},
        ),
        EvalCase(id="result", input="Paris", tool_mocks={"get_weather": {"result": {"c": 1}}}),
        EvalCase(id="real", input="Rome", tool_mocks={"add": {"result": 1}}),
        EvalCase(id="only", input="Oslo", tool_mocks={"add": {"result": 1}}, tool_mocks_only=True),
    ]
    by_case = trials(run(own_node_graph(), cases, tmp_path))
    # A mock's error is raised where the tool would raise it ...
    assert by_case["error"].output == "caught UnknownCityError: no such city"
    assert by_case["error"].failure is None
    # ... a mock's result cannot be given there: refused, never run for real, and the
    # harness fails the trial though the node caught the error.
    refused = by_case["result"]
    assert refused.output is not None and refused.output.startswith("caught UnmockedToolError")
    assert refused.failure is not None and refused.failure.cause is FailureCause.UNMOCKED_TOOL
    assert "outside a LangGraph ToolNode" in refused.failure.message
    # An unmocked call runs, unless the case allows mocked calls only.
    assert by_case["real"].output == "{'city': 'Rome', 'celsius': 99}"
    assert by_case["only"].failure is not None
    assert by_case["only"].failure.cause is FailureCause.UNMOCKED_TOOL
    assert RAN == ["get_weather(Rome)"]


def _replayed(agent: GraphAgent, case: EvalCase, book: ReplayBook) -> tuple[Trial, Any]:
    recorder = TrialRecorder()
    recorder.environment = ToolEnvironment(replay=book)

    async def play() -> Trial:
        with recording(recorder):
            return await agent.run_case(case)

    return asyncio.run(play()), recorder.environment


def test_a_replayed_run_answers_its_calls_and_a_miss_is_refused() -> None:
    agent = GraphAgent.of(react_agent())
    recorded = [
        ToolCall(name="add", arguments={"a": 1, "b": 2}, result="3"),
        ToolCall(name="charge", arguments={"amount": 5}, error="CardDeclined: no funds"),
    ]
    book = ReplayBook(recorded, run_id="0123456789abcdef")
    trial, environment = _replayed(agent, EvalCase(id="r", input="add 1 2"), book)
    assert trial.tool_calls[0].result == "3"
    assert environment.answered == [("add", {"a": 1, "b": 2}, "replay")]
    # In order: the next call must be the recorded charge; another is a miss, never run,
    # raised as the tool would raise it (this ToolNode lets such errors out).
    recorder = TrialRecorder()
    recorder.environment = ToolEnvironment(replay=book)

    async def play() -> None:
        with recording(recorder):
            await agent.run_case(EvalCase(id="r", input="add 1 2"))

    with pytest.raises(ReplayMissError, match=r"add\(a=1, b=2\) was never called"):
        asyncio.run(play())
    assert RAN == []
    assert recorder.environment.violation is not None
    assert recorder.environment.violation.cause is FailureCause.REPLAY_MISS


def test_a_replayed_error_is_raised_as_the_tool_would() -> None:
    node = ToolNode(TOOLS, handle_tool_errors=True)
    agent = GraphAgent.of(react_agent(node))
    book = ReplayBook(
        [ToolCall(name="charge", arguments={"amount": 5}, error="CardDeclined: no funds")],
        run_id="0123456789abcdef",
    )
    trial, environment = _replayed(agent, EvalCase(id="r", input="charge 5"), book)
    assert RAN == []
    assert trial.output == "charge failed"
    assert "CardDeclined('no funds')" in str(trial.tool_calls[0].error)
    assert environment.violation is None


@pytest.mark.parametrize(
    ("flag", "error", "handled"),
    [
        (True, TimeoutError("t"), True),
        (False, TimeoutError("t"), False),
        ((ValueError,), TimeoutError("t"), False),
        ((ValueError, TimeoutError), TimeoutError("t"), True),
        (TimeoutError, TimeoutError("t"), True),
        ("sorry", KeyError("k"), True),
    ],
)
def test_the_copy_handles_errors_as_the_node_without_an_interceptor(
    flag: Any, error: Exception, handled: bool
) -> None:
    handle = handled_as_without_wrapper(flag)
    if handled:
        assert handle(error) in ("sorry", f"Error: {error!r}\n Please fix your mistakes.")
    else:
        with pytest.raises(type(error)):
            handle(error)


def test_a_handler_function_handles_the_errors_its_annotation_names() -> None:
    def only_values(error: ValueError) -> str:
        return f"value: {error}"

    handle = handled_as_without_wrapper(only_values)
    assert handle(ValueError("v")) == "value: v"
    with pytest.raises(KeyError):
        handle(KeyError("k"))


@tool("get_weather")
def weather_in_state(city: str, state: Annotated[dict[str, Any], InjectedState]) -> str:
    """The weather in a city, with the graph's state injected."""
    ran(f"get_weather({city}) after {len(state['messages'])} messages")
    return "sunny"


@tool("add")
def add_with_runtime(a: int, b: int, runtime: ToolRuntime) -> int:
    """Add two integers, with LangGraph's tool runtime injected."""
    ran(f"add({a}, {b}) for {runtime.tool_call_id}")
    return a + b


def test_tools_with_injected_arguments_are_answered_and_run_as_before(tmp_path: Path) -> None:
    graph = react_agent([weather_in_state, add_with_runtime])
    assert set(GraphAgent.of(graph).tool_specs()["get_weather"].parameters["properties"]) == {
        "city"
    }
    cases = [
        EvalCase(id="w-mock", input="weather Paris", tool_mocks={"get_weather": {"result": "m"}}),
        EvalCase(id="a-mock", input="add 1 2", tool_mocks={"add": {"result": 7}}),
        EvalCase(id="w-real", input="weather Rome", tool_mocks={"add": {"result": 7}}),
        EvalCase(id="a-real", input="add 3 4", tool_mocks={"get_weather": {"result": "m"}}),
    ]
    by_case = trials(run(graph, cases, tmp_path))
    assert by_case["w-mock"].output == "get_weather=m"
    assert by_case["a-mock"].output == "add=7"
    assert by_case["w-real"].output == "get_weather=sunny"
    assert by_case["a-real"].output == "add=7"
    assert sorted(RAN) == ["add(3, 4) for call-1", "get_weather(Rome) after 2 messages"]
    assert all(t.failure is None for t in by_case.values())


def test_a_runnable_that_is_no_graph_gets_the_guard(tmp_path: Path) -> None:
    def lookup(state: dict[str, Any]) -> AIMessage:
        city = str(state["messages"][-1].content)
        try:
            return AIMessage(content=str(get_weather.invoke({"city": city})))
        except Exception as error:
            return AIMessage(content=f"caught {type(error).__name__}")

    cases = [
        EvalCase(id="error", input="Oslo", tool_mocks={"get_weather": {"error": "timeout"}}),
        EvalCase(id="result", input="Oslo", tool_mocks={"get_weather": {"result": 1}}),
        EvalCase(id="plain", input="Rome"),
    ]
    by_case = trials(run(RunnableLambda(lookup), cases, tmp_path))
    assert by_case["error"].output == "caught InjectedTimeout"
    assert by_case["error"].failure is None
    assert by_case["result"].failure is not None
    assert by_case["result"].failure.cause is FailureCause.UNMOCKED_TOOL
    assert by_case["plain"].output == "{'city': 'Rome', 'celsius': 99}"
    assert RAN == ["get_weather(Rome)"]


def test_a_replayed_result_a_node_of_its_own_asks_for_is_a_replay_miss() -> None:
    agent = GraphAgent.of(own_node_graph())
    book = ReplayBook(
        [ToolCall(name="get_weather", arguments={"city": "Oslo"}, result="{}")],
        run_id="0123456789abcdef",
    )
    trial, environment = _replayed(agent, EvalCase(id="r", input="Oslo"), book)
    assert RAN == []
    assert trial.output is not None and trial.output.startswith("caught ReplayMissError")
    assert environment.violation is not None
    assert environment.violation.cause is FailureCause.REPLAY_MISS
    assert "answered by the replayed run" in environment.violation.message
