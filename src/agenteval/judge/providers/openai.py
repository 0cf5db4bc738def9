"""The `openai` judge: OpenAI and every OpenAI-compatible server, through chat completions.

The verdict is asked for with a strict JSON-schema response format and read from the message
content with `json.loads`. A refusal (`message.refusal`) or content that is not a JSON object
gives `verdict=None`, the text kept in `raw`.
"""

from __future__ import annotations

from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from openai.types.shared_params import ResponseFormatJSONSchema

from agenteval.judge.provider import JudgeReply, JudgeRequest
from agenteval.judge.providers.common import SdkProvider, parse_verdict, split_params
from agenteval.providers import openai

__all__ = ["OpenAIProvider"]

_RESERVED = frozenset(
    {
        "model",
        "messages",
        "response_format",
        "stream",
        "stream_options",
        "tools",
        "tool_choice",
        "functions",
        "function_call",
        "parallel_tool_calls",
        "timeout",
        "extra_headers",
        "extra_query",
        "extra_body",
    }
)


class OpenAIProvider(SdkProvider[AsyncOpenAI]):
    """A judge over `openai.AsyncOpenAI`, with the SDK's retries off (agenteval retries)."""

    name = "openai"

    def make_client(self, *, api_key: str, base_url: str | None, timeout_s: float) -> AsyncOpenAI:
        """The SDK's client, its retries off."""
        return openai.client(api_key=api_key, base_url=base_url, timeout_s=timeout_s)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """Ask for a verdict that follows `request.verdict_schema`; raise the SDK's errors."""
        known, extra = split_params(
            request.params,
            provider=self.name,
            accepted=openai.CREATE_PARAMETERS,
            reserved=_RESERVED,
        )
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": request.system},
            {"role": "user", "content": request.user},
        ]
        response_format: ResponseFormatJSONSchema = {
            "type": "json_schema",
            "json_schema": {
                "name": request.schema_name,
                "schema": request.verdict_schema,
                "strict": True,
            },
        }
        completion: ChatCompletion = await self._client.chat.completions.create(
            model=request.model,
            messages=messages,
            response_format=response_format,
            timeout=request.timeout_s,
            extra_body=extra or None,
            **known,
        )
        return _reply(completion)

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections."""
        await self._client.close()


def _reply(completion: ChatCompletion) -> JudgeReply:
    usage = openai.usage(completion.usage)
    if not completion.choices:
        return JudgeReply(verdict=None, raw="", usage=usage, model=completion.model)
    choice = completion.choices[0]
    message = choice.message
    finish_reason: str | None = choice.finish_reason
    if message.refusal:
        verdict = None
        raw = message.refusal
    else:
        raw = message.content or ""
        verdict = parse_verdict(raw)
    return JudgeReply(
        verdict=verdict,
        raw=raw,
        usage=usage,
        model=completion.model,
        finish_reason=finish_reason,
    )
