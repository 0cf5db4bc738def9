"""What reaches a worker process: `evaluate(executor="process")` from Python with tool mocks
given as lambdas (the run's and a case's), a model user simulator opened in each worker, a
recipe that cannot be pickled or loaded there stopping the run with one `ConfigError` naming
it, and the driver's kill limit, never shorter than the worker's own deadline needs."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from tests.judge.fakes import FakeOpenAI, clear_provider_env
from tests.simulation.model import RefundUser, numbered_agent, refund_case

import agenteval
from agenteval import EvalCase
from agenteval.engine.deadline import grace_s
from agenteval.engine.executors.process import MARGIN_S, kill_limit_s
from agenteval.engine.executors.remote import TrialJob, TrialRecipe
from agenteval.errors import AgentLoadError, ConfigError
from agenteval.retry import RetryPolicy
from agenteval.simulation.simulator import UserSimulatorConfig
from agenteval.user_simulation import UserSimulation

AGENTS = Path(__file__).parent / "process_agents"


@agenteval.tool
def pxs_weather(city: str) -> dict[str, Any]:
    """The weather in a city (never run: mocked)."""
    raise RuntimeError("the real tool ran")


@agenteval.tool
def pxs_humidity(city: str) -> dict[str, Any]:
    """The humidity in a city (never run: mocked)."""
    raise RuntimeError("the real tool ran")


def weather_agent(city: str) -> str:
    weather = pxs_weather(city)
    humidity = pxs_humidity(city)
    return f"{weather['celsius']} / {humidity['percent']}"


def test_lambda_tool_mocks_reach_the_workers(tmp_path: Path) -> None:
    cases = [
        EvalCase(id="Paris", input="Paris"),
        EvalCase(
            id="Rome",
            input="Rome",
            tool_mocks={"pxs_weather": {"result": lambda city: {"celsius": len(city) * 10}}},
        ),
    ]
    run = agenteval.evaluate(
        weather_agent,
        cases,
        executor="process",
        workers=2,
        tool_mocks={
            "pxs_weather": {"result": lambda city: {"celsius": len(city)}},
            "pxs_humidity": {"result": lambda city: {"percent": 40}},
        },
        store=tmp_path / "runs.db",
    )
    outputs = {result.case.id: result.trial.output for result in run.results}
    assert outputs == {"Paris": "5 / 40", "Rome": "40 / 40"}
    for result in run.results:
        assert result.trial.failure is None
        assert [call.mocked for call in result.trial.tool_calls] == ["mock", "mock"]


class _Locked:
    """An agent holding a lock: nothing a process can be sent."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __call__(self, question: str) -> str:
        return question


def test_an_agent_that_cannot_be_pickled_stops_the_run_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        agenteval.evaluate(
            _Locked(), [EvalCase(input="a")], executor="process", store=tmp_path / "r.db"
        )
    message = caught.value.message
    assert "cannot send the run's agent to its worker processes" in message
    assert "lock" in message
    assert "by its reference (`agent.py:graph`)" in (caught.value.hint or "")


def test_a_case_that_cannot_be_pickled_stops_the_run_naming_it(tmp_path: Path) -> None:
    lock = threading.Lock()
    case = EvalCase(
        id="locked",
        input="Rome",
        tool_mocks={"pxs_weather": {"result": lambda city: {"celsius": bool(lock)}}},
    )
    with pytest.raises(ConfigError) as caught:
        agenteval.evaluate(
            weather_agent,
            [case],
            executor="process",
            tool_mocks={"pxs_humidity": {"result": {"percent": 1}}},
            store=tmp_path / "r.db",
        )
    assert caught.value.case == "locked"
    assert "cannot send the case to its worker processes" in caught.value.message


def test_an_agent_whose_module_fails_in_the_workers_stops_the_run_saying_why(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError) as caught:
        agenteval.evaluate(
            f"{AGENTS / 'refuses_workers.py'}:run",
            [EvalCase(input="a"), EvalCase(input="b")],
            executor="process",
            workers=1,
            store=tmp_path / "r.db",
        )
    message = caught.value.message
    assert "workers cannot load the run's recipe" in message
    assert "refuses to load in a worker process" in message


def test_a_model_user_simulator_is_opened_in_each_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_provider_env(monkeypatch)
    with FakeOpenAI(handler=RefundUser()) as fake:
        simulator = UserSimulatorConfig(
            spec="openai:gpt-4o-mini", base_url=fake.base_url, cache_path=tmp_path / "cache.db"
        )
        run = agenteval.evaluate(
            numbered_agent,
            [refund_case("a", "8812"), refund_case("b", "7301")],
            scorers=["exact_match"],
            builtins=False,
            user_simulator=simulator,
            executor="process",
            workers=2,
            store=tmp_path / "runs.db",
        )
        assert fake.request_count == 8  # four replies a conversation, from the workers
    outputs = {result.case.id: result.trial.output for result in run.results}
    assert outputs == {"a": "Refund issued for order 8812.", "b": "Refund issued for order 7301."}
    for result in run.results:
        assert result.trial.simulation is not None
        assert result.trial.simulation.user == "openai:gpt-4o-mini"


def _job(case: EvalCase, retries_left: int) -> TrialJob:
    return TrialJob(case, 0, retries_left)


def test_the_kill_limit_covers_every_attempt_grace_and_wait() -> None:
    retry = RetryPolicy(max_retries=2, max_wait_s=7.0)
    recipe = TrialRecipe(agent=weather_agent, timeout_s=3.0, retry=retry)
    per_attempt = 3.0 + grace_s(3.0) + MARGIN_S
    plain = EvalCase(id="plain", input="x")
    assert kill_limit_s(recipe, _job(plain, 2)) == 3 * per_attempt + 2 * 7.0
    assert kill_limit_s(recipe, _job(plain, 0)) == per_attempt
    # No time limit: no kill (a blocked loop hangs its trial, as it does locally).
    assert kill_limit_s(TrialRecipe(agent=weather_agent), _job(plain, 2)) is None
    # A scripted user's replies do not run on the agent's clock: each may take the limit.
    scripted = EvalCase(
        id="scripted", user_simulation=UserSimulation(script="x.py:user", max_turns=4)
    )
    assert kill_limit_s(recipe, _job(scripted, 0)) == per_attempt + 4 * 3.0


def test_an_error_that_stops_a_local_run_stops_a_pool_run_too(tmp_path: Path) -> None:
    # A scripted user whose module loads in the driver but not in a worker: the worker's
    # AgentLoadError stops the run, as it would locally, never a trial stored as lost.
    script = f"{AGENTS / 'refuses_workers.py'}:run"
    case = EvalCase(id="talk", user_simulation=UserSimulation(script=script))
    with pytest.raises(AgentLoadError) as caught:
        agenteval.evaluate(
            lambda messages: "hello",
            [case],
            executor="process",
            workers=1,
            store=tmp_path / "r.db",
        )
    assert "refuses to load in a worker process" in caught.value.message
