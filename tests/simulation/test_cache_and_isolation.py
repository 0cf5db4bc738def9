"""The simulator's replies are cached by the conversation so far: a second run of a
deterministic agent asks nothing, each trial of a case is its own sample, and rescoring or
judging a run never asks the simulator. Trials in flight together never see each other's
conversation; a secret in an agent's answer never reaches the simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.judge.fakes import FakeOpenAI, delay, verdict
from tests.simulation.model import (
    SECRET,
    is_simulator_request,
    leaky_agent,
    numbered_agent,
    refund_case,
)

from agenteval import EndReason, evaluate, judge_run, rescore
from agenteval.judge.judge import JudgeConfig
from agenteval.simulation.simulator import UserSimulatorConfig


def simulator(fake: FakeOpenAI, tmp_path: Path, **settings: Any) -> UserSimulatorConfig:
    return UserSimulatorConfig(
        spec="openai:gpt-4o-mini",
        base_url=fake.base_url,
        cache_path=tmp_path / "cache.db",
        **settings,
    )


def run(fake: FakeOpenAI, tmp_path: Path, cases: Any, agent: Any = numbered_agent, **options: Any):  # type: ignore[no-untyped-def]
    options.setdefault("user_simulator", simulator(fake, tmp_path))
    return evaluate(
        agent,
        cases,
        scorers=["exact_match"],
        builtins=False,
        store=tmp_path / "runs.db",
        **options,
    )


def simulator_requests(fake: FakeOpenAI) -> int:
    return sum(is_simulator_request(body) for body in fake.requests)


def test_a_second_run_of_a_deterministic_agent_asks_the_simulator_nothing(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    first = run(fake, tmp_path, [refund_case()])
    asked = fake.request_count
    assert asked == 4
    second = run(fake, tmp_path, [refund_case()])
    assert fake.request_count == asked  # every reply from the cache
    was, now = first.results[0].trial.simulation, second.results[0].trial.simulation
    assert [t.user for t in now.turns] == [t.user for t in was.turns]
    assert now.end_reason is EndReason.GOAL_ACHIEVED
    assert now.cached_calls == 4 and now.model_calls == [] and now.cost_usd is None


def test_without_the_cache_the_simulator_is_asked_again(fake: FakeOpenAI, tmp_path: Path) -> None:
    run(fake, tmp_path, [refund_case()])
    run(fake, tmp_path, [refund_case()], use_cache=False)
    assert fake.request_count == 8


def test_each_trial_is_a_distinct_sample(fake: FakeOpenAI, tmp_path: Path) -> None:
    result = run(fake, tmp_path, [refund_case()], trials=3)
    assert fake.request_count == 12  # 4 replies in each of 3 trials, none shared
    assert all(r.trial.simulation.cached_calls == 0 for r in result.results)
    again = run(fake, tmp_path, [refund_case()], trials=3)
    assert fake.request_count == 12
    assert sorted(r.trial.trial for r in again.results) == [0, 1, 2]


def test_rescoring_and_judging_a_run_never_ask_the_simulator(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    result = run(fake, tmp_path, [refund_case()])
    asked = simulator_requests(fake)
    rescore(result.run_id, store=tmp_path / "runs.db")
    fake.handler = None  # from here on the server plays the judge
    fake.default = verdict({"reasoning": "fine", "score": 1.0})
    judge = JudgeConfig(
        spec="openai:gpt-4o-mini", base_url=fake.base_url, cache_path=tmp_path / "judge.db"
    )
    judged = judge_run(result.run_id, judge, rubrics=["correctness"], store=tmp_path / "runs.db")
    assert fake.request_count > asked  # the judge was asked
    assert simulator_requests(fake) == asked  # the simulator was not
    assert judged.results[0].trial.simulation.turns == result.results[0].trial.simulation.turns


def test_eight_trials_at_concurrency_eight_never_mix_conversations(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    user = fake.handler
    assert user is not None
    # Each reply waits a little, so the eight conversations interleave.
    fake.handler = lambda body: delay(0.02, user(body))
    cases = [refund_case(f"case-{n}", order=str(1000 + n)) for n in range(8)]
    result = run(fake, tmp_path, cases, concurrency=8)
    assert len(result.results) == 8
    for r in result.results:
        order = r.case.id.removeprefix("case-")
        number = str(1000 + int(order))
        assert r.trial.output == f"Refund issued for order {number}."
        users = [t.user for t in r.trial.simulation.turns]
        assert users == ["My order arrived broken.", number, "ana@example.com"]
        assert r.trial.simulation.end_reason is EndReason.GOAL_ACHIEVED


def test_a_secret_in_the_agents_answer_never_reaches_the_simulator(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    result = run(fake, tmp_path, [refund_case()], agent=leaky_agent)
    assert result.results[0].trial.simulation.end_reason is EndReason.GOAL_ACHIEVED
    assert fake.request_count == 4
    # The agent's answer reached the simulator, its key masked.
    assert "(debug: key sk-proj-[REDACTED])" in json.dumps(fake.requests[1])
    for body in fake.requests:
        assert SECRET not in json.dumps(body)
    assert SECRET not in (tmp_path / "cache.db").read_bytes().decode("utf-8", "replace")
