"""A function tool pydantic-ai does not execute because an output tool of the same response
already gave the final result (`end_strategy='early'`): its call is answered by a stub, "Tool
not executed - a final result was already processed.", as if it had returned that. The call
was asked for, and never ran: the trial keeps it with that as its error, so `tool_execution`
does not pass it as a call that ran."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agenteval import EvalCase
from agenteval.agents.frameworks.pydantic_ai import PydanticAIAgent
from agenteval.scorers.tools.rungs import ToolExecution


class Done(BaseModel):
    ok: bool


def email_and_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Sends an email and gives the final result in the same response."""
    return ModelResponse(
        parts=[
            ToolCallPart("send_email", {"to": "ana@example.com"}, "call-email"),
            ToolCallPart("final_result", {"ok": True}, "call-final"),
        ]
    )


@pytest.mark.parametrize("strategy", ["early", "graceful"])
def test_a_tool_skipped_for_a_final_result_is_no_call_that_ran(strategy: Any) -> None:
    sent: list[str] = []
    agent = Agent(FunctionModel(email_and_answer), output_type=Done, end_strategy=strategy)

    @agent.tool_plain
    def send_email(to: str) -> str:
        """Send an email."""
        sent.append(to)
        return "sent"

    case = EvalCase(input="email Ana")
    trial = asyncio.run(PydanticAIAgent(agent).run_case(case))
    assert trial.output == '{"ok":true}'
    [call] = trial.tool_calls
    assert (call.name, call.arguments, call.id) == (
        "send_email",
        {"to": "ana@example.com"},
        "call-email",
    )
    if strategy == "early":
        assert sent == []
        assert call.result is None
        assert call.error is not None and "not executed" in call.error
        assert ToolExecution()(case, trial).passed is False
    else:
        assert sent == ["ana@example.com"]
        assert (call.result, call.error) == ("sent", None)
        assert ToolExecution()(case, trial).passed is True
