"""Agents of each framework that answer with every user message they were given (the echo of
`tests.users.tagged`), for the tests of simulated users across frameworks. Each framework is
imported only when its agent is built."""

from __future__ import annotations

import asyncio
import random
import warnings
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

from tests.users.tagged import echo, echo_agent


def adk_agent() -> Any:
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    class EchoModel(BaseLlm):
        model: str = "echo"

        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            await asyncio.sleep(random.uniform(0, 0.002))
            texts = [
                part.text
                for content in llm_request.contents
                if content.role == "user"
                for part in content.parts or ()
                if part.text
            ]
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text=echo(texts))])
            )

    return LlmAgent(name="echo", model=EchoModel(), instruction="Echo.")


def langgraph_agent() -> Any:
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import create_react_agent
    from tests.frameworks.langgraph.scripted_chat import ScriptedChat

    def respond(messages: Sequence[BaseMessage]) -> AIMessage:
        texts = [str(m.content) for m in messages if isinstance(m, HumanMessage)]
        return AIMessage(content=echo(texts))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent moved to langchain (not installed)
        return create_react_agent(
            ScriptedChat(respond=respond), [], checkpointer=InMemorySaver(), name="echo"
        )


def pydantic_ai_agent() -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        UserPromptPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(random.uniform(0, 0.002))
        texts = [
            str(part.content)
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, UserPromptPart)
        ]
        return ModelResponse(parts=[TextPart(echo(texts))])

    return Agent(FunctionModel(respond), name="echo")


AGENTS: dict[str, Callable[[], Any]] = {
    "callable": lambda: echo_agent,
    "adk": adk_agent,
    "langgraph": langgraph_agent,
    "pydantic-ai": pydantic_ai_agent,
}
