"""The simulator's failures are never the agent's, whatever the provider says or
whatever a user object raises."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.judge.fakes import FakeOpenAI, http_error
from tests.simulation.model import numbered_agent, refund_case

from agenteval import EvalCase, FailureCause, evaluate
from agenteval.simulation.simulator import UserSimulatorConfig


def run(tmp_path: Path, cases: list[EvalCase], user_simulator: Any, **options: Any) -> Any:
    return evaluate(
        numbered_agent,
        cases,
        scorers=["exact_match"],
        builtins=False,
        store=tmp_path / "runs.db",
        user_simulator=user_simulator,
        **options,
    )


def test_a_4xx_from_the_simulators_provider_is_the_simulators_failure(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    # A model the endpoint does not serve, a schema it refuses, a key it rejects: a 4xx the
    # provider SDK raises. It is the simulator's trouble, never the agent's failure.
    fake.handler = lambda body: http_error(400, message="response_format json_schema unsupported")
    config = UserSimulatorConfig(
        spec="openai:gpt-4o-mini", base_url=fake.base_url, cache_path=tmp_path / "c.db"
    )
    result = run(tmp_path, [refund_case()], config, retries=0)
    trial = result.results[0].trial
    assert trial.failure is not None
    assert trial.failure.cause is not FailureCause.AGENT_ERROR, trial.failure
    assert trial.failure.cause.is_infrastructure
    assert "user simulator" in trial.failure.message
    score = result.results[0].scores["exact_match"]
    assert score.value is None and "infrastructure" in (score.reason or "")
