"""A user that ends itself with what is not an `Exception` (a scripted user calling
`sys.exit()`, a user object raising `SystemExit` or a test framework's outcome, which derive
from `BaseException`) is the user's failure (`user_simulator_error`), never the agent's.
Before, it escaped the user's wrapping and the trial was the agent's `agent_error`, scored as
the agent's failure."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.simulation.model import refund_case
from tests.user_failures.test_simulator_failures import run

from agenteval import FailureCause


class _Outcome(BaseException):
    """As pytest's `Failed` / `Skipped`: a `BaseException` that is not an `Exception`."""


class Exits:
    label = "exiting-user"

    async def reply(self, request: Any) -> Any:
        sys.exit("the user script gave up")


class Fails:
    label = "failing-user"

    async def reply(self, request: Any) -> Any:
        raise _Outcome("unexpected question")


def exits(messages: list[dict[str, str]]) -> str:
    sys.exit(3)


def _check(result: Any, label: str) -> None:
    trial = result.results[0].trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.USER_SIMULATOR_ERROR, trial.failure
    assert label in trial.failure.message
    score = result.results[0].scores["exact_match"]
    assert score.value is None  # not scored against the agent


def test_a_user_object_exiting_is_the_users_failure(tmp_path: Path) -> None:
    _check(run(tmp_path, [refund_case()], Exits(), retries=0), "exiting-user")


def test_a_user_object_raising_a_base_exception_is_the_users_failure(tmp_path: Path) -> None:
    _check(run(tmp_path, [refund_case()], Fails(), retries=0), "failing-user")


def test_a_scripted_user_calling_sys_exit_is_the_users_failure(tmp_path: Path) -> None:
    case = refund_case(script=f"{Path(__file__)}:exits", starting_prompt="My order broke.")
    _check(run(tmp_path, [case], None, retries=0), "exits")
