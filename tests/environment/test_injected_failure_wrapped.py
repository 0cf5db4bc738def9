"""An agent that meets an injected failure and gives up with an error of its own (raised while
handling it) failed the case's scenario itself: `agent_error`, scored, never retried, whether
the run is started by `evaluate` or `evaluate_async`. Before, `evaluate` (the sync form) ran the
whole run inside the `except RuntimeError` that found no running loop, so a sync agent's error,
raised again in the event loop's thread, took that RuntimeError as its context in place of the
injected failure: its own `TimeoutError` read as infrastructure, was retried (the agent run three
times) and left out of scoring."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import agenteval
from agenteval import EvalCase
from agenteval.retry import RetryPolicy
from agenteval.trace import FailureCause

QUICK_RETRY = RetryPolicy(max_retries=2, initial_wait_s=0.01, max_wait_s=0.01)
CASE = EvalCase(
    id="order-timeout",
    input="where is order o-1?",
    expected_output="o-1 is on its way",
    tool_mocks={"find_order": {"error": "timeout"}},
)
CALLS: list[str] = []


@agenteval.tool
def find_order(order_id: str) -> dict[str, Any]:
    raise AssertionError("mocked: never runs")


def gives_up_implicitly(question: str) -> str:
    CALLS.append(question)
    try:
        return str(find_order("o-1"))
    except TimeoutError:
        raise TimeoutError("the order service timed out")  # noqa: B904 - the point


def _check(run: agenteval.Run) -> None:
    (result,) = run.results
    failure = result.trial.failure
    assert failure is not None and failure.cause is FailureCause.AGENT_ERROR
    assert result.trial.attempts == 1 and result.trial.retries == {}
    assert len(CALLS) == 1  # run once: never retried as infrastructure
    assert result.scores["exact_match"].value == 0.0  # scored, a failure


def test_a_sync_agent_giving_up_on_an_injected_failure_fails_through_evaluate(
    tmp_path: Path,
) -> None:
    CALLS.clear()
    _check(
        agenteval.evaluate(
            gives_up_implicitly, [CASE], store=tmp_path / "runs.db", retry_policy=QUICK_RETRY
        )
    )


def test_and_through_evaluate_async(tmp_path: Path) -> None:
    CALLS.clear()
    run = asyncio.run(
        agenteval.evaluate_async(
            gives_up_implicitly, [CASE], store=tmp_path / "runs.db", retry_policy=QUICK_RETRY
        )
    )
    _check(run)


def test_and_when_evaluate_is_called_while_handling_an_error_of_the_callers(
    tmp_path: Path,
) -> None:
    CALLS.clear()
    try:
        raise KeyError("the caller's own, handled")
    except KeyError:
        run = agenteval.evaluate(
            gives_up_implicitly, [CASE], store=tmp_path / "runs.db", retry_policy=QUICK_RETRY
        )
    _check(run)
