"""The built-in agent against a loopback OpenAI-compatible server that admits a few requests per
window and answers the rest 429 with `Retry-After`: every trial completes, retried inside the
agent, and the endpoint's adaptive limit is cut and climbs back. Asserted by counting."""

from __future__ import annotations

from pathlib import Path

from tests.agents.fakes_toolcalls import ToolCallingOpenAI, answer
from tests.judge.fakes import RateLimit, http_error

import agenteval
from agenteval import EvalCase
from agenteval.agents.builtin import builtin_agent
from agenteval.throttle import endpoint, shared_limits


def _cases(first: int, count: int) -> list[EvalCase]:
    return [
        EvalCase(id=f"q{i}", input=f"What is the capital of France? ({i})", expected_output="Paris")
        for i in range(first, first + count)
    ]


async def test_a_rate_limited_agent_loses_no_trial_and_adapts(
    openai_fake: ToolCallingOpenAI, tmp_path: Path
) -> None:
    openai_fake.default = answer("Paris")
    limiter = RateLimit(per_window=4, window_s=0.25)
    openai_fake.handler = limiter
    agent = builtin_agent({"model": "openai:fake-llm", "base_url": openai_fake.base_url})
    store = tmp_path / "runs.db"
    run = await agenteval.evaluate_async(agent, _cases(0, 24), store=store, concurrency=8)
    trials = [result.trial for result in run.results]
    assert len(trials) == 24
    assert all(t.failure is None and t.output == "Paris" for t in trials)
    # Retried inside the agent, never as a whole trial, and every 429 counted.
    assert all(t.attempts == 1 for t in trials)
    assert sum(t.retries.get("rate_limited", 0) for t in trials) == limiter.refused > 0
    limit = shared_limits()[endpoint("openai", openai_fake.base_url, "fake-llm")]
    assert limit.responses_429 == limiter.refused
    assert limit.cuts >= 1
    assert limit.lowest < 8  # below the run's concurrency

    # The 429s stop: the limit climbs back to the calls the run keeps in flight.
    limiter.enabled = False
    run = await agenteval.evaluate_async(agent, _cases(24, 80), store=store, concurrency=8)
    assert all(r.trial.failure is None for r in run.results)
    assert limit.limit >= 8


def test_adaptive_off_retries_within_the_agents_own_budget(
    openai_fake: ToolCallingOpenAI, tmp_path: Path
) -> None:
    openai_fake.push(http_error(429, retry_after=0), http_error(429, retry_after=0))
    openai_fake.default = answer("Paris")
    agent = builtin_agent(
        {"model": "openai:fake-llm", "base_url": openai_fake.base_url, "retries": 1}
    )
    off = builtin_agent(
        {
            "model": "openai:fake-llm",
            "base_url": openai_fake.base_url,
            "retries": 1,
            "adaptive": False,
        }
    )
    # Adaptive: 429s have a budget of their own, so two in a row are retried inside the agent.
    run = agenteval.evaluate(agent, _cases(0, 1), store=tmp_path / "a.db", retries=0)
    (result,) = run.results
    assert result.trial.failure is None
    assert result.trial.retries == {"rate_limited": 2}
    # Off: the second 429 exhausts `retries: 1`, and the engine's retry of the trial answers.
    openai_fake.push(http_error(429, retry_after=0), http_error(429, retry_after=0))
    run = agenteval.evaluate(off, _cases(0, 1), store=tmp_path / "b.db", retries=1)
    (result,) = run.results
    assert result.trial.failure is None
    assert result.trial.attempts == 2
    assert result.trial.retries == {"rate_limited": 2}
