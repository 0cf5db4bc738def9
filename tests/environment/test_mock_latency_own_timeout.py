"""A mock's `latency_s` is the case's scenario (a slow tool): an agent whose own time limit on
the call (`asyncio.wait_for`, `asyncio.timeout`) runs out against it, and lets the
`TimeoutError` out, failed that scenario itself: `agent_error`, scored, run once. Before, its
`TimeoutError` read as infrastructure: a retried, unscored `timeout`, so a case testing how an
agent handles a slow tool could never fail. The run's own time limit (`timeout`) stays a
`timeout`, however slow the mock."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase
from agenteval.retry import RetryPolicy
from agenteval.trace import FailureCause

QUICK_RETRY = RetryPolicy(max_retries=2, initial_wait_s=0.01, max_wait_s=0.01)
CALLS: list[str] = []


@agenteval.tool
async def find_order(order_id: str) -> dict[str, Any]:
    return {"order": order_id, "status": "live"}


async def impatient(question: str) -> str:
    CALLS.append(question)
    if question == "wait_for":
        found = await asyncio.wait_for(find_order("o-1"), 0.05)
    elif question == "timeout":
        async with asyncio.timeout(0.05):
            found = await find_order("o-1")
    else:  # no limit of its own: the run's applies
        found = await find_order("o-1")
    return str(found)


def _run(question: str, store: Path, **options: Any) -> agenteval.TrialResult:
    CALLS.clear()
    case = EvalCase(
        id="slow-order-service",
        input=question,
        expected_output="sorry, the order service is slow today",
        tool_mocks={"find_order": {"result": {"status": "late"}, "latency_s": 5}},
    )
    run = agenteval.evaluate(impatient, [case], store=store, retry_policy=QUICK_RETRY, **options)
    (result,) = run.results
    return result


@pytest.mark.parametrize("limit", ["wait_for", "timeout"])
def test_the_agents_own_timeout_on_a_slow_mock_is_its_failure(limit: str, tmp_path: Path) -> None:
    result = _run(limit, tmp_path / "runs.db")
    failure = result.trial.failure
    assert failure is not None and failure.cause is FailureCause.AGENT_ERROR
    assert failure.error_type == "TimeoutError"
    assert result.trial.attempts == 1 and len(CALLS) == 1
    assert result.scores["exact_match"].value == 0.0


def test_the_runs_time_limit_on_a_slow_mock_is_still_a_timeout(tmp_path: Path) -> None:
    result = _run("none", tmp_path / "runs.db", timeout=0.05, retries=0)
    failure = result.trial.failure
    assert failure is not None and failure.cause is FailureCause.TIMEOUT
