"""The built-in agent on OpenAI (or an OpenAI-compatible server): chat completions with
``tools``, ``tool_calls`` in, one ``tool`` message per result out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenteval.agents.chats.conversation import (
    ChatSetup,
    ModelReply,
    ToolOutcome,
    ToolRequest,
    parse_arguments,
    split_agent_params,
)
from agenteval.providers import openai

__all__ = ["CHAT", "OpenAIChat"]


class OpenAIChat:
    """Chat completions with tools: `tool_calls` in, one `tool` message per result out."""

    def __init__(self, setup: ChatSetup, messages: list[dict[str, str]]) -> None:
        self._client = openai.client(
            api_key=setup.api_key,
            base_url=setup.base_url,
            timeout_s=setup.timeout_s,
            shared_tls=True,
        )
        self._known, self._extra = split_agent_params(
            setup.params, "openai", openai.CREATE_PARAMETERS
        )
        self._model = setup.model
        self._timeout = setup.timeout_s
        self._tools = [
            {
                "type": "function",
                "function": {
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": parameters,
                },
            }
            for spec, parameters in setup.tool_schemas()
        ]
        self._messages: list[dict[str, Any]] = []
        if setup.system_prompt:
            self._messages.append({"role": "system", "content": setup.system_prompt})
        self._messages.extend(messages)

    async def complete(self) -> ModelReply:
        """One model call on the conversation so far; the answer joins the conversation."""
        tools: dict[str, Any] = {"tools": self._tools} if self._tools else {}
        completion = await self._client.chat.completions.create(
            model=self._model,
            messages=self._messages,  # type: ignore[arg-type]
            timeout=self._timeout,
            extra_body=self._extra or None,
            **tools,
            **self._known,
        )
        usage = openai.usage(completion.usage)
        if not completion.choices:
            return ModelReply(None, [], usage, completion.model, None)
        choice = completion.choices[0]
        message = choice.message
        calls = [
            ToolRequest(
                id=call.id,
                name=call.function.name,
                arguments=parse_arguments(call.function.arguments),
                raw_arguments=call.function.arguments,
            )
            for call in message.tool_calls or []
            if call.type == "function"
        ]
        said: dict[str, Any] = {"role": "assistant", "content": message.content}
        if calls:
            said["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.raw_arguments},
                }
                for call in calls
            ]
        self._messages.append(said)
        text = message.content if message.content is not None else message.refusal
        return ModelReply(text, calls, usage, completion.model, choice.finish_reason)

    def add_results(self, outcomes: Sequence[ToolOutcome]) -> None:
        """The tool results, one `tool` message each."""
        for outcome in outcomes:
            self._messages.append(
                {"role": "tool", "tool_call_id": outcome.call.id, "content": outcome.text}
            )

    async def aclose(self) -> None:
        """Close the client's HTTP connections."""
        await self._client.close()


CHAT = OpenAIChat
