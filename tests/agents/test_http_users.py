"""The HTTP agent played by a simulated (scripted) user: a loopback agent service that plays the
desk (`tests/frameworks/users_desk.py`, its tools run in the service) from the conversation each
request carries, one request per turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agents.fakes_http import FakeAgentService, reply
from tests.frameworks.users_desk import (
    ANSWERS,
    BROKEN_ORDER,
    EMAIL,
    OPENING,
    check_played_whole,
    desk_cases,
    play_turn,
)
from tests.judge.fakes import http_error

import agenteval
from agenteval import EndReason, FailureCause
from agenteval.agents.http import http_agent
from agenteval.store import RunStore
from agenteval.trace import Trial


def desk_service(body: dict[str, Any]) -> Any:
    """The service's answer to one request: the desk's turn, or a 500 when a tool raised."""
    messages = body["input"]
    assert isinstance(messages, list), "every turn of a conversation sends the messages so far"
    try:
        output, calls = play_turn(messages)
    except LookupError as exc:
        return http_error(500, message=f"LookupError: {exc}")
    return reply({"output": output, "tool_calls": calls})


def test_the_desk_is_played_whole_by_a_scripted_user(
    agent_service: FakeAgentService, tmp_path: Path
) -> None:
    agent_service.handler = desk_service
    agent = http_agent({"url": agent_service.agent_url})
    cases = [case for case in desk_cases() if case.id != "desk-mocked"]  # its tools: remote
    run = agenteval.evaluate(agent, cases, store=tmp_path / "runs.db", retries=0)
    with RunStore(tmp_path / "runs.db", create=False) as store:
        trials: dict[str, Trial] = {r.case.id: r.trial for r in store.iter_results(run.run_id)}
    check_played_whole(trials["desk"], ["scripted"] * 3)
    check_played_whole(trials["desk-written"], ["written", "written", "scripted"])
    check_played_whole(trials["desk-history"], ["written", "scripted"])
    crash = trials["desk-crash"]
    assert crash.failure is not None
    assert crash.failure.cause is FailureCause.AGENT_ERROR
    assert crash.simulation is not None
    assert [(t.user, t.agent) for t in crash.simulation.turns] == [
        (OPENING, ANSWERS[0]),
        (BROKEN_ORDER, None),
    ]
    assert crash.simulation.end_reason is EndReason.TRIAL_FAILED
    # One request per turn, each with the conversation so far (the agent's answers too).
    # ("desk" and "desk-history" end on the same conversation.)
    lasts = [
        r["input"] for r in agent_service.requests if "ana@" in str(r) and "It is" not in str(r)
    ]
    assert [[m["content"] for m in last] for last in lasts] == [
        [OPENING, ANSWERS[0], "8812", ANSWERS[1], EMAIL]
    ] * 2


def test_a_retried_attempt_plays_the_conversation_again_from_its_start(
    agent_service: FakeAgentService, tmp_path: Path
) -> None:
    failed: list[int] = []

    def flaky(body: dict[str, Any]) -> Any:
        # The second turn of the first attempt meets a 503 (retried: infrastructure).
        if len(body["input"]) == 3 and not failed:
            failed.append(1)
            return http_error(503, retry_after=0)
        return desk_service(body)

    agent_service.handler = flaky
    agent = http_agent({"url": agent_service.agent_url})
    case = next(case for case in desk_cases() if case.id == "desk")
    run = agenteval.evaluate(agent, [case], store=tmp_path / "runs.db", retries=1)
    trial = run.results[0].trial
    assert trial.attempts == 2
    # The record is the second attempt's alone: its user started over with the agent.
    check_played_whole(trial, ["scripted"] * 3)
    assert [len(r["input"]) for r in agent_service.requests] == [1, 3, 1, 3, 5]
