"""A graph that answers with a structured response carried by a tool call, as LangChain's
`create_agent(response_format=ToolStrategy(Schema))` does: the model calls a tool named after
the schema, the model node answers it with a `ToolMessage` itself and sets the state's
`structured_response`; no AI message with text follows. The trial's answer is that response
as JSON (not "no answer"), and the tool call that carried it is not one of the agent's calls
(as pydantic-ai's output tools are not), so `tool_faithfulness` does not check the answer
against the answer itself."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel
from tests.frameworks.langgraph.scripted_chat import ScriptedChat, get_weather

from agenteval import EvalCase, evaluate
from agenteval.trace import Trial


class Weather(BaseModel):
    """The weather in a city."""

    city: str
    celsius: int


def respond(messages: list[Any]) -> AIMessage:
    """Asks for the weather, then gives it as the structured `Weather` (12 C: not what the
    tool said, which `tool_faithfulness` must see)."""
    if isinstance(messages[-1], ToolMessage):
        args = {"city": "Paris", "celsius": 12}
        return AIMessage(content="", tool_calls=[{"name": "Weather", "args": args, "id": "c2"}])
    args = {"city": "Paris"}
    return AIMessage(content="", tool_calls=[{"name": "get_weather", "args": args, "id": "c1"}])


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    structured_response: Any


def structured_graph(*, own_tools: bool = False) -> Any:
    """A `StateGraph` keeping `create_agent`'s contract for a `ToolStrategy` answer (its model
    node answers the schema's tool call and sets `structured_response`). `own_tools`: its tools
    run by a node of its own, no `ToolNode`."""
    model = ScriptedChat(respond=respond).bind_tools([get_weather, Weather])

    async def call_model(state: State) -> dict[str, Any]:
        output = await model.ainvoke(state["messages"])
        for call in output.tool_calls:
            if call["name"] == "Weather":
                answer = Weather(**call["args"])
                reply = ToolMessage(
                    f"Returning structured response: {answer}",
                    tool_call_id=call["id"],
                    name="Weather",
                )
                return {"messages": [output, reply], "structured_response": answer}
        return {"messages": [output], "structured_response": None}

    def route(state: State) -> str:
        return END if state.get("structured_response") is not None else tools_condition(state)

    async def run_tools(state: State) -> dict[str, Any]:
        asked = state["messages"][-1].tool_calls
        return {"messages": [await get_weather.ainvoke(call) for call in asked]}

    builder = StateGraph(State)
    builder.add_node("model", call_model)
    builder.add_node("tools", run_tools if own_tools else ToolNode([get_weather]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", route, {"tools": "tools", END: END})
    builder.add_edge("tools", "model")
    return builder.compile(name="structured")


def create_agent_graph() -> Any:
    agents = pytest.importorskip("langchain.agents")
    from langchain.agents.structured_output import ToolStrategy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return agents.create_agent(
            ScriptedChat(respond=respond), [get_weather], response_format=ToolStrategy(Weather)
        )


def _check(trial: Trial) -> None:
    assert trial.failure is None
    assert json.loads(trial.output or "") == {"city": "Paris", "celsius": 12}
    assert [(c.name, c.id, c.result) for c in trial.tool_calls] == [
        ("get_weather", "c1", '{"city": "Paris", "celsius": 15}')
    ]
    assert len(trial.model_calls) == 2


@pytest.mark.parametrize("build", [structured_graph, create_agent_graph])
def test_a_structured_response_given_by_a_tool_call_is_the_answer(
    tmp_path: Path, build: Any
) -> None:
    case = EvalCase(id="w", input="weather Paris", expected_tools=["get_weather"])
    (result,) = evaluate(
        build(), [case], store=tmp_path / "runs.db", scorers=["tool_faithfulness"]
    ).results
    _check(result.trial)
    # 12 is in no tool result: the answer is not supported by its own carrying call.
    assert result.scores["tool_faithfulness"].passed is False


def respond_after_a_bad_answer(messages: list[Any]) -> AIMessage:
    """As `respond`, but the first structured answer fails the schema (`celsius` is no
    number), which `create_agent` answers with an error `ToolMessage` and asks again."""
    last = messages[-1]
    if isinstance(last, ToolMessage) and last.name == "Weather":
        args = {"city": "Paris", "celsius": 12}
        return AIMessage(content="", tool_calls=[{"name": "Weather", "args": args, "id": "c3"}])
    if isinstance(last, ToolMessage):
        args = {"city": "Paris", "celsius": "twelve"}
        return AIMessage(content="", tool_calls=[{"name": "Weather", "args": args, "id": "c2"}])
    args = {"city": "Paris"}
    return AIMessage(content="", tool_calls=[{"name": "get_weather", "args": args, "id": "c1"}])


class Forecast(BaseModel):
    """Tomorrow's weather in a city."""

    city: str
    sky: str


def respond_with_two_answers_first(messages: list[Any]) -> AIMessage:
    """As `respond`, but the first structured answer is two at once (`Weather` and
    `Forecast`), which `create_agent` refuses (one error `ToolMessage` each) and asks again."""
    last = messages[-1]
    if isinstance(last, ToolMessage) and last.name in ("Weather", "Forecast"):
        args = {"city": "Paris", "celsius": 12}
        return AIMessage(content="", tool_calls=[{"name": "Weather", "args": args, "id": "c4"}])
    if isinstance(last, ToolMessage):
        both = [
            {"name": "Weather", "args": {"city": "Paris", "celsius": 12}, "id": "c2"},
            {"name": "Forecast", "args": {"city": "Paris", "sky": "clear"}, "id": "c3"},
        ]
        return AIMessage(content="", tool_calls=both)
    args = {"city": "Paris"}
    return AIMessage(content="", tool_calls=[{"name": "get_weather", "args": args, "id": "c1"}])


def respond_with_the_other_member_refused_first(messages: list[Any]) -> AIMessage:
    """As `respond`, with the union `Weather | Forecast`: the first structured answer is a
    `Forecast` failing its schema (no `sky`), which `create_agent` refuses and asks again; the
    second is a `Weather`, another member of the union."""
    last = messages[-1]
    if isinstance(last, ToolMessage) and last.name == "Forecast":
        args = {"city": "Paris", "celsius": 12}
        return AIMessage(content="", tool_calls=[{"name": "Weather", "args": args, "id": "c3"}])
    if isinstance(last, ToolMessage):
        args = {"city": "Paris"}
        return AIMessage(content="", tool_calls=[{"name": "Forecast", "args": args, "id": "c2"}])
    args = {"city": "Paris"}
    return AIMessage(content="", tool_calls=[{"name": "get_weather", "args": args, "id": "c1"}])


@pytest.mark.parametrize(
    ("respond_with", "schema"),
    [
        (respond_after_a_bad_answer, Weather),
        (respond_with_two_answers_first, Weather | Forecast),
        (respond_with_the_other_member_refused_first, Weather | Forecast),
    ],
    ids=["failing-the-schema", "two-answers", "another-member-failing"],
)
def test_a_structured_answer_asked_again_leaves_no_call(
    tmp_path: Path, respond_with: Any, schema: Any
) -> None:
    # Before, the refused carrying calls stayed as calls of tools "Weather" and "Forecast"
    # (their results the refusal): tool_use and max_tool_calls counted calls the agent never
    # made. A union's member refused before another answered (`Forecast`, then `Weather`)
    # stayed until its members were told by the binding that offered them together.
    agents = pytest.importorskip("langchain.agents")
    from langchain.agents.structured_output import ToolStrategy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = agents.create_agent(
            ScriptedChat(respond=respond_with), [get_weather], response_format=ToolStrategy(schema)
        )
    case = EvalCase(id="w", input="weather Paris", expected_tools=["get_weather"])
    (result,) = evaluate(
        graph, [case], store=tmp_path / "runs.db", scorers=["tool_selection"]
    ).results
    trial = result.trial
    assert trial.failure is None
    assert json.loads(trial.output or "") == {"city": "Paris", "celsius": 12}
    assert [(c.name, c.id) for c in trial.tool_calls] == [("get_weather", "c1")]
    assert len(trial.model_calls) == 3
    assert result.scores["tool_selection"].passed is True


def test_a_tool_run_by_a_node_of_the_graph_is_no_member_of_the_answer(tmp_path: Path) -> None:
    # `get_weather` is offered with the schema and no ToolNode runs it, but it ran: its call is
    # the agent's, not a refused structured answer.
    case = EvalCase(id="w", input="weather Paris")
    graph = structured_graph(own_tools=True)
    (result,) = evaluate(graph, [case], store=tmp_path / "runs.db").results
    _check(result.trial)
