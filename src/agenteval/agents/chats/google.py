"""The built-in agent on Gemini: function calling through google-genai (automatic function
calling off), ``function_call`` parts in, ``function_response`` parts out."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from google.genai import types

from agenteval.agents.chats.conversation import (
    ChatSetup,
    ModelReply,
    ToolOutcome,
    ToolRequest,
    check_params,
    split_agent_params,
)
from agenteval.providers import google

__all__ = ["CHAT", "GoogleChat"]


class GoogleChat:
    """Gemini function calling: `function_call` parts in, `function_response` parts out."""

    def __init__(self, setup: ChatSetup, messages: list[dict[str, str]]) -> None:
        self._client = google.client(
            api_key=setup.api_key, base_url=setup.base_url, timeout_s=setup.timeout_s
        )
        check_params("google", setup.params)
        params = {
            google.PARAM_ALIASES.get(name, name): value
            for name, value in split_agent_params(setup.params, "google")[0].items()
        }
        systems = [setup.system_prompt] if setup.system_prompt else []
        self._contents: list[Any] = []
        for message in messages:
            if message["role"] == "system":
                systems.append(message["content"])
                continue
            role = "model" if message["role"] == "assistant" else "user"
            self._contents.append(
                types.Content(role=role, parts=[types.Part(text=message["content"])])
            )
        declarations = [
            types.FunctionDeclaration(
                name=spec.name, description=spec.description, parameters_json_schema=parameters
            )
            for spec, parameters in setup.tool_schemas()
        ]
        self._config = types.GenerateContentConfig(
            system_instruction="\n\n".join(systems) or None,
            tools=[types.Tool(function_declarations=declarations)] if declarations else None,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            http_options=google.request_options(setup.timeout_s),
            **params,
        )
        self._model = setup.model
        self._calls = 0

    async def complete(self) -> ModelReply:
        """One model call on the conversation so far; the answer joins the conversation."""
        response = await self._client.aio.models.generate_content(
            model=self._model, contents=self._contents, config=self._config
        )
        usage = google.usage(response.usage_metadata)
        if not response.candidates or response.candidates[0].content is None:
            return ModelReply(None, [], usage, response.model_version, None)
        candidate = response.candidates[0]
        content = candidate.content
        assert content is not None
        self._contents.append(content)
        texts: list[str] = []
        calls: list[ToolRequest] = []
        for part in content.parts or []:
            if part.function_call is not None:
                self._calls += 1
                call = part.function_call
                args = dict(call.args) if call.args is not None else {}
                calls.append(
                    ToolRequest(
                        id=call.id or f"call-{self._calls}",
                        name=call.name or "",
                        arguments=args,
                        raw_arguments=json.dumps(args, default=repr),
                    )
                )
            elif part.text and not part.thought:
                texts.append(part.text)
        reason: Any = candidate.finish_reason
        finish = str(getattr(reason, "value", reason)) if reason is not None else None
        text = "".join(texts) if texts else None
        return ModelReply(text, calls, usage, response.model_version, finish)

    def add_results(self, outcomes: Sequence[ToolOutcome]) -> None:
        """The tool results, as one user turn of `function_response` parts."""
        parts = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=outcome.call.id,
                    name=outcome.call.name,
                    response=(
                        {"error": outcome.error}
                        if outcome.error is not None
                        else {"result": outcome.value}
                    ),
                )
            )
            for outcome in outcomes
        ]
        self._contents.append(types.Content(role="user", parts=parts))

    async def aclose(self) -> None:
        """Close the client's HTTP connections."""
        await google.aclose(self._client)


CHAT = GoogleChat
