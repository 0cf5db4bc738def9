"""Agents of each framework that answer with every user message they were given (the echo of
`tests.users.tagged`), for the tests of simulated users across frameworks. Each framework is
imported only when its agent is built."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import warnings
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


def openai_agents_agent(base_url: str) -> Any:
    """An OpenAI Agents SDK `Agent` whose model is the echo server at `base_url`."""
    from openai import AsyncOpenAI

    from agents import Agent, OpenAIChatCompletionsModel

    client = AsyncOpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    model = OpenAIChatCompletionsModel(model="echo", openai_client=client)
    return Agent(name="echo", instructions="Echo.", model=model)


@contextmanager
def echo_server() -> Iterator[str]:
    """A Chat Completions server on 127.0.0.1 (a free port) answering with every user message
    of the request (its base URL, while the block runs)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            texts = [str(m["content"]) for m in body["messages"] if m.get("role") == "user"]
            out = json.dumps(
                {
                    "id": "chatcmpl-echo",
                    "object": "chat.completion",
                    "created": 1_764_000_000,
                    "model": "echo",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": echo(texts)},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    http.daemon_threads = True
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{http.server_port}/v1"
    finally:
        http.shutdown()
        http.server_close()
        thread.join()


AGENTS: dict[str, Callable[[str], Any]] = {
    "callable": lambda _: echo_agent,
    "adk": lambda _: adk_agent(),
    "langgraph": lambda _: langgraph_agent(),
    "pydantic-ai": lambda _: pydantic_ai_agent(),
    "openai-agents": openai_agents_agent,
}
"""Each kind of agent, made given the echo server's base URL (which only the OpenAI Agents
SDK's model calls)."""
