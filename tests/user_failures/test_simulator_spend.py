"""Every call the simulator's model answered is counted on the trial's
`simulation` (its tokens and cost, shown apart from the agent's): the calls of an attempt that
was retried, and those of a reply that could not be read, were spent too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.judge.fakes import FakeOpenAI, raw_text
from tests.simulation.model import numbered_agent, refund_case
from tests.user_failures.test_simulator_failures import run

from agenteval import FailureCause, evaluate
from agenteval.simulation.simulator import UserSimulatorConfig


def config(fake: FakeOpenAI, tmp_path: Path) -> UserSimulatorConfig:
    return UserSimulatorConfig(
        spec="openai:gpt-4o-mini", base_url=fake.base_url, cache_path=tmp_path / "c.db"
    )


def test_a_reply_unreadable_twice_still_counts_its_two_calls(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.handler = lambda body: raw_text("sure, I'm the user")
    result = run(tmp_path, [refund_case()], config(fake, tmp_path), retries=0)
    trial = result.results[0].trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.USER_SIMULATOR_ERROR
    assert fake.request_count == 2
    assert trial.simulation is not None
    assert len(trial.simulation.model_calls) >= 1
    assert trial.simulation.usage.total_tokens > 0, trial.simulation


class FlakyOnce:
    """The numbered agent, whose service drops the connection once, at its second turn."""

    def __init__(self) -> None:
        self.failed = False

    def __call__(self, messages: Any) -> str:
        if not self.failed and len(messages) >= 3:
            self.failed = True
            raise ConnectionError("the agent's service dropped the connection")
        return str(numbered_agent(messages))


def test_the_simulator_calls_of_a_retried_attempt_are_counted(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    result = evaluate(
        FlakyOnce(),
        [refund_case()],
        scorers=["exact_match"],
        builtins=False,
        store=tmp_path / "runs.db",
        user_simulator=config(fake, tmp_path),
        retries=1,
    )
    trial = result.results[0].trial
    assert trial.failure is None, trial.failure
    assert trial.attempts == 2
    assert trial.simulation is not None
    # Every request the simulator's server answered was a call the run paid for.
    assert len(trial.simulation.model_calls) == fake.request_count, (
        len(trial.simulation.model_calls),
        fake.request_count,
    )
