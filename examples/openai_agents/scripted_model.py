"""A stand-in for an LLM, so that the example runs offline: an OpenAI Agents SDK `Model` whose
answers come from a few rules instead of a network call.

The SDK's `Model` interface is public: `get_response` gets the agent's instructions, the
conversation so far (the SDK's input items) and the tools, and returns a `ModelResponse` whose
output is tool calls or a message, with the tokens it used. `ScriptedModel` reads the last user
message and the tool results since then, and asks a rule function (`support_agent.py` gives one
per agent) what to do next. Everything else (running the tools, handoffs, guardrails, the turn
loop) is the SDK's own, as with a real model.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from agents import Model, ModelResponse, Usage

MODEL_NAME = "scripted-support-1"
"""The name runs record for this model (`prices:` in agenteval.yaml prices it)."""


@dataclass(frozen=True)
class Call:
    """A tool the model asks for, with its arguments."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Seen:
    """What the model reads from the conversation: the last user message, and what each tool
    returned since then, by tool name, in order."""

    question: str
    results: dict[str, list[str]]

    def called(self, tool: str) -> bool:
        return tool in self.results


Rule = Callable[[Seen], "list[Call] | str"]
"""One agent's behaviour: the tool calls to make next (several: in parallel), or the answer."""

_ids = itertools.count(1)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(str(part.get("text", "")) for part in content or () if isinstance(part, dict))


def read(items: str | list[Any]) -> Seen:
    """The last user message of the SDK's input items, and the tool results after it."""
    if isinstance(items, str):
        return Seen(items, {})
    last_user = max(i for i, item in enumerate(items) if item.get("role") == "user")
    names: dict[str, str] = {}
    results: dict[str, list[str]] = {}
    for item in items[last_user + 1 :]:
        if item.get("type") == "function_call":
            names[item["call_id"]] = item["name"]
        elif item.get("type") == "function_call_output":
            name = names.get(item["call_id"], "")
            results.setdefault(name, []).append(str(item.get("output", "")))
    return Seen(_text(items[last_user].get("content")), results)


class ScriptedModel(Model):
    """A model that follows `rule` (see `Rule`), and counts its tokens from the text it reads
    and writes, about four characters a token."""

    model = MODEL_NAME

    def __init__(self, rule: Rule) -> None:
        self.rule = rule

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        **_: Any,
    ) -> ModelResponse:
        decision = self.rule(read(input))
        output: list[Any]
        if isinstance(decision, str):
            text = ResponseOutputText(type="output_text", text=decision, annotations=[])
            output = [
                ResponseOutputMessage(
                    id=f"msg_{next(_ids)}",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[text],
                )
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    type="function_call",
                    id=f"fc_{number}",
                    call_id=f"call_{number}",
                    name=call.tool,
                    arguments=json.dumps(call.arguments),
                )
                for call in decision
                for number in [next(_ids)]
            ]
        read_chars = len(system_instructions or "") + len(json.dumps(input, default=str))
        wrote_chars = len(json.dumps([item.model_dump() for item in output]))
        tokens_in, tokens_out = read_chars // 4, wrote_chars // 4
        usage = Usage(
            requests=1,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            total_tokens=tokens_in + tokens_out,
        )
        return ModelResponse(output=output, usage=usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the scripted model does not stream")
