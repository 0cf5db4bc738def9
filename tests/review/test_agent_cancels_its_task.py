"""An async agent that cancels the very task it runs in (a library that captured
`asyncio.current_task()` for its own timeout and cancels it, without the `uncancel` that
`asyncio.timeout` does): the cancellation is counted on the worker's task, so the engine takes
it for the run being stopped and lets it end the worker.

With concurrency 1 and 10 cases of which the 4th does this, the run stores 3 trials, then ends
in a `WorkerLostError` traceback (exit 1); resuming it meets the same case and ends the same
way, so the run can never finish. The README promises that whatever an agent does ends its
trial, never a worker, and that a worker lost ends in an error, not a traceback. (Fixed: the
engine tells the run's own stop from the agent's cancellation, `interrupts.RunStop`.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.review.cli import agenteval, project

AGENT = """
import asyncio

async def answer(question):
    if question == "q3":
        asyncio.current_task().cancel()  # the agent cancels its own task
        await asyncio.sleep(0)
    return question.upper()
"""

CASES = [{"id": f"c{i}", "input": f"q{i}", "expected_output": f"Q{i}"} for i in range(10)]


@pytest.mark.parametrize("limit", ["", "timeout: 5\n"], ids=["no-limit", "time-limit"])
def test_an_agent_cancelling_its_own_task_ends_only_its_trial(tmp_path: Path, limit: str) -> None:
    folder = project(tmp_path / "p", AGENT, CASES, "concurrency: 1\nretries: 0\n" + limit)
    done = agenteval(folder, "run", ".", "--store", "runs.db", "--json", "out.json")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    results = json.loads((folder / "out.json").read_text())["results"]
    assert len(results) == 10
    (bad,) = [r for r in results if r["case_id"] == "c3"]
    assert bad["failure"]["cause"] == "agent_error"
    assert bad["failure"]["error_type"] == "CancelledError"
    assert "cancelled its own task" in bad["failure"]["message"]
    assert all(r["failure"] is None for r in results if r["case_id"] != "c3")
