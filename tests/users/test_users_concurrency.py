"""Simulated conversations at concurrency 8: 20 cases x 3 trials, each user's messages naming
its case and trial, played by a callable agent and by agents of three frameworks (one session
per trial; LangGraph's checkpointer shared by all of them). No conversation may see another's
message, in what the user is shown or in what the agent answers; a run's `User` object gets
each request with the right case id and trial index."""

from __future__ import annotations

import asyncio
import random
import warnings
from collections import Counter
from collections.abc import AsyncGenerator, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.users.tagged import TURNS, TaggedSimulator, echo, echo_agent, said

import agenteval
from agenteval import EndReason, EvalCase, Trial
from agenteval.store import RunStore

CASES = 20
TRIALS = 3
SCRIPT = "tests.users.tagged:tagged_user"


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


def _stored(path: Path, run_id: str) -> dict[tuple[str, int], Trial]:
    with RunStore(path, create=False) as store:
        return {(r.case.id, r.trial.trial): r.trial for r in store.iter_results(run_id)}


def _check_each_conversation_is_its_own(trials: dict[tuple[str, int], Trial]) -> None:
    assert sorted(trials) == [(f"c{n:02}", t) for n in range(CASES) for t in range(TRIALS)]
    for (case_id, index), trial in trials.items():
        assert trial.failure is None, (case_id, index, trial.failure)
        simulation = trial.simulation
        assert simulation is not None
        assert simulation.end_reason is EndReason.GOAL_ACHIEVED, simulation.end_detail
        users = [said(case_id, index, n) for n in range(TURNS)]
        assert [turn.user for turn in simulation.turns] == users
        # The agent was given this conversation's messages, and no other.
        assert [turn.agent for turn in simulation.turns] == [
            echo(users[: n + 1]) for n in range(TURNS)
        ]
        assert trial.metadata["turn_outputs"] == [turn.agent for turn in simulation.turns]


@pytest.mark.parametrize("kind", list(AGENTS))
def test_concurrent_scripted_conversations_never_meet(tmp_path: Path, kind: str) -> None:
    cases = [
        EvalCase(id=f"c{n:02}", user_simulation={"script": SCRIPT, "max_turns": TURNS + 2})
        for n in range(CASES)
    ]
    run = agenteval.evaluate(
        AGENTS[kind](), cases, trials=TRIALS, concurrency=8, store=tmp_path / "runs.db"
    )
    _check_each_conversation_is_its_own(_stored(tmp_path / "runs.db", run.run_id))


def test_a_user_objects_requests_carry_their_case_and_trial(tmp_path: Path) -> None:
    simulator = TaggedSimulator()
    cases = [
        EvalCase(id=f"c{n:02}", user_simulation={"goal": f"talk as c{n:02}", "max_turns": 9})
        for n in range(CASES)
    ]
    run = agenteval.evaluate(
        echo_agent,
        cases,
        trials=TRIALS,
        concurrency=8,
        user_simulator=simulator,
        store=tmp_path / "runs.db",
    )
    _check_each_conversation_is_its_own(_stored(tmp_path / "runs.db", run.run_id))
    # Each conversation asked its user TURNS + 1 times (the last: the stop), each time as
    # itself: its case, its trial, its goal, its own messages.
    asked = Counter((r.case_id, r.trial) for r in simulator.requests)
    assert asked == {(f"c{n:02}", t): TURNS + 1 for n in range(CASES) for t in range(TRIALS)}
    for request in simulator.requests:
        assert request.simulation.goal == f"talk as {request.case_id}"
        own = f"{request.case_id}/t{request.trial}"
        assert all(own in message["content"] for message in request.messages)
