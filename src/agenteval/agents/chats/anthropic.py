"""The built-in agent on Anthropic: the Messages API with tools, ``tool_use`` blocks in,
``tool_result`` blocks out."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agenteval.agents.chats.conversation import (
    DEFAULT_MAX_TOKENS,
    ChatSetup,
    ModelReply,
    ToolOutcome,
    ToolRequest,
    split_agent_params,
)
from agenteval.providers import anthropic

__all__ = ["CHAT", "AnthropicChat"]


class AnthropicChat:
    """The Messages API with tools: `tool_use` blocks in, `tool_result` blocks out."""

    def __init__(self, setup: ChatSetup, messages: list[dict[str, str]]) -> None:
        self._client = anthropic.client(
            api_key=setup.api_key,
            base_url=setup.base_url,
            timeout_s=setup.timeout_s,
            shared_tls=True,
        )
        params = dict(setup.params)
        self._max_tokens = int(params.pop("max_tokens", None) or DEFAULT_MAX_TOKENS)
        self._known, self._extra = split_agent_params(
            params, "anthropic", anthropic.CREATE_PARAMETERS
        )
        self._model = setup.model
        self._timeout = setup.timeout_s
        self._tools = [
            {"name": spec.name, "description": spec.description, "input_schema": parameters}
            for spec, parameters in setup.tool_schemas()
        ]
        systems = [setup.system_prompt] if setup.system_prompt else []
        self._messages: list[dict[str, Any]] = []
        for message in messages:
            if message["role"] == "system":
                systems.append(message["content"])
            else:
                role = "assistant" if message["role"] == "assistant" else "user"
                self._messages.append({"role": role, "content": message["content"]})
        self._system = "\n\n".join(systems)

    async def complete(self) -> ModelReply:
        """One model call on the conversation so far; the answer joins the conversation."""
        optional: dict[str, Any] = {"tools": self._tools} if self._tools else {}
        if self._system:
            optional["system"] = self._system
        message = await self._client.messages.create(
            model=self._model,
            max_tokens=self._max_tokens,
            messages=self._messages,  # type: ignore[arg-type]
            timeout=self._timeout,
            extra_body=self._extra or None,
            **optional,
            **self._known,
        )
        texts: list[str] = []
        calls: list[ToolRequest] = []
        content: list[dict[str, Any]] = []
        for block in message.content:
            if block.type == "text":
                texts.append(block.text)
                content.append({"type": "text", "text": block.text})
            elif block.type == "tool_use":
                arguments = block.input if isinstance(block.input, dict) else None
                calls.append(
                    ToolRequest(
                        id=block.id,
                        name=block.name,
                        arguments=dict(arguments) if arguments is not None else None,
                        raw_arguments=json.dumps(block.input, default=repr),
                    )
                )
                content.append(
                    {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
                )
            else:  # thinking blocks go back as they came, as the API requires
                content.append(block.model_dump(exclude_none=True))
        self._messages.append({"role": "assistant", "content": content})
        text = "".join(texts) if texts else None
        usage = anthropic.usage(message)
        return ModelReply(text, calls, usage, message.model, message.stop_reason)

    def add_results(self, outcomes: Sequence[ToolOutcome]) -> None:
        """The tool results, as one user message of `tool_result` blocks."""
        self._messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": outcome.call.id,
                        "content": outcome.text,
                        **({"is_error": True} if outcome.error is not None else {}),
                    }
                    for outcome in outcomes
                ],
            }
        )

    async def aclose(self) -> None:
        """Close the client's HTTP connections."""
        await self._client.close()


CHAT = AnthropicChat
