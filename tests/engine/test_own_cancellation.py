"""An agent (or a scorer) that cancels the very task it runs in: a library that captured
`asyncio.current_task()` for its own timeout and cancels it, without the `uncancel` that
`asyncio.timeout` does. The cancellation is counted on the worker's task, where the engine used
to take it for the run being stopped: the worker ended and its trials were lost.

Only the run's own stop (its task cancelled, one of its tasks failing, a real Ctrl-C) stops it;
a cancellation the agent asked for is that trial's `agent_error` when it ends the agent, and is
withdrawn when the agent caught it (or left it pending) and answered: the answer stands, and the
next trial in the same worker runs as if nothing had happened.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase, FailureCause, Score, Trial

HANG_GUARD_S = 60
CASES = [EvalCase(id=f"c{i}", input=f"q{i}", expected_output=f"Q{i}") for i in range(10)]
BAD = {"q3", "q7"}


async def _cancel_and_await(question: str) -> str:
    if question in BAD:
        asyncio.current_task().cancel()  # type: ignore[union-attr]
        await asyncio.sleep(0)
    return question.upper()


async def _cancel_and_catch(question: str) -> str:
    if question in BAD:
        asyncio.current_task().cancel()  # type: ignore[union-attr]
        # A library turning its own cancellation into its own timeout, say.
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(1)
    await asyncio.sleep(0)
    return question.upper()


async def _cancel_and_return(question: str) -> str:
    if question in BAD:
        asyncio.current_task().cancel()  # type: ignore[union-attr]
    return question.upper()  # the cancellation is still pending: it would hit the next await


async def _raise_after_a_swallowed_cancellation(question: str) -> str:
    """The trials after a caught cancellation raise a `CancelledError` of their own (a library's
    task was cancelled): with the first one left counted on the worker's task, they would be
    blamed for cancelling their own task."""
    if question in BAD:
        return await _cancel_and_catch(question)
    if question in {"q4", "q8"}:
        raise asyncio.CancelledError("a library's task was cancelled")
    return question.upper()


async def _run(agent: Any, tmp_path: Path, **options: Any) -> agenteval.Run:
    return await asyncio.wait_for(
        agenteval.evaluate_async(agent, CASES, store=tmp_path / "runs.db", retries=0, **options),
        HANG_GUARD_S,
    )


def _by_input(run: agenteval.Run) -> dict[str, Trial]:
    trials = {str(r.case.input): r.trial for r in run.results}
    assert len(run.results) == len(CASES) and set(trials) == {str(c.input) for c in CASES}
    return trials


LIMITS = pytest.mark.parametrize("timeout", [None, 5.0], ids=["no-limit", "time-limit"])
CONCURRENCY = pytest.mark.parametrize("concurrency", [1, 3])


@LIMITS
@CONCURRENCY
async def test_a_cancellation_that_ends_the_agent_is_its_trials_agent_error(
    tmp_path: Path, timeout: float | None, concurrency: int
) -> None:
    run = await _run(_cancel_and_await, tmp_path, timeout=timeout, concurrency=concurrency)
    for question, trial in _by_input(run).items():
        if question in BAD:
            assert trial.failure is not None
            assert trial.failure.cause is FailureCause.AGENT_ERROR
            assert trial.failure.error_type == "CancelledError"
            assert "cancelled its own task" in trial.failure.message
            assert trial.attempts == 1  # the agent's error: not retried
        else:
            assert trial.failure is None and trial.output == question.upper()
    assert run.complete
    assert run.summary.scorers["exact_match"].pass_rate == pytest.approx(0.8)


@LIMITS
@CONCURRENCY
@pytest.mark.parametrize(
    "agent",
    [_cancel_and_catch, _cancel_and_return, _raise_after_a_swallowed_cancellation],
    ids=["caught", "left-pending", "raise-next"],
)
async def test_a_cancellation_the_agent_survived_is_withdrawn_and_its_answer_stands(
    tmp_path: Path,
    timeout: float | None,
    concurrency: int,
    agent: Callable[[str], Awaitable[str]],
) -> None:
    run = await _run(agent, tmp_path, timeout=timeout, concurrency=concurrency)
    for question, trial in _by_input(run).items():
        if agent is _raise_after_a_swallowed_cancellation and question in {"q4", "q8"}:
            assert trial.failure is not None
            assert trial.failure.message == "a library's task was cancelled"
        else:
            assert trial.failure is None, (question, trial.failure)
            assert trial.output == question.upper()
    assert run.complete


async def test_a_scorer_cancelling_its_own_task_is_that_scores_error(tmp_path: Path) -> None:
    async def scorer(case: EvalCase, trial: Trial) -> Score:
        if case.id == "c3":
            asyncio.current_task().cancel()  # type: ignore[union-attr]
            await asyncio.sleep(0)
        return Score(name="scorer", value=1.0, passed=True)

    run = await _run(lambda q: q.upper(), tmp_path, scorers=[scorer], concurrency=1)
    errors = {r.case.id: r.scores["scorer"].error for r in run.results}
    assert len(errors) == len(CASES)
    assert {case_id for case_id, error in errors.items() if error} == {"c3"}
    assert "CancelledError" in (errors["c3"] or "")


@LIMITS
async def test_the_run_cancelled_from_outside_still_stops(
    tmp_path: Path, timeout: float | None
) -> None:
    """A real stop: the task awaiting the run is cancelled while agents run (and one of them
    has just cancelled itself): the cancellation propagates, the run is not finished."""
    started = asyncio.Event()

    async def agent(question: str) -> str:
        if question in BAD:
            await _cancel_and_catch(question)
        started.set()
        await asyncio.sleep(30)
        return question.upper()

    store = tmp_path / "runs.db"
    task = asyncio.ensure_future(
        agenteval.evaluate_async(agent, CASES, store=store, timeout=timeout, concurrency=4)
    )
    await asyncio.wait_for(started.wait(), HANG_GUARD_S)
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, HANG_GUARD_S)
    with agenteval.RunStore(store) as runs:
        assert all(info.status != "finished" for info in runs.list_runs())


class _Unreadable(Mapping[tuple[str, int], Trial]):
    """Recorded trials of which one cannot be read: the worker that reads it fails, while the
    other workers are in the middle of scoring."""

    def __init__(self) -> None:
        self.trials = {(c.id, 0): Trial(case_id=c.id, output=f"Q{c.id[1:]}") for c in CASES}

    def __getitem__(self, key: tuple[str, int]) -> Trial:
        if key[0] == "c3":
            raise RuntimeError("the recorded trial c3 cannot be read")
        return self.trials[key]

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return iter(self.trials)

    def __len__(self) -> int:
        return len(self.trials)


async def test_a_worker_failing_stops_the_others_rather_than_being_taken_for_theirs(
    tmp_path: Path,
) -> None:
    """The others' cancellation comes from their task group, not from the run's task: it is the
    run's stop all the same (the failing worker says so first), never a scorer's own
    cancellation to be recorded and stored."""

    async def slow(case: EvalCase, trial: Trial) -> Score:
        await asyncio.sleep(0 if case.id == "c0" else 30)
        return Score(name="slow", value=1.0, passed=True)

    store = tmp_path / "runs.db"
    with pytest.raises(RuntimeError, match="c3 cannot be read"):
        await asyncio.wait_for(
            agenteval.evaluate_async(
                None, CASES, [slow], concurrency=3, store=store, recorded=_Unreadable()
            ),
            HANG_GUARD_S,
        )
    with agenteval.RunStore(store) as runs:
        (info,) = runs.list_runs()
        stored = [r.case.id for r in runs.iter_results(info.run_id)]
    assert info.status != "finished"
    assert set(stored) <= {"c0"}  # the others were stopped: not scored, not stored, not going on


@pytest.mark.parametrize("who", ["the store writer", "the workers' supervisor"])
async def test_an_agent_cancelling_an_engine_task_fails_the_run_loudly(
    tmp_path: Path, who: str
) -> None:
    """Not the agent's own task but one of the run's (found by its guard's `who`): the run
    cannot go on as it should, and fails with an error rather than hang or finish short."""

    async def agent(question: str) -> str:
        if question == "q3":
            for task in asyncio.all_tasks():
                coro = task.get_coro()
                frame = getattr(coro, "cr_frame", None)
                if getattr(coro, "__name__", "") != "_never_lost" or frame is None:
                    continue
                if frame.f_locals.get("who") == who:
                    task.cancel()
        await asyncio.sleep(0)
        return question.upper()

    store = tmp_path / "runs.db"
    with pytest.raises(RuntimeError, match="nobody asked for"):
        await _run(agent, tmp_path, concurrency=2)
    with agenteval.RunStore(store) as runs:
        assert all(info.status != "finished" for info in runs.list_runs())
