"""What the review of the process executor found a `process` run doing unlike a `local` one,
each shown by the same run on both."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import agenteval
from agenteval import EvalCase
from agenteval.trace import FailureCause


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


QUICK_LEAK = f"{Path(__file__).parent / 'process_agents' / 'quick_leak.py'}:run"


def test_the_trial_that_leaves_its_worker_past_the_memory_limit_is_charged_with_it(
    tmp_path: Path,
) -> None:
    # One worker, one trial at a time: each `leak` keeps 12 MB and ends before the watchdog
    # looks; the trial after it (innocent, 0.15 s) was charged with the limit the leak passed.
    cases = []
    for index in range(12):
        cases += [EvalCase(id=f"leak{index}", input="leak"), EvalCase(id=f"ok{index}", input="hi")]
    run = agenteval.evaluate(
        QUICK_LEAK,
        cases,
        executor="process",
        workers=1,
        concurrency=1,
        worker_memory_mb=100,
        store=tmp_path / "runs.db",
    )
    trials = {result.case.id: result.trial for result in run.results}
    charged = sorted(case for case, trial in trials.items() if trial.failure is not None)
    assert charged, "a worker at 44 MB that keeps 144 MB passes its 100 MB limit"
    assert all(case.startswith("leak") for case in charged), charged
    for case in charged:
        failure = trials[case].failure
        assert failure is not None and failure.cause is FailureCause.WORKER_CRASHED
        assert "memory limit (worker_memory_mb: 100 MB)" in failure.message
