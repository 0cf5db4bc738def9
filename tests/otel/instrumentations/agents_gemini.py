"""`agents.py`'s agent written on Google's google-genai SDK: the same tools, cases and scripts,
the calls as `functionCall` parts and their results sent back as `functionResponse` parts
(`{"result": ...}`, or for a tool that raises `{"error": ...}`, the shape Google's docs use)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agenteval.pricing import PriceTable

from .agents import PRICE, TOOL_SCHEMAS, TOOLS
from .loopback import SCRIPTS
from .loopback_gemini import GEMINI_MODEL, usage_of

GEMINI_PRICES = PriceTable({GEMINI_MODEL: PRICE})


def gemini_agent(base_url: str) -> Callable[[str], str]:
    """A plain google-genai tool loop (automatic function calling off): ask, run each
    `functionCall`, send the results back in one user turn of `functionResponse` parts, until
    the model answers with text."""
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="x", http_options=types.HttpOptions(base_url=base_url))
    declarations = [
        types.FunctionDeclaration(
            name=schema["function"]["name"],
            description=schema["function"]["description"],
            parameters_json_schema=schema["function"]["parameters"],
        )
        for schema in TOOL_SCHEMAS
    ]
    config = types.GenerateContentConfig(
        system_instruction="You answer weather questions briefly.",
        tools=[types.Tool(function_declarations=declarations)],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )

    def answer(question: str) -> str:
        contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=question)])]
        for _ in range(4):
            response = client.models.generate_content(
                model=GEMINI_MODEL, contents=contents, config=config
            )
            calls = response.function_calls or []
            if not calls:
                return response.text or ""
            contents.append(response.candidates[0].content)  # type: ignore[index]
            parts: list[Any] = []
            for call in calls:
                try:
                    reply = {"result": TOOLS[str(call.name)](**dict(call.args or {}))}
                except Exception as exc:  # the tool's failure goes back to the model
                    reply = {"error": str(exc)}
                parts.append(types.Part.from_function_response(name=str(call.name), response=reply))
            contents.append(types.Content(role="user", parts=parts))
        raise RuntimeError("the model never answered")

    return answer


def gemini_usage(case_id: str) -> dict[str, int]:
    """The case's tokens as agenteval's Usage counts them: the whole prompt as input tokens,
    the thinking tokens in the output and as reasoning tokens."""
    turns = [usage_of(turn) for turn in SCRIPTS[case_id]]
    return {
        "input_tokens": sum(u["promptTokenCount"] for u in turns),
        "output_tokens": sum(u["candidatesTokenCount"] + u["thoughtsTokenCount"] for u in turns),
        "cached_tokens": sum(u["cachedContentTokenCount"] for u in turns),
        "reasoning_tokens": sum(u["thoughtsTokenCount"] for u in turns),
    }
