"""The agents under test, the cases they answer and what each case must record.

Two agents, each as an application writes it: a plain openai-SDK tool loop (the most common
setup, and the one the openai instrumentations see), and a pydantic-ai agent on its OpenAI chat
model. Both call the loopback server of `loopback.py` and run the same two tools; `get_weather`
fails for a city it does not know.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agenteval import EvalCase, ExpectedCall
from agenteval.pricing import ModelPrice, PriceTable

from .loopback import FIRST_USAGE, REQUEST_MODEL, SCRIPTS, SECOND_USAGE

WEATHER = {"Paris": "sunny, 18 C"}
TIMES = {"CET": "12:00"}


def get_weather(city: str) -> str:
    """Today's weather in a city."""
    if city not in WEATHER:
        raise ValueError(f"unknown city: {city}")
    return WEATHER[city]


def get_time(tz: str) -> str:
    """The time now in a time zone."""
    return TIMES[tz]


TOOLS: dict[str, Callable[..., str]] = {"get_weather": get_weather, "get_time": get_time}
TOOL_SCHEMAS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Today's weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "The time now in a time zone.",
            "parameters": {
                "type": "object",
                "properties": {"tz": {"type": "string"}},
                "required": ["tz"],
                "additionalProperties": False,
            },
        },
    },
]


def run_tool(tools: Mapping[str, Callable[..., str]], name: str, arguments: str) -> str:
    """What the tool loops send back for one call: the tool's result, or for a tool that
    raises, `{"error": "..."}`, the way such loops usually do (the chat API has no error
    channel for a tool result)."""
    try:
        return tools[name](**json.loads(arguments))
    except Exception as exc:  # the tool's failure goes back to the model
        return json.dumps({"error": str(exc)})


def openai_agent(
    base_url: str, tools: Mapping[str, Callable[..., str]] = TOOLS
) -> Callable[[str], str]:
    """A plain openai-SDK tool loop: ask, run the tools the model asks for, send their results
    back, until the model answers. A tool that raises is reported to the model as
    `{"error": "..."}`, the way such loops usually do (the chat API has no error channel for a
    tool result). `tools` are the functions it runs, by name (the plain ones, or the same
    wrapped by an instrumentation's tool decorator)."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0)

    def answer(question: str) -> str:
        messages: list[Any] = [
            {"role": "system", "content": "You answer weather questions briefly."},
            {"role": "user", "content": question},
        ]
        for _ in range(4):
            response = client.chat.completions.create(
                model=REQUEST_MODEL, messages=messages, tools=TOOL_SCHEMAS
            )
            message = response.choices[0].message
            if not message.tool_calls:
                return message.content or ""
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                function = getattr(call, "function")  # noqa: B009 - a union member's field
                content = run_tool(tools, function.name, function.arguments)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        raise RuntimeError("the model never answered")

    return answer


def streaming_openai_agent(base_url: str, *, include_usage: bool = True) -> Callable[[str], str]:
    """`openai_agent`, streaming each response (`stream=True`, with
    `stream_options={"include_usage": True}` when `include_usage`) and putting the message
    together from its chunks, as a chat UI's agent does."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0)
    extra: dict[str, Any] = {"stream_options": {"include_usage": True}} if include_usage else {}

    def answer(question: str) -> str:
        messages: list[Any] = [
            {"role": "system", "content": "You answer weather questions briefly."},
            {"role": "user", "content": question},
        ]
        for _ in range(4):
            stream = client.chat.completions.create(
                model=REQUEST_MODEL, messages=messages, tools=TOOL_SCHEMAS, stream=True, **extra
            )
            text: list[str] = []
            calls: dict[int, dict[str, str]] = {}
            for chunk in stream:
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        text.append(delta.content)
                    for part in delta.tool_calls or []:
                        call = calls.setdefault(part.index, {"id": "", "name": "", "args": ""})
                        call["id"] = part.id or call["id"]
                        if part.function is not None:
                            call["name"] += part.function.name or ""
                            call["args"] += part.function.arguments or ""
            if not calls:
                return "".join(text)
            messages.append(
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["name"], "arguments": call["args"]},
                        }
                        for call in calls.values()
                    ],
                }
            )
            for call in calls.values():
                content = run_tool(TOOLS, call["name"], call["args"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
        raise RuntimeError("the model never answered")

    return answer


RESPONSES_TOOLS: list[Any] = [{"type": "function", **schema["function"]} for schema in TOOL_SCHEMAS]
"""The same tools as the Responses API declares them (no `function` wrapper)."""


def responses_agent(base_url: str, *, stream: bool = False) -> Callable[[str], str]:
    """`openai_agent` on the Responses API (`client.responses.create`), the API OpenAI
    recommends for new agents: the model's `function_call` items are run and answered with
    `function_call_output` items until it answers with a message. `stream`: each response
    streamed, and taken whole from its `response.completed` event."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0)

    def answer(question: str) -> str:
        items: list[Any] = [{"role": "user", "content": question}]
        for _ in range(4):
            asked: dict[str, Any] = {
                "model": REQUEST_MODEL,
                "instructions": "You answer weather questions briefly.",
                "input": items,
                "tools": RESPONSES_TOOLS,
            }
            if stream:  # read to its end, as a chat front end shows each delta
                with client.responses.create(**asked, stream=True) as events:
                    done = [e.response for e in events if e.type == "response.completed"]
                response = done[-1]
            else:
                response = client.responses.create(**asked)
            calls = [item for item in response.output if item.type == "function_call"]
            if not calls:
                return response.output_text
            items += [item.model_dump(exclude_none=True) for item in response.output]
            for call in calls:
                content = run_tool(TOOLS, call.name, call.arguments)
                items.append(
                    {"type": "function_call_output", "call_id": call.call_id, "output": content}
                )
        raise RuntimeError("the model never answered")

    return answer


def pydantic_ai_agent(base_url: str) -> Callable[[str], Awaitable[str]]:
    """A pydantic-ai agent on its OpenAI chat model, instrumented by pydantic-ai itself (the
    global TracerProvider, as set when it is built). `get_weather` raises `ModelRetry` for a
    city it does not know: pydantic-ai reports that back to the model as a retry."""
    import openai
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
    model = OpenAIChatModel(REQUEST_MODEL, provider=OpenAIProvider(openai_client=client))
    agent: Agent[None, str] = Agent(
        model,
        name="weather",
        instructions="You answer weather questions briefly.",
    )
    agent.instrument = InstrumentationSettings()  # this agent only; not Agent.instrument_all

    @agent.tool_plain(name="get_weather")
    def weather(city: str) -> str:
        """Today's weather in a city."""
        try:
            return get_weather(city)
        except ValueError as exc:
            raise ModelRetry(str(exc)) from exc

    @agent.tool_plain(name="get_time")
    def time_in(tz: str) -> str:
        """The time now in a time zone."""
        return get_time(tz)

    async def answer(question: str) -> str:
        return (await agent.run(question)).output

    return answer


CASES = [
    EvalCase(
        id="paris",
        input="What are the weather and the time in Paris?",
        expected_output=SCRIPTS["paris"][-1].text,
        expected_tools=["get_weather", "get_time"],
        expected_trajectory=[
            ExpectedCall(name="get_weather", arguments={"city": "Paris"}),
            ExpectedCall(name="get_time", arguments={"tz": "CET"}),
        ],
    ),
    EvalCase(
        id="atlantis",
        input="What is the weather in Atlantis?",
        expected_output=SCRIPTS["atlantis"][-1].text,
        expected_tools=["get_weather"],
        expected_trajectory=[ExpectedCall(name="get_weather", arguments={"city": "Atlantis"})],
    ),
    EvalCase(
        id="hello",
        input="Hello there!",
        expected_output=SCRIPTS["hello"][-1].text,
        expected_tools=[],
        expected_trajectory=[],
    ),
]

SCORERS = ["tool_call_accuracy[require_order]"]
"""Added to the built-in ones (tool_selection, trajectory_order, tool_arguments_valid,
tool_execution, exact_match, ...)."""

PRICE = ModelPrice(input=1.0, output=4.0, cached_input=0.5)
PRICES = PriceTable({REQUEST_MODEL: PRICE})


@dataclass(frozen=True)
class Expected:
    """What a case's trial must record: its tool calls `(name, arguments, id)`, the result of
    each call that worked (None for the one that failed), the failed calls' error text, the
    answer, and the tokens of its model calls."""

    calls: list[tuple[str, dict[str, Any], str]]
    results: list[str | None]
    error: str | None
    output: str
    model_calls: int


def _usage(turns: int, cached: bool) -> dict[str, int]:
    used = [FIRST_USAGE, SECOND_USAGE][:turns]
    return {
        "input_tokens": sum(u[0] for u in used),
        "output_tokens": sum(u[1] for u in used),
        "cached_tokens": sum(u[2] for u in used) if cached else 0,
        "reasoning_tokens": sum(u[3] for u in used) if cached else 0,
    }


def expected_usage(case_id: str, *, details: bool) -> dict[str, int]:
    """The case's tokens over its model calls; `details` when the family records cached and
    reasoning tokens (openai-v2 2.4b0 records neither on chat completions)."""
    return _usage(len(SCRIPTS[case_id]), details)


def expected_cost(case_id: str, *, details: bool) -> float:
    """What the case's model calls cost at PRICES, as the family's tokens say."""
    turns = [FIRST_USAGE, SECOND_USAGE][: len(SCRIPTS[case_id])]
    total = 0.0
    for prompt, completion, cached, _ in turns:
        cached = cached if details else 0
        total += (prompt - cached) * PRICE.input + cached * 0.5 + completion * PRICE.output
    return total / 1_000_000


def expected_scores(case_id: str, *, tool_schemas: bool) -> dict[str, tuple[float | None, Any]]:
    """(value, passed) of each checked score; `tool_schemas` when the family records the
    tools offered (without them there is no tool list to check arguments against)."""
    expected = EXPECTED[case_id]
    made_calls = bool(expected.calls)
    executed: tuple[float | None, Any] = (None, None)  # no call, nothing to check
    if made_calls:
        executed = (0.0, False) if expected.error is not None else (1.0, True)
    return {
        "tool_selection": (1.0, True),
        "trajectory_order": (1.0, True),
        "tool_call_accuracy[require_order]": (1.0, True),
        "tool_arguments_valid": (1.0, True) if made_calls and tool_schemas else (None, None),
        "tool_execution": executed,
        "exact_match": (1.0, True),
    }


EXPECTED = {
    "paris": Expected(
        calls=[
            ("get_weather", {"city": "Paris"}, "call_paris_weather"),
            ("get_time", {"tz": "CET"}, "call_paris_time"),
        ],
        results=["sunny, 18 C", "12:00"],
        error=None,
        output=SCRIPTS["paris"][-1].text or "",
        model_calls=2,
    ),
    "atlantis": Expected(
        calls=[("get_weather", {"city": "Atlantis"}, "call_atlantis_weather")],
        results=[None],
        error="unknown city: Atlantis",
        output=SCRIPTS["atlantis"][-1].text or "",
        model_calls=2,
    ),
    "hello": Expected(
        calls=[],
        results=[],
        error=None,
        output=SCRIPTS["hello"][-1].text or "",
        model_calls=1,
    ),
}
