"""A tool that ends with a `BaseException` (a library's `CancelledError`, a `KeyboardInterrupt`
raised by the tool itself, a custom control-flow signal) which the agent catches and answers
anyway: the call failed, so its record must say so.

Before, `@agenteval.tool` recorded an error only for an `Exception`: the failed call was stored
with no error and no result, as a success, and `tool_execution` passed the trial (a wrong
verdict with exit code 0).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase


class Halt(BaseException):
    """A library's own control-flow signal: not an Exception."""


KINDS: list[type[BaseException]] = [Halt, KeyboardInterrupt, asyncio.CancelledError, SystemExit]


def _tools(kind: type[BaseException]) -> tuple[Any, Any]:
    @agenteval.tool(name="flaky_sync")
    def flaky_sync(query: str) -> str:
        raise kind("the tool gave up")

    @agenteval.tool(name="flaky_async")
    async def flaky_async(query: str) -> str:
        await asyncio.sleep(0)
        raise kind("the tool gave up")

    return flaky_sync, flaky_async


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_a_tool_call_ended_by_a_base_exception_is_recorded_as_failed(
    tmp_path: Path, kind: type[BaseException], asynchronous: bool
) -> None:
    flaky_sync, flaky_async = _tools(kind)

    async def async_agent(question: str) -> str:
        with contextlib.suppress(BaseException):  # the agent carries on without the tool
            await flaky_async(question)
        return "fine"

    def sync_agent(question: str) -> str:
        with contextlib.suppress(BaseException):
            flaky_sync(question)
        return "fine"

    run = await asyncio.wait_for(
        agenteval.evaluate_async(
            async_agent if asynchronous else sync_agent,
            [EvalCase(id="c", input="q", expected_output="fine")],
            store=tmp_path / "runs.db",
            retries=0,
        ),
        60,
    )
    (result,) = run.results
    (call,) = result.trial.tool_calls
    assert call.error is not None and kind.__name__ in call.error
    assert "the tool gave up" in call.error
    assert result.scores["tool_execution"].passed is False
    # and as stored: what show, report and rescore read
    with agenteval.RunStore(tmp_path / "runs.db") as store:
        (stored,) = list(store.iter_results(run.info.run_id))
    assert stored.trial.tool_calls[0].error == call.error
