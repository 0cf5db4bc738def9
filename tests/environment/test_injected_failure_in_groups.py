"""A failure a tool mock injected that escapes the agent inside an exception group (tools
called in parallel in an `asyncio.TaskGroup`, which raises an `ExceptionGroup` of what its
tasks raised) is the agent's own failure, `agent_error`, scored, run once. Before, the group
was read by its members' types (an injected `timeout` is a `TimeoutError`): a retried, unscored
`timeout`, the agent run three times and the case left out of the pass rate."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import agenteval
from agenteval import EvalCase
from agenteval.retry import RetryPolicy
from agenteval.trace import FailureCause

QUICK_RETRY = RetryPolicy(max_retries=2, initial_wait_s=0.01, max_wait_s=0.01)
CALLS: list[str] = []


@agenteval.tool
async def find_order(order_id: str) -> dict[str, Any]:
    return {"order": order_id, "status": "live"}


@agenteval.tool
async def find_customer(email: str) -> dict[str, Any]:
    raise ConnectionResetError("the CRM dropped the connection")


async def in_parallel(question: str) -> str:
    CALLS.append(question)
    if question == "with the customer":  # both calls' failures, raised together
        found = await asyncio.gather(
            find_order("o-1"), find_customer("ana@example.com"), return_exceptions=True
        )
        failed = [f for f in found if isinstance(f, Exception)]
        raise ExceptionGroup("the lookups failed", failed)
    async with asyncio.TaskGroup() as group:
        order = group.create_task(find_order("o-1"))
    return str(order.result())


def _run(question: str, store: Path) -> agenteval.TrialResult:
    CALLS.clear()
    case = EvalCase(
        id="parallel",
        input=question,
        expected_output="o-1 is on its way",
        tool_mocks={"find_order": {"error": "timeout"}},
    )
    run = agenteval.evaluate(in_parallel, [case], store=store, retry_policy=QUICK_RETRY)
    (result,) = run.results
    return result


def test_an_injected_failure_in_a_task_group_is_the_agents(tmp_path: Path) -> None:
    result = _run("the order", tmp_path / "runs.db")
    failure = result.trial.failure
    assert failure is not None and failure.cause is FailureCause.AGENT_ERROR
    assert failure.error_type == "ExceptionGroup"
    assert result.trial.attempts == 1 and len(CALLS) == 1
    assert result.scores["exact_match"].value == 0.0


def test_beside_a_real_connection_error_too(tmp_path: Path) -> None:
    # The group is infrastructure only when every failure in it is; the injected one is not.
    result = _run("with the customer", tmp_path / "runs.db")
    failure = result.trial.failure
    assert failure is not None and failure.cause is FailureCause.AGENT_ERROR
    assert result.trial.attempts == 1 and len(CALLS) == 1
    assert result.scores["exact_match"].value == 0.0
