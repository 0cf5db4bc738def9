"""Simulated conversations at concurrency 8: 20 cases x 3 trials, each user's messages naming
its case and trial, played by a callable agent and by an agent of each of the four frameworks
(one session per trial; LangGraph's checkpointer shared by all of them). No conversation may see
another's message, in what the user is shown or in what the agent answers; a run's `User`
object gets each request with the right case id and trial index."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.users.echo_agents import AGENTS, echo_server
from tests.users.tagged import TURNS, TaggedSimulator, echo, echo_agent, said

import agenteval
from agenteval import EndReason, EvalCase, Trial
from agenteval.store import RunStore

CASES = 20
TRIALS = 3
SCRIPT = "tests.users.tagged:tagged_user"


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


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    with echo_server() as url:
        yield url


@pytest.mark.parametrize("kind", list(AGENTS))
def test_concurrent_scripted_conversations_never_meet(
    tmp_path: Path, kind: str, echo_url: str
) -> None:
    cases = [
        EvalCase(id=f"c{n:02}", user_simulation={"script": SCRIPT, "max_turns": TURNS + 2})
        for n in range(CASES)
    ]
    run = agenteval.evaluate(
        AGENTS[kind](echo_url), cases, trials=TRIALS, concurrency=8, store=tmp_path / "runs.db"
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
