"""The `anthropic` judge: the Messages API, the verdict as a forced tool call.

The request offers one tool whose input schema is the verdict schema and forces the model to
call it; the verdict is that `tool_use` block's `input`. No tool call (a refusal, a cut-off
answer) gives `verdict=None` with the text blocks in `raw`.

Sampling parameters the SDK's `messages.create` does not take as arguments (in anthropic 2.x
that includes `temperature`, `top_p` and `top_k`) are sent in the request body as they are.
"""

from __future__ import annotations

import json
from typing import Any

from anthropic import AsyncAnthropic
from anthropic.types import Message, MessageParam, ToolChoiceToolParam, ToolParam

from agenteval.judge.provider import JudgeReply, JudgeRequest
from agenteval.judge.providers.common import SdkProvider, split_params
from agenteval.providers import anthropic

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicProvider"]

DEFAULT_MAX_TOKENS = 1024
"""`max_tokens` when the request's params do not set it (the Messages API requires one)."""

_RESERVED = frozenset(
    {
        "model",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "stream",
        "timeout",
        "extra_headers",
        "extra_query",
        "extra_body",
    }
)


class AnthropicProvider(SdkProvider[AsyncAnthropic]):
    """A judge over `anthropic.AsyncAnthropic`, with the SDK's retries off (agenteval retries)."""

    name = "anthropic"

    def make_client(
        self, *, api_key: str, base_url: str | None, timeout_s: float
    ) -> AsyncAnthropic:
        """The SDK's client, its retries off."""
        return anthropic.client(api_key=api_key, base_url=base_url, timeout_s=timeout_s)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """Force a call of the verdict tool; raise the SDK's errors."""
        params = dict(request.params)
        max_tokens = int(params.pop("max_tokens", None) or DEFAULT_MAX_TOKENS)
        known, extra = split_params(
            params, provider=self.name, accepted=anthropic.CREATE_PARAMETERS, reserved=_RESERVED
        )
        messages: list[MessageParam] = [{"role": "user", "content": request.user}]
        tools: list[ToolParam] = [
            {
                "name": request.schema_name,
                "description": "Record your verdict.",
                "input_schema": request.verdict_schema,
            }
        ]
        tool_choice: ToolChoiceToolParam = {"type": "tool", "name": request.schema_name}
        message: Message = await self._client.messages.create(
            model=request.model,
            max_tokens=max_tokens,
            system=request.system,
            messages=messages,
            tools=tools,
            tool_choice=tool_choice,
            timeout=request.timeout_s,
            extra_body=extra or None,
            **known,
        )
        return _reply(message, request.schema_name)

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections."""
        await self._client.close()


def _reply(message: Message, tool_name: str) -> JudgeReply:
    verdict: dict[str, Any] | None = None
    texts: list[str] = []
    for block in message.content:
        if block.type == "tool_use" and verdict is None and block.name == tool_name:
            verdict = dict(block.input)
        elif block.type == "text":
            texts.append(block.text)
    raw = json.dumps(verdict) if verdict is not None else "\n".join(texts)
    return JudgeReply(
        verdict=verdict,
        raw=raw,
        usage=anthropic.usage(message),
        model=message.model,
        finish_reason=message.stop_reason,
    )
