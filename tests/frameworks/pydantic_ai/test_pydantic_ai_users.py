"""A pydantic-ai agent played by a simulated (scripted) user: a real `Agent` on a
`FunctionModel` following the desk's policy (`tests/frameworks/users_desk.py`) over the whole
message history it is given, through `agenteval.evaluate`, read back from the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from tests.frameworks.users_desk import (
    Say,
    check_desk_run,
    desk_cases,
    desk_step,
    find_order,
    refund,
)

import agenteval
from agenteval.store import RunStore
from agenteval.trace import Trial


def desk_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The desk's model over the history pydantic-ai gives it."""
    user_texts: list[str] = []
    results: list[tuple[str, Any]] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                user_texts.append(part.content)
                results = []
            elif isinstance(part, ToolReturnPart):
                results.append((part.tool_name, part.content))
    step = desk_step(user_texts, results)
    if isinstance(step, Say):
        return ModelResponse(parts=[TextPart(step.text)], model_name="desk-model")
    call = ToolCallPart(step.name, dict(step.arguments), tool_call_id=f"call-{len(user_texts)}")
    return ModelResponse(parts=[call], model_name="desk-model")


def desk_agent() -> Agent[None, str]:
    return Agent(
        FunctionModel(desk_model, model_name="desk-model"),
        name="desk",
        tools=[find_order, refund],
    )


def test_the_desk_is_played_whole_by_a_scripted_user(tmp_path: Path) -> None:
    run = agenteval.evaluate(desk_agent(), desk_cases(), store=tmp_path / "runs.db", retries=0)
    with RunStore(tmp_path / "runs.db", create=False) as store:
        trials: dict[str, Trial] = {r.case.id: r.trial for r in store.iter_results(run.run_id)}
    check_desk_run(trials)
    # One model call per model response: 1 + 2 + 2 over the three turns.
    assert len(trials["desk"].model_calls) == 5
