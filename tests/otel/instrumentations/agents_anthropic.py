"""`agents.py`'s agent written on Anthropic's SDK: the same tools, cases and scripts, the
calls as `tool_use` blocks and their results sent back as `tool_result` blocks (a tool that
raises as one with `is_error: true`, Anthropic's own error channel)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agenteval.pricing import PriceTable

from .agents import PRICE, TOOL_SCHEMAS, TOOLS
from .loopback import SCRIPTS
from .loopback_anthropic import CLAUDE_MODEL, usage_of

ANTHROPIC_TOOLS: list[Any] = [
    {
        "name": schema["function"]["name"],
        "description": schema["function"]["description"],
        "input_schema": schema["function"]["parameters"],
    }
    for schema in TOOL_SCHEMAS
]
"""The same tools as the Messages API declares them."""

CLAUDE_PRICES = PriceTable({CLAUDE_MODEL: PRICE})


def anthropic_agent(base_url: str, *, stream: bool = False) -> Callable[[str], str]:
    """A plain anthropic-SDK tool loop: ask, run each `tool_use` block's tool, send the results
    back in one user turn of `tool_result` blocks, until the model answers with text.
    `stream`: each response streamed (`client.messages.stream`, read to its end as a chat UI
    shows each delta) and taken whole from `get_final_message()`."""
    import anthropic

    client = anthropic.Anthropic(base_url=base_url, api_key="x", max_retries=0)

    def answer(question: str) -> str:
        messages: list[Any] = [{"role": "user", "content": question}]
        for _ in range(4):
            asked: dict[str, Any] = {
                "model": CLAUDE_MODEL,
                "max_tokens": 256,
                "system": "You answer weather questions briefly.",
                "messages": messages,
                "tools": ANTHROPIC_TOOLS,
            }
            if stream:
                with client.messages.stream(**asked) as events:
                    for _ in events:
                        pass
                    response = events.get_final_message()
            else:
                response = client.messages.create(**asked)
            calls = [block for block in response.content if block.type == "tool_use"]
            if not calls:
                return "".join(b.text for b in response.content if b.type == "text")
            messages.append({"role": "assistant", "content": response.content})
            results: list[Any] = []
            for call in calls:
                try:
                    content, failed = TOOLS[call.name](**dict(call.input)), False  # type: ignore[call-overload]
                except Exception as exc:  # the tool's failure goes back to the model
                    content, failed = str(exc), True
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": call.id,
                        "content": content,
                        **({"is_error": True} if failed else {}),
                    }
                )
            messages.append({"role": "user", "content": results})
        raise RuntimeError("the model never answered")

    return answer


def claude_usage(case_id: str) -> dict[str, int]:
    """The case's tokens as agenteval's Usage counts them: the whole prompt (cache reads and
    writes included) as input tokens, the cache reads as cached tokens, no reasoning tokens."""
    turns = [usage_of(turn) for turn in SCRIPTS[case_id]]
    return {
        "input_tokens": sum(
            u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
            for u in turns
        ),
        "output_tokens": sum(u["output_tokens"] for u in turns),
        "cached_tokens": sum(u["cache_read_input_tokens"] for u in turns),
        "reasoning_tokens": 0,
    }


def claude_cost(case_id: str) -> float:
    """What the case's calls cost at CLAUDE_PRICES, as `claude_usage` counts them."""
    usage = claude_usage(case_id)
    cached = usage["cached_tokens"]
    return (
        (usage["input_tokens"] - cached) * PRICE.input
        + cached * (PRICE.cached_input or 0.0)
        + usage["output_tokens"] * PRICE.output
    ) / 1_000_000
