"""Real LangGraph agents over a scripted chat model, offline: the model is a `BaseChatModel`
whose answer is a function of the conversation it is given (so concurrent threads never share
anything), asking for tools with ids and reporting `usage_metadata` as a provider would."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition

MODEL = "scripted-1"

Respond = Callable[[Sequence[BaseMessage]], AIMessage]


class ScriptedChat(BaseChatModel):
    """A chat model answering from `respond(messages)`, with usage: input tokens are the
    words of the conversation, 2 of them cached after the first call; output tokens the words
    of the answer plus 3 per tool call, 1 of them reasoning."""

    respond: Respond
    report_usage: bool = True
    """False: no `usage_metadata` at all, as a streaming ChatOpenAI without `stream_usage`."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        answer = self.respond(messages)
        words = sum(len(str(m.content).split()) for m in messages)
        calls = len(answer.tool_calls)
        answer.usage_metadata = (
            None
            if not self.report_usage
            else {
                "input_tokens": words,
                "output_tokens": len(str(answer.content).split()) + 3 * calls,
                "total_tokens": words + len(str(answer.content).split()) + 3 * calls,
                "input_token_details": {"cache_read": 2 if len(messages) > 1 else 0},
                "output_token_details": {"reasoning": 1},
            }
        )
        answer.response_metadata = {"model_name": MODEL, "model_provider": "scripted"}
        return ChatResult(generations=[ChatGeneration(message=answer)])


@tool
def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city, in degrees Celsius."""
    return {"city": city, "celsius": 10 + len(city)}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def charge(amount: int) -> str:
    """Charge the customer's card (always declined here)."""
    raise ValueError(f"card declined for {amount}")


TOOLS = [get_weather, add, charge]


def _turn(messages: Sequence[BaseMessage]) -> tuple[str, list[ToolMessage]]:
    """The last user message and the tool results since it."""
    results: list[ToolMessage] = []
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            results.insert(0, message)
        elif isinstance(message, HumanMessage):
            return str(message.content), results
    return "", results


def respond(messages: Sequence[BaseMessage]) -> AIMessage:
    """The script: `weather A and B` asks for the weather in each city at once (parallel
    calls), `add X Y` adds, `charge N` calls a tool that raises, `bad args` asks `add` with a
    string, `recall` repeats the first user message of the conversation, anything else is
    echoed. After the tools answered, their results are the answer."""
    text, results = _turn(messages)
    if results:
        parts = [
            f"{r.name} failed" if r.status == "error" else f"{r.name}={r.content}" for r in results
        ]
        # Content blocks, as providers send them: the answer is their text joined.
        blocks = [{"type": "text", "text": "results: "}, {"type": "text", "text": "; ".join(parts)}]
        return AIMessage(content=blocks)
    if match := re.fullmatch(r"weather (.+)", text):
        cities = [c.strip() for c in match.group(1).split(" and ")]
        calls = [
            {"name": "get_weather", "args": {"city": city}, "id": f"call-{i}"}
            for i, city in enumerate(cities)
        ]
        return AIMessage(content="", tool_calls=calls)
    if match := re.fullmatch(r"add (-?\d+) (-?\d+)", text):
        args = {"a": int(match.group(1)), "b": int(match.group(2))}
        return AIMessage(content="", tool_calls=[{"name": "add", "args": args, "id": "call-add"}])
    if match := re.fullmatch(r"charge (\d+)", text):
        args = {"amount": int(match.group(1))}
        return AIMessage(content="", tool_calls=[{"name": "charge", "args": args, "id": "call-c"}])
    if text == "bad args":
        args = {"a": "two", "b": 3}
        return AIMessage(content="", tool_calls=[{"name": "add", "args": args, "id": "call-bad"}])
    if text == "recall":
        first = next(m for m in messages if isinstance(m, HumanMessage))
        return AIMessage(content=f"you first said: {first.content}")
    return AIMessage(content=f"echo: {text}")


def react_agent(
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    handle_tool_errors: bool = True,
    name: str = "support",
    report_usage: bool = True,
) -> Any:
    """`create_react_agent` over the scripted model and the three tools."""
    with warnings.catch_warnings():
        # create_react_agent moved to `langchain.agents.create_agent` (not installed here).
        warnings.simplefilter("ignore")
        return create_react_agent(
            ScriptedChat(respond=respond, report_usage=report_usage),
            ToolNode(TOOLS, handle_tool_errors=handle_tool_errors),
            checkpointer=checkpointer,
            name=name,
        )


def hand_built_graph(*, checkpointer: BaseCheckpointSaver[Any] | None = None) -> Any:
    """A `StateGraph` of our own: a sync `triage` node that notes the turn, the model, and the
    prebuilt `ToolNode`, looping until the model asks for no tool."""
    model = ScriptedChat(respond=respond).bind_tools(TOOLS)

    def triage(state: MessagesState) -> dict[str, Any]:
        return {}

    async def assistant(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("triage", triage)
    builder.add_node("assistant", assistant)
    builder.add_node("tools", ToolNode(TOOLS, handle_tool_errors=True))
    builder.add_edge(START, "triage")
    builder.add_edge("triage", "assistant")
    builder.add_conditional_edges("assistant", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "assistant")
    return builder.compile(checkpointer=checkpointer, name="hand_built")
