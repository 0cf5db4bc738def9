"""A user object given in code whose reply raises a plain exception is the
user's failure (user_simulator_error), never the agent's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.simulation.model import refund_case
from tests.user_failures.test_simulator_failures import run

from agenteval import FailureCause


class Crashing:
    """A user object given in code (not a script) whose reply raises a plain exception."""

    label = "crashing-user"

    async def reply(self, request: Any) -> Any:
        raise RuntimeError("my user model's client broke")


def test_a_user_object_that_raises_is_the_users_failure_never_the_agents(tmp_path: Path) -> None:
    result = run(tmp_path, [refund_case()], Crashing(), retries=0)
    trial = result.results[0].trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.USER_SIMULATOR_ERROR, trial.failure
    assert "crashing-user" in trial.failure.message
    score = result.results[0].scores["exact_match"]
    assert score.value is None and "infrastructure" in (score.reason or "")


class Wrong:
    """A user object whose reply is a plain string, not a `UserReply`."""

    label = "wrong-user"

    async def reply(self, request: Any) -> Any:
        return "hello"


def test_a_user_object_returning_no_user_reply_is_the_users_failure(tmp_path: Path) -> None:
    result = run(tmp_path, [refund_case()], Wrong(), retries=0)
    trial = result.results[0].trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.USER_SIMULATOR_ERROR, trial.failure
    assert "UserReply" in trial.failure.message
