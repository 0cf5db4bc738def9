"""Tools that note every real run, and real LangGraph agents over a scripted chat model that
call them, for the tests of tool mocks on LangGraph agents."""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition
from tests.frameworks.langgraph.scripted_chat import ScriptedChat

import agenteval

_LOCK = threading.Lock()
RAN: list[str] = []
"""Every real run of a tool below, as `name(args)`: a mocked call never adds one."""


def ran(entry: str) -> None:
    with _LOCK:
        RAN.append(entry)


@tool
def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city, in degrees Celsius."""
    ran(f"get_weather({city})")
    return {"city": city, "celsius": 99}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    ran(f"add({a}, {b})")
    return a + b


@tool
def charge(amount: int) -> str:
    """Charge the customer's card."""
    ran(f"charge({amount})")
    return "charged for real"


@tool
def flaky(amount: int) -> str:
    """A tool whose service times out, for real."""
    ran(f"flaky({amount})")
    raise TimeoutError("the service timed out")


@tool
def tick() -> str:
    """Count one in the trial's environment state."""
    state = agenteval.state()
    state["n"] = state.get("n", 0) + 1
    ran("tick()")
    return f"n={state['n']}"


TOOLS = [get_weather, add, charge, flaky, tick]


def respond(messages: Sequence[BaseMessage]) -> AIMessage:
    """The script: `weather CITY`, `add A B`, `charge N`, `flaky N`, `tick` call that tool
    (`lax` calls `add` with a="2", `bad` with a="two"); after the tools answered, their
    results are the answer (`name=content`, or `name failed`); anything else is echoed. Call
    ids count the conversation's messages, so every call of a thread has its own."""
    results: list[ToolMessage] = []
    text = ""
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            results.insert(0, message)
        elif isinstance(message, HumanMessage):
            text = str(message.content)
            break
    if results:
        parts = [
            f"{r.name} failed" if r.status == "error" else f"{r.name}={r.content}" for r in results
        ]
        return AIMessage(content="; ".join(parts))
    call_id = f"call-{len(messages)}"
    args: dict[str, Any]
    if match := re.fullmatch(r"weather (.+)", text):
        name, args = "get_weather", {"city": match.group(1)}
    elif match := re.fullmatch(r"add (-?\d+) (-?\d+)", text):
        name, args = "add", {"a": int(match.group(1)), "b": int(match.group(2))}
    elif match := re.fullmatch(r"(charge|flaky) (\d+)", text):
        name, args = match.group(1), {"amount": int(match.group(2))}
    elif text == "tick":
        name, args = "tick", {}
    elif text in ("lax", "bad"):
        name, args = "add", {"a": "2" if text == "lax" else "two", "b": 3}
    else:
        return AIMessage(content=f"echo: {text}")
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def react_agent(tools: Any = None, *, name: str = "mocked") -> Any:
    """`create_react_agent` over the script: `tools` a `ToolNode` of the test's, else the tools
    as a list (the agent makes its own `ToolNode`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent moved to langchain (not here)
        return create_react_agent(ScriptedChat(respond=respond), tools or TOOLS, name=name)


def hand_built(tool_node: Any = None) -> Any:
    """A `StateGraph` of our own: the model, a `ToolNode`, looping until no tool is asked."""
    model = ScriptedChat(respond=respond).bind_tools(TOOLS)

    async def assistant(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("assistant", assistant)
    builder.add_node("tools", tool_node or ToolNode(TOOLS, handle_tool_errors=True))
    builder.add_edge(START, "assistant")
    builder.add_conditional_edges("assistant", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "assistant")
    return builder.compile(name="hand_built")


def parent_of(inner: Any) -> Any:
    """A graph whose only node is the compiled graph `inner` (a subgraph)."""
    builder = StateGraph(MessagesState)
    builder.add_node("inner", inner)
    builder.add_edge(START, "inner")
    builder.add_edge("inner", END)
    return builder.compile(name="parent")


def own_node_graph() -> Any:
    """A graph with no `ToolNode`: its node calls `get_weather.invoke` itself, and answers
    with the result, or with the type of the error it caught."""

    def lookup(state: MessagesState) -> dict[str, Any]:
        city = str(state["messages"][-1].content)
        try:
            answer = str(get_weather.invoke({"city": city}))
        except Exception as error:
            answer = f"caught {type(error).__name__}: {error}"
        return {"messages": [AIMessage(content=answer)]}

    builder = StateGraph(MessagesState)
    builder.add_node("lookup", lookup)
    builder.add_edge(START, "lookup")
    builder.add_edge("lookup", END)
    return builder.compile(name="own_node")
