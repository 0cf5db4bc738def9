"""A Google ADK agent played by a simulated (scripted) user: a real `LlmAgent` and runner on a
`BaseLlm` following the desk's policy (`tests/frameworks/users_desk.py`), every turn in one ADK
session, through `agenteval.evaluate`, read back from the store."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
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


class DeskModel(BaseLlm):
    """The desk's model: reads the whole request (every user message of the session, and the
    tool results since the last one) and follows `desk_step`."""

    model: str = "scripted-gemini"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        user_texts: list[str] = []
        results: list[tuple[str, object]] = []
        for content in llm_request.contents:
            for part in content.parts or ():
                if content.role == "user" and part.text:
                    user_texts.append(part.text)
                    results = []
                elif part.function_response is not None:
                    results.append(
                        (part.function_response.name or "", part.function_response.response)
                    )
        step = desk_step(user_texts, results)
        if isinstance(step, Say):
            part = types.Part(text=step.text)
        else:
            call = types.FunctionCall(
                name=step.name, args=dict(step.arguments), id=f"call-{len(user_texts)}"
            )
            part = types.Part(function_call=call)
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def desk_agent() -> LlmAgent:
    return LlmAgent(
        name="desk",
        model=DeskModel(),
        instruction="Refund broken orders.",
        tools=[find_order, refund],
    )


def test_the_desk_is_played_whole_by_a_scripted_user(tmp_path: Path) -> None:
    run = agenteval.evaluate(desk_agent(), desk_cases(), store=tmp_path / "runs.db", retries=0)
    with RunStore(tmp_path / "runs.db", create=False) as store:
        trials: dict[str, Trial] = {r.case.id: r.trial for r in store.iter_results(run.run_id)}
    check_desk_run(trials)
    # One ADK session for the whole conversation: the state ADK kept at its end is there.
    assert "session_state" in trials["desk"].metadata
