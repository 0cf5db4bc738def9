"""An agent that returns the same `Trial` object to several trials (a cached answer:
`functools.cache` on the agent, a constant trial of a test double) gets one record per
trial: each stored with its own case, index, state and timings. Before, the engine stamped
every trial onto the one object the agent returned, so concurrent trials overwrote each other:
every stored record said the last case and index, and one trial's environment state was
scored and stored as another's."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

import agenteval
from agenteval import EvalCase, RunStore
from agenteval.trace import Trial

SHARED = Trial(output="done")


async def constant(question: str) -> Trial:
    agenteval.state()["marked"] = question  # as a tool would; no call recorded
    await asyncio.sleep(0.01)  # every trial is running when the first one ends
    return SHARED


@functools.cache
def cached(question: str) -> Trial:
    return Trial(output=question.upper())


def test_each_trial_of_a_shared_answer_is_recorded_as_its_own(tmp_path: Path) -> None:
    cases = [
        EvalCase(
            id=f"c{i}", input=f"q{i}", expected_output="done", expected_state={"marked": f"q{i}"}
        )
        for i in range(6)
    ]
    run = agenteval.evaluate(constant, cases, store=tmp_path / "runs.db", concurrency=6)
    for result in run.results:
        assert result.trial.case_id == result.case.id
        assert result.trial.state == {"marked": result.case.input}
        assert result.scores["state_match"].value == 1.0, result.scores["state_match"].reason
    stored = list(RunStore(tmp_path / "runs.db").iter_results(run.info.run_id))
    assert sorted(r.trial.case_id for r in stored) == [f"c{i}" for i in range(6)]
    assert all(r.trial.state == {"marked": r.case.input} for r in stored)


def test_the_trials_of_a_cached_agent_keep_their_own_index(tmp_path: Path) -> None:
    case = EvalCase(id="c", input="paris", expected_output="PARIS")
    run = agenteval.evaluate(cached, [case], store=tmp_path / "runs.db", trials=3)
    assert sorted(r.trial.trial for r in run.results) == [0, 1, 2]
    stored = list(RunStore(tmp_path / "runs.db").iter_results(run.info.run_id))
    assert sorted(r.trial.trial for r in stored) == [0, 1, 2]
