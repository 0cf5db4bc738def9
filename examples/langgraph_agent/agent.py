"""A travel-desk agent built with LangGraph, as a LangGraph user writes one: tools, a chat model
bound to them, `create_react_agent`, a checkpointer. agenteval runs the compiled graph as it is
(`agent: agent.py:graph` in agenteval.yaml); nothing here knows of agenteval.

The chat model is simulated (`DeskModel`, a LangChain `BaseChatModel`), so the example runs
offline: it picks tools by a few rules on the user's message, asks for several at once when
the question names several flights, and answers from the tools' results. Like a real model it
reports token usage (`usage_metadata`, about four characters a token) and its model name. Swap
it for `ChatOpenAI(model="gpt-4o-mini")` and the rest stays the same.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolNode, create_react_agent

FLIGHTS = {
    "AT101": {"from": "LIS", "to": "OPO", "status": "on time", "fare_eur": 79},
    "AT202": {"from": "LIS", "to": "MAD", "status": "delayed 40 min", "fare_eur": 95},
    "AT303": {"from": "OPO", "to": "PAR", "status": "cancelled", "fare_eur": 120},
}
RATES = {"USD": 1.08, "GBP": 0.85}
TAKEN = {("AT101", "1A")}


@tool
def flight_status(flight: str) -> dict[str, Any]:
    """The status, route and fare of a flight, by its number (AT101)."""
    if flight not in FLIGHTS:
        raise KeyError(f"no flight {flight}")
    return {"flight": flight, **FLIGHTS[flight]}


@tool
def convert(amount: float, currency: str) -> float:
    """Convert an amount in euros to USD or GBP."""
    return round(amount * RATES[currency], 2)


@tool
def book_seat(flight: str, seat: str) -> str:
    """Book a seat (12C) on a flight; fails if the seat is taken."""
    if (flight, seat) in TAKEN:
        raise ValueError(f"seat {seat} on {flight} is taken")
    return f"booked {seat} on {flight}"


TOOLS = [flight_status, convert, book_seat]


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class DeskModel(BaseChatModel):
    """The simulated chat model: `_decide` is its whole mind."""

    @property
    def _llm_type(self) -> str:
        return "desk-sim"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = _decide(messages)
        read = sum(_tokens(str(m.content)) for m in messages)
        wrote = _tokens(str(reply.content)) + 8 * len(reply.tool_calls)
        reply.usage_metadata = {
            "input_tokens": read,
            "output_tokens": wrote,
            "total_tokens": read + wrote,
        }
        reply.response_metadata = {"model_name": "travel-sim-1"}
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{name}_{n}"}


def _decide(messages: Sequence[BaseMessage]) -> AIMessage:
    """One step of the simulated model: ask for tools, or answer from their results."""
    turn: list[BaseMessage] = []
    for message in reversed(messages):
        turn.insert(0, message)
        if isinstance(message, HumanMessage):
            break
    question = str(turn[0].content)
    results = [m for m in turn if isinstance(m, ToolMessage)]
    if results:
        return AIMessage(content=_answer(question, results, messages))
    flights = re.findall(r"\bAT\d{3}\b", question)
    if flights and "seat" in question:
        seat = re.search(r"seat (\w+)", question)
        args = {"flight": flights[0], "seat": seat.group(1) if seat else ""}
        return AIMessage(content="", tool_calls=[_call("book_seat", args, 0)])
    if "in dollars" in question or "in pounds" in question:
        # The fare is in the conversation already (an earlier turn looked it up).
        fare = re.findall(r"(\d+) EUR", " ".join(str(m.content) for m in messages))
        currency = "USD" if "dollars" in question else "GBP"
        if fare:
            args = {"amount": float(fare[-1]), "currency": currency}
            return AIMessage(content="", tool_calls=[_call("convert", args, 0)])
    if "how much is 100 euros" in question.lower():
        # A planted mistake: the amount sent as text, which the tool's schema refuses.
        args = {"amount": "one hundred", "currency": "USD"}
        return AIMessage(content="", tool_calls=[_call("convert", args, 0)])
    if flights:
        calls = [_call("flight_status", {"flight": f}, i) for i, f in enumerate(flights)]
        return AIMessage(content="", tool_calls=calls)  # several flights: parallel calls
    return AIMessage(content="I can check flights, convert fares and book seats.")


def _answer(question: str, results: list[ToolMessage], messages: Sequence[BaseMessage]) -> str:
    failed = [r for r in results if r.status == "error"]
    if failed:
        return "Sorry, that did not work: " + "; ".join(str(r.content) for r in failed)
    if results[0].name == "book_seat":
        return str(results[0].content).capitalize() + "."
    if results[0].name == "convert":
        return f"That is {results[0].content}."
    lines = []
    for result in results:
        info = _json(str(result.content))
        if "fare" in question:
            lines.append(f"{info['flight']} costs {info['fare_eur']} EUR")
        elif "where" in question.lower():
            # A planted mistake: the origin given for the destination.
            lines.append(f"{info['flight']} to {info['from']}")
        else:
            lines.append(f"{info['flight']} is {info['status']}")
    return "; ".join(lines) + "."


def _json(text: str) -> dict[str, Any]:
    """A tool's result as a dict (the ToolNode gives the model a dict as JSON text)."""
    value: dict[str, Any] = json.loads(text)
    return value


with warnings.catch_warnings():
    # LangGraph 1.x points to `langchain.agents.create_agent` (in the `langchain` package); this
    # example keeps to langgraph alone. A graph made by either runs the same under agenteval.
    warnings.simplefilter("ignore", DeprecationWarning)
    graph = create_react_agent(
        DeskModel(),
        # Tool errors go back to the model as an error ToolMessage (LangGraph's default
        # re-raises them, failing the run).
        ToolNode(TOOLS, handle_tool_errors=True),
        checkpointer=InMemorySaver(),
        name="travel_desk",
    )
