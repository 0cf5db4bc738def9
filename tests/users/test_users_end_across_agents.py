"""How a simulated conversation ends, for every kind of agent the engine plays (a callable and
the framework adapters): a user that breaks mid-conversation is the simulator's failure
(`user_simulator_error`, retried, the turns before it kept), never the agent's; a user that
never stops is stopped at `max_turns`, every turn answered."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.users.echo_agents import AGENTS, echo_server
from tests.users.tagged import echo

import agenteval
from agenteval import EndReason, EvalCase, FailureCause


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    with echo_server() as url:
        yield url


@pytest.mark.parametrize("kind", list(AGENTS))
def test_a_user_that_breaks_mid_conversation_is_the_simulators_failure(
    tmp_path: Path, kind: str, echo_url: str
) -> None:
    case = EvalCase(id="breaks", user_simulation={"script": "tests.users.tagged:breaks_second"})
    run = agenteval.evaluate(AGENTS[kind](echo_url), [case], retries=1, store=tmp_path / "runs.db")
    (result,) = run.results
    trial = result.trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.USER_SIMULATOR_ERROR
    assert "the script is broken" in trial.failure.message
    assert trial.attempts == 2  # infrastructure: retried once
    assert trial.retries == {"user_simulator_error": 1}
    simulation = trial.simulation
    assert simulation is not None
    assert [(turn.user, turn.agent) for turn in simulation.turns] == [("hello", echo(["hello"]))]
    assert simulation.end_reason is EndReason.TRIAL_FAILED


@pytest.mark.parametrize("kind", list(AGENTS))
def test_a_user_that_never_stops_is_stopped_at_max_turns(
    tmp_path: Path, kind: str, echo_url: str
) -> None:
    case = EvalCase(
        id="chatty", user_simulation={"script": "tests.users.tagged:counting", "max_turns": 3}
    )
    run = agenteval.evaluate(AGENTS[kind](echo_url), [case], store=tmp_path / "runs.db")
    (result,) = run.results
    trial = result.trial
    assert trial.failure is None
    simulation = trial.simulation
    assert simulation is not None
    users = ["message 0", "message 2", "message 4"]
    assert [turn.user for turn in simulation.turns] == users
    assert [turn.agent for turn in simulation.turns] == [
        echo(users[: n + 1]) for n in range(len(users))
    ]
    assert simulation.end_reason is EndReason.MAX_TURNS
    assert simulation.turns_to_goal is None
    assert len(trial.steps) == 3
