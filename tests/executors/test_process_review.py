"""What the review of the process executor found a `process` run doing unlike a `local` one,
each shown by the same run on both."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import agenteval
from agenteval import EvalCase


@agenteval.tool
def pxr_lookup(city: str) -> dict[str, Any]:
    """A lookup that answers differently each time it runs (so a replay shows)."""
    return {"n": random.random()}


def lookup_agent(city: str) -> str:
    return f"{city}: {pxr_lookup(city)['n']}"


def test_a_replay_runs_on_worker_processes_as_it_does_locally(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    cases = [EvalCase(id="Paris", input="Paris"), EvalCase(id="Rome", input="Rome")]
    recorded = agenteval.evaluate(lookup_agent, cases, store=store)
    replayed = agenteval.evaluate(
        lookup_agent,
        cases,
        executor="process",
        workers=2,
        replay_tools=recorded.run_id,
        store=store,
    )
    outputs = {result.case.id: result.trial.output for result in recorded.results}
    assert {result.case.id: result.trial.output for result in replayed.results} == outputs
    for result in replayed.results:
        assert result.trial.failure is None
        assert [call.mocked for call in result.trial.tool_calls] == ["replay"]
