"""The built-in agent's side of each provider's API: tool schemas out, tool calls in, tool results
out. `conversation` is provider-neutral (the turn as the agent reads it); `openai`, `anthropic`
and `google` each speak one provider's wire format and import its SDK, so `chat_class` imports
one only when an agent is made. The clients, keys and token usage are `agenteval.providers`'.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from agenteval.agents.chats.conversation import Chat, ChatSetup

__all__ = ["chat_class"]


def chat_class(provider: str) -> Callable[[ChatSetup, list[dict[str, str]]], Chat]:
    """The conversation class of `provider` (importing its SDK)."""
    module = importlib.import_module(f"agenteval.agents.chats.{provider}")
    chat: Callable[[ChatSetup, list[dict[str, str]]], Chat] = module.CHAT
    return chat
