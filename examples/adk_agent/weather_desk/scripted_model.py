"""A stand-in for Gemini, so the example runs offline and gives the same result every time: a real
ADK model (`BaseLlm`) that answers from a script instead of calling an API.

For the user's message `m`, the k-th model call after `m` answers `SCRIPT[m][k]`: text (the
answer) or a list of function calls (parallel when several). It keeps nothing between calls, so
trials running at the same time never disturb each other. Swap it for a model name
(`model="gemini-2.5-flash"`) to run the same agent on Gemini.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field


class ScriptedGemini(BaseLlm):
    """Plays `script`; every response reports 120 prompt tokens and 30 output tokens."""

    model: str = "scripted-gemini"
    script: dict[str, list[Any]] = Field(default_factory=dict)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        step = self._next_step(llm_request)
        if isinstance(step, str):
            parts = [types.Part(text=step)]
        else:
            parts = [
                types.Part(function_call=types.FunctionCall(name=name, args=args))
                for name, args in step
            ]
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=120, candidates_token_count=30, total_token_count=150
            ),
        )

    def _next_step(self, request: LlmRequest) -> Any:
        """The step after the last scripted user message in the request."""
        for index in range(len(request.contents) - 1, -1, -1):
            content = request.contents[index]
            texts = [part.text for part in content.parts or () if part.text]
            message = next((text for text in texts if text in self.script), None)
            if content.role == "user" and message is not None:
                done = sum(1 for c in request.contents[index + 1 :] if c.role == "model")
                steps = self.script[message]
                return steps[min(done, len(steps) - 1)]
        return "Sorry, I can only talk about the weather."
