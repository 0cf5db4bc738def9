"""An OpenAI Agents SDK `Agent` played by a simulated (scripted) user: a real `Agent` on
`OpenAIChatCompletionsModel`, its client calling a loopback Chat Completions server that follows
the desk's policy (`tests/frameworks/users_desk.py`) over the whole conversation it is sent,
through `agenteval.evaluate`, read back from the store."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests.frameworks.users_desk import (
    Say,
    chat_step,
    check_desk_run,
    desk_cases,
    find_order,
    refund,
)

import agenteval
from agenteval import EndReason, EvalCase, FailureCause, UserReply
from agenteval.store import RunStore
from agenteval.trace import Trial
from agents import Agent, function_tool

from .loopback import ScriptedServer
from .scripted import model, triage_agent


def desk_reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The chat completion the desk's model answers to `messages`."""
    step = chat_step(messages)
    reply: dict[str, Any] = {"role": "assistant", "content": None}
    if isinstance(step, Say):
        reply["content"] = step.text
    else:
        reply["tool_calls"] = [
            {
                "id": f"call_{len(messages)}",
                "type": "function",
                "function": {"name": step.name, "arguments": json.dumps(step.arguments)},
            }
        ]
    return {
        "id": "chatcmpl-desk",
        "object": "chat.completion",
        "created": 1_764_000_000,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "message": reply,
                "finish_reason": "tool_calls" if "tool_calls" in reply else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


@pytest.fixture
def desk_url() -> Iterator[str]:
    """The desk's loopback Chat Completions server (127.0.0.1, a free port)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            out = json.dumps(desk_reply(body["messages"])).encode()
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


def desk_agent(base_url: str) -> Agent[Any]:
    return Agent(
        name="desk",
        instructions="Refund broken orders.",
        model=model(base_url),
        # The lookup's exception leaves the run (the SDK's default would tell the model).
        tools=[function_tool(find_order, failure_error_function=None), function_tool(refund)],
    )


def test_the_desk_is_played_whole_by_a_scripted_user(desk_url: str, tmp_path: Path) -> None:
    run = agenteval.evaluate(
        desk_agent(desk_url), desk_cases(), store=tmp_path / "runs.db", retries=0
    )
    with RunStore(tmp_path / "runs.db", create=False) as store:
        trials: dict[str, Trial] = {r.case.id: r.trial for r in store.iter_results(run.run_id)}
    check_desk_run(trials)
    assert trials["desk"].node_visits == ["desk"]


def triage_user(messages: list[dict[str, str]]) -> str | UserReply | None:
    """Goes on from the starting prompt (`#N` tags the conversation for the loopback server):
    thanks the agent for a refund, then stops; asks for a password when asked how to help."""
    tag = messages[0]["content"].rsplit("#", 1)[1]
    last = messages[-1]["content"]
    if "Refunded" in last:
        return f"thanks #{tag}"
    if "welcome" in last:
        return UserReply(stop=EndReason.GOAL_ACHIEVED)
    if "How can I help" in last:
        return f"what is my password #{tag}"
    return None


def test_handoffs_and_guardrails_across_simulated_turns(
    server: ScriptedServer, tmp_path: Path
) -> None:
    user = {"script": f"{__name__}:triage_user", "max_turns": 5}
    cases = [
        EvalCase(id="refund", user_simulation={**user, "starting_prompt": "I need a refund #3"}),
        EvalCase(id="password", user_simulation={**user, "starting_prompt": "hello #4"}),
    ]
    run = agenteval.evaluate(
        triage_agent(server.base_url), cases, store=tmp_path / "runs.db", retries=0
    )
    with RunStore(tmp_path / "runs.db", create=False) as store:
        trials: dict[str, Trial] = {r.case.id: r.trial for r in store.iter_results(run.run_id)}
    # The turn after the handoff goes to the agent that answered last (refunds), which
    # remembers nothing of triage's routing but answers as itself.
    refund = trials["refund"]
    assert refund.failure is None
    assert refund.simulation is not None
    assert [(t.source, t.user, t.agent) for t in refund.simulation.turns] == [
        ("written", "I need a refund #3", "Refunded 12.50 on order A3."),
        ("scripted", "thanks #3", "You are welcome (#3)."),
    ]
    assert refund.simulation.end_reason is EndReason.GOAL_ACHIEVED
    assert refund.node_visits == ["triage", "refunds"]
    assert [[c.name for c in step.tool_calls] for step in refund.steps] == [["refund_order"], []]
    # An input guardrail tripping on the user's second message ends the trial there.
    password = trials["password"]
    assert password.failure is not None
    assert password.failure.cause is FailureCause.AGENT_ERROR
    assert password.metadata["guardrail"]["name"] == "no_passwords"
    assert password.simulation is not None
    assert [(t.user, t.agent) for t in password.simulation.turns] == [
        ("hello #4", "How can I help? (#4)"),
        ("what is my password #4", None),
    ]
    assert password.simulation.end_reason is EndReason.TRIAL_FAILED
