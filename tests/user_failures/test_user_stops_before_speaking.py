"""A user who stops before saying anything leaves the agent nothing to answer:
the trial is the user's failure (user_simulator_error, left out of scoring), never the agent's
`no_response` scored 0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.user_failures.test_simulator_failures import run

from agenteval import EndReason, EvalCase, FailureCause, UserReply


class Stopper:
    """A user who stops at once (as a simulator's model may, misreading its goal)."""

    label = "stopper"

    def __init__(self, stop: EndReason | None) -> None:
        self.stop = stop

    async def reply(self, request: Any) -> UserReply | None:
        if self.stop is None:
            return None
        return UserReply(stop=self.stop, detail="nothing to ask")


@pytest.mark.parametrize("stop", [EndReason.GOAL_ACHIEVED, EndReason.USER_GAVE_UP, None])
def test_a_user_who_stops_before_its_first_message_is_not_the_agents_failure(
    tmp_path: Path, stop: EndReason | None
) -> None:
    case = EvalCase(id="c", expected_output="x", user_simulation={"goal": "g", "max_turns": 3})
    result = run(tmp_path, [case], Stopper(stop), retries=0)
    trial = result.results[0].trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.USER_SIMULATOR_ERROR, trial.failure
    assert "before its first message" in trial.failure.message
    score = result.results[0].scores["exact_match"]
    assert score.value is None and "infrastructure" in (score.reason or "")


def test_a_user_who_stops_after_the_written_turns_is_still_a_conversation(
    tmp_path: Path,
) -> None:
    case = EvalCase(
        id="c",
        expected_output="What is your order number?",
        user_simulation={"goal": "g", "starting_prompt": "My order broke.", "max_turns": 3},
    )
    result = run(tmp_path, [case], Stopper(EndReason.GOAL_ACHIEVED), retries=0)
    trial = result.results[0].trial
    assert trial.failure is None
    assert trial.simulation is not None
    assert trial.simulation.end_reason is EndReason.GOAL_ACHIEVED
    assert result.results[0].scores["exact_match"].passed is True
