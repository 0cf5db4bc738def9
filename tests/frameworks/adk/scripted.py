"""A real ADK model (`BaseLlm`) that plays a script instead of calling Gemini, and the agents the
ADK tests drive through agenteval.

The script is keyed by the user's message: for the prompt `p`, the k-th model call after `p`
in the request answers `script[p][k]` (k counts the model's own turns since `p`). Nothing is
kept between calls, so concurrent trials sharing the model never disturb each other. A step is
text (the answer), a list of calls `("tool", {args})` (parallel when several), or an exception
to raise (the model's own failure), or a response given as is (one ADK ends a turn on).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools import ToolContext
from google.genai import types
from pydantic import Field

Step = str | Sequence[tuple[str, Mapping[str, Any]]] | BaseException | LlmResponse


def _prompt_index(request: LlmRequest, prompts: Mapping[str, Any]) -> tuple[str, int]:
    """The last scripted prompt in the request, and how many model turns followed it."""
    for index in range(len(request.contents) - 1, -1, -1):
        content = request.contents[index]
        if content.role != "user":
            continue
        for part in content.parts or ():
            if part.text in prompts:
                later = request.contents[index + 1 :]
                return part.text, sum(1 for c in later if c.role == "model")
    raise AssertionError(f"no scripted prompt in {request.contents!r}")


class ScriptedModel(BaseLlm):
    """Answers from `script`; each response reports `usage` tokens (prompt, candidates,
    cached, thoughts) so cost and usage can be checked."""

    model: str = "scripted-gemini"
    script: dict[str, list[Any]] = Field(default_factory=dict)
    usage: tuple[int, int, int, int] = (100, 20, 0, 0)
    ids: bool = True
    """Whether the model gives its calls ids (Gemini does not: ADK then makes them)."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        prompt, index = _prompt_index(llm_request, self.script)
        steps = self.script[prompt]
        step = steps[min(index, len(steps) - 1)]
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, LlmResponse):
            yield step
            return
        if isinstance(step, str):
            parts = [types.Part(text=step)]
        else:
            parts = [
                types.Part(
                    function_call=types.FunctionCall(
                        name=name,
                        args=dict(args),
                        id=f"{self.model}-{index}-{n}" if self.ids else None,
                    )
                )
                for n, (name, args) in enumerate(step)
            ]
        prompt_tokens, candidates, cached, thoughts = self.usage
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=prompt_tokens,
                candidates_token_count=candidates,
                cached_content_token_count=cached,
                thoughts_token_count=thoughts,
                total_token_count=prompt_tokens + candidates + thoughts,
            ),
        )


def get_weather(city: str, days: int = 1) -> dict[str, Any]:
    """The weather in `city` for the next `days` days."""
    if city == "Atlantis":
        raise LookupError(f"no weather station in {city}")
    return {"city": city, "celsius": 21 if city == "Paris" else 14, "days": days}


def remember(topic: str, tool_context: ToolContext) -> str:
    """Write `topic` into the session state (so final_session_state applies)."""
    tool_context.state["topic"] = topic
    count = int(tool_context.state.get("count", 0)) + 1
    tool_context.state["count"] = count
    return f"remembered {topic} ({count})"


def weather_agent(script: dict[str, list[Any]], **model: Any) -> LlmAgent:
    """An LLM agent with the weather and memory tools on a scripted model."""
    return LlmAgent(
        name="weather_agent",
        model=ScriptedModel(script=script, **model),
        instruction="Answer questions about the weather.",
        tools=[get_weather, remember],
    )


def team(root_script: dict[str, list[Any]], helper_script: dict[str, list[Any]]) -> LlmAgent:
    """A root agent that can transfer to a helper agent with a tool of its own."""
    helper = LlmAgent(
        name="helper",
        model=ScriptedModel(model="scripted-helper", script=helper_script),
        description="Looks up the weather.",
        instruction="Look up the weather.",
        tools=[get_weather],
    )
    return LlmAgent(
        name="root",
        model=ScriptedModel(script=root_script),
        instruction="Send weather questions to the helper.",
        sub_agents=[helper],
    )
