"""The seam of simulated users: a scripted user plays a case's turns for a callable agent,
after its written turns, up to `max_turns`; a user that raises is the simulator's failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval import (
    ConfigError,
    EndReason,
    EvalCase,
    FailureCause,
    UserReply,
    UserRequest,
    evaluate,
)


def _run(tmp_path: Path, case: EvalCase, **options: object):  # type: ignore[no-untyped-def]
    from tests.users.scripted import asking_agent

    run = evaluate(asking_agent, [case], store=tmp_path / "runs.db", **options)
    return run.results[0].trial


def test_a_scripted_user_answers_one_value_at_a_time(tmp_path: Path) -> None:
    case = EvalCase(
        id="refund",
        user_simulation={"script": "tests.users.scripted:refund_user", "max_turns": 6},
    )
    trial = _run(tmp_path, case)
    assert trial.failure is None
    assert trial.output == "Refund issued for order 8812."
    simulation = trial.simulation
    assert simulation is not None
    assert [turn.user for turn in simulation.turns] == [
        "My order arrived broken.",
        "8812",
        "ana@example.com",
    ]
    assert {turn.source for turn in simulation.turns} == {"scripted"}
    assert simulation.end_reason is EndReason.GOAL_ACHIEVED
    assert simulation.turns_to_goal == 3
    assert trial.metadata["turn_outputs"][-1] == "Refund issued for order 8812."


def test_written_turns_come_first_then_the_user(tmp_path: Path) -> None:
    case = EvalCase(
        id="written-first",
        input="Hi, my order 8812 arrived broken",
        user_simulation={"script": "tests.users.scripted:refund_user"},
    )
    trial = _run(tmp_path, case)
    sources = [turn.source for turn in trial.simulation.turns]
    assert sources == ["written", "scripted"]
    assert trial.simulation.end_reason is EndReason.GOAL_ACHIEVED


def test_the_conversation_stops_at_max_turns(tmp_path: Path) -> None:
    case = EvalCase(
        id="chatty",
        user_simulation={"script": "tests.users.scripted:chatty_user", "max_turns": 3},
    )
    trial = _run(tmp_path, case)
    assert len(trial.simulation.turns) == 3
    assert trial.simulation.end_reason is EndReason.MAX_TURNS


def test_a_user_that_raises_is_the_simulators_failure_not_the_agents(tmp_path: Path) -> None:
    case = EvalCase(
        id="broken-script",
        input="hello",
        user_simulation={"script": "tests.users.scripted:raising_user"},
    )
    trial = _run(tmp_path, case, retries=0)
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.USER_SIMULATOR_ERROR
    assert "the script is broken" in trial.failure.message
    assert trial.simulation.end_reason is EndReason.TRIAL_FAILED
    assert not trial.responded


class EchoSimulator:
    """A user object of the run (the shape `agents.users.User` asks for)."""

    label = "test:echo"

    def __init__(self) -> None:
        self.requests: list[UserRequest] = []

    async def reply(self, request: UserRequest) -> UserReply | None:
        self.requests.append(request)
        if len(request.messages) >= 4:
            return UserReply(stop=EndReason.USER_GAVE_UP, detail="enough")
        return UserReply(message=f"goal: {request.simulation.goal}")


def test_the_runs_simulator_plays_a_case_without_a_script(tmp_path: Path) -> None:
    simulator = EchoSimulator()
    case = EvalCase(id="goal", user_simulation={"goal": "a refund", "starting_prompt": "hi"})
    trial = _run(tmp_path, case, user_simulator=simulator, trials=1)
    assert [turn.source for turn in trial.simulation.turns] == ["written", "simulated"]
    assert trial.simulation.user == "test:echo"
    assert trial.simulation.end_reason is EndReason.USER_GAVE_UP
    assert trial.simulation.end_detail == "enough"
    assert [request.trial for request in simulator.requests] == [0, 0]
    assert simulator.requests[0].messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "What is your order number?"},
    ]


def test_a_case_no_one_can_play_is_refused(tmp_path: Path) -> None:
    case = EvalCase(id="nobody", user_simulation={"goal": "a refund"})
    with pytest.raises(ConfigError, match="user simulator"):
        _run(tmp_path, case)
