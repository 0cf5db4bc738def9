"""The `google` judge: Gemini through google-genai, the verdict as a JSON-schema response.

The request sets ``response_mime_type="application/json"`` and ``response_json_schema`` (sent
as ``generationConfig.responseJsonSchema``, which takes a plain JSON schema; the older
``response_schema`` takes the SDK's own OpenAPI-subset `Schema`). The verdict is the object the
SDK parsed, or `json.loads` of the response text.

`max_tokens` in the params is sent as ``max_output_tokens``; other params must be fields of
`GenerateContentConfig` (`temperature`, `top_p`, `top_k`, `seed`, ...).

The client (`agenteval.providers.google`) always talks to the Gemini Developer API with an API
key (``vertexai=False``), whatever ``GOOGLE_GENAI_USE_VERTEXAI`` says.
"""

from __future__ import annotations

from typing import Any

from google import genai
from google.genai import types

from agenteval.judge.provider import JudgeReply, JudgeRequest
from agenteval.judge.providers.common import SdkProvider, parse_verdict, split_params
from agenteval.providers import google

__all__ = ["GoogleProvider"]

_RESERVED = frozenset(
    {
        "system_instruction",
        "response_mime_type",
        "response_schema",
        "response_json_schema",
        "http_options",
        "tools",
        "tool_config",
        "automatic_function_calling",
        "should_return_http_response",
    }
)


class GoogleProvider(SdkProvider[genai.Client]):
    """A judge over `google.genai.Client`, with the SDK's retries off (agenteval retries)."""

    name = "google"

    def make_client(self, *, api_key: str, base_url: str | None, timeout_s: float) -> genai.Client:
        """The SDK's client, its retries off."""
        return google.client(api_key=api_key, base_url=base_url, timeout_s=timeout_s)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """Ask for a JSON response that follows `request.verdict_schema`; raise the SDK's errors."""
        params = {
            google.PARAM_ALIASES.get(name, name): value for name, value in request.params.items()
        }
        known, unknown = split_params(
            params,
            provider=self.name,
            accepted=google.CONFIG_FIELDS,
            reserved=_RESERVED,
        )
        if unknown:
            raise ValueError(
                f"judge parameter(s) {', '.join(sorted(unknown))} are not google-genai "
                "GenerateContentConfig fields"
            )
        config = types.GenerateContentConfig(
            system_instruction=request.system,
            response_mime_type="application/json",
            response_json_schema=request.verdict_schema,
            http_options=google.request_options(request.timeout_s),
            **known,
        )
        try:
            response = await self._client.aio.models.generate_content(
                model=request.model, contents=request.user, config=config
            )
        except RecursionError:
            # The SDK parses a JSON answer itself: one nested past what Python reads is a
            # malformed verdict (asked again once), not an error of the call.
            return JudgeReply(verdict=None, raw="<the answer was JSON nested too deeply to read>")
        return _reply(response)

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections."""
        await google.aclose(self._client)


def _reply(response: types.GenerateContentResponse) -> JudgeReply:
    text = _text(response)
    parsed: Any = response.parsed
    verdict = dict(parsed) if isinstance(parsed, dict) else parse_verdict(text)
    finish_reason: str | None = None
    if response.candidates:
        reason: Any = response.candidates[0].finish_reason
        if reason is not None:
            finish_reason = str(getattr(reason, "value", reason))
    return JudgeReply(
        verdict=verdict,
        raw=text,
        usage=google.usage(response.usage_metadata),
        model=response.model_version,
        finish_reason=finish_reason,
    )


def _text(response: types.GenerateContentResponse) -> str:
    """The text parts of the first candidate (thought parts left out), or ""."""
    if not response.candidates:
        return ""
    content = response.candidates[0].content
    if content is None or not content.parts:
        return ""
    return "".join(part.text for part in content.parts if part.text and not part.thought)
