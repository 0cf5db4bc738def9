"""A framework agent's parallel tool calls (one model message asking for three) replay in any
order among themselves, as `@agenteval.tool` calls made at once do, while calls asked one after
another's answer keep their order. Before, a framework's calls carried no times, so each was
a round of its own: a model asking for the same three calls in another order (a changed prompt
or model: what a replay is for) failed every trial with `replay_miss`."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.prebuilt import create_react_agent
from tests.frameworks.langgraph.scripted_chat import ScriptedChat, get_weather

import agenteval
from agenteval import EvalCase
from agenteval.trace import FailureCause

ORDER: list[list[str]] = []
"""The model's tool calls, one message of parallel calls per entry, in the order asked."""


def _respond(messages: Sequence[BaseMessage]) -> AIMessage:
    asked = sum(1 for m in messages if isinstance(m, AIMessage))
    if asked < len(ORDER):
        return AIMessage(
            content="",
            tool_calls=[
                {"name": "get_weather", "args": {"city": city}, "id": f"{asked}-{city}"}
                for city in ORDER[asked]
            ],
        )
    said = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
    return AIMessage(content="; ".join(said))


def _graph() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent's move to langchain.agents
        return create_react_agent(ScriptedChat(respond=_respond), [get_weather])


def _replayed(order: list[list[str]], recorded: str, store: Path) -> agenteval.TrialResult:
    ORDER[:] = order
    run = agenteval.evaluate(
        _graph(), [EvalCase(id="w", input="weather?")], store=store, replay_tools=recorded
    )
    (result,) = run.results
    return result


def _record(order: list[list[str]], store: Path) -> str:
    ORDER[:] = order
    run = agenteval.evaluate(
        _graph(), [EvalCase(id="w", input="weather?")], store=store, target="weather"
    )
    assert run.results[0].trial.failure is None
    return run.info.run_id


def test_parallel_calls_replay_in_any_order_among_themselves(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    recorded = _record([["Paris", "Rome", "Oslo"]], store)
    result = _replayed([["Oslo", "Paris", "Rome"]], recorded, store)
    assert result.trial.failure is None, result.trial.failure
    assert [call.mocked for call in result.trial.tool_calls] == ["replay"] * 3


def test_calls_asked_one_after_anothers_answer_keep_their_order(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    recorded = _record([["Paris"], ["Rome"]], store)
    result = _replayed([["Rome"], ["Paris"]], recorded, store)
    failure = result.trial.failure
    assert failure is not None and failure.cause is FailureCause.REPLAY_MISS
    assert "is not the next call" in failure.message
