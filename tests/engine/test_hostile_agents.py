"""Agents (and scorers) that end a trial with a `BaseException`: each is that trial's failure,
recorded and stored; no trial is lost, no worker dies, and a real Ctrl-C still stops the run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase, FailureCause, Score, Trial
from agenteval.engine.trials import RetryPolicy, run_trial

NO_RETRY = RetryPolicy(max_retries=0)
HANG_GUARD_S = 60


class Custom(BaseException):
    """Not an Exception: a library's own control-flow signal, say."""


def _raise(kind: type[BaseException]) -> BaseException:
    if kind is SystemExit:
        return SystemExit(3)
    return kind("from the agent")


CASES = [EvalCase(id=f"c{i}", input=f"q{i}", expected_output="fine") for i in range(10)]
BAD = {"c3", "c7"}
KINDS = [asyncio.CancelledError, KeyboardInterrupt, SystemExit, Custom, GeneratorExit]


def _async_agent(kind: type[BaseException]) -> Callable[[str], Any]:
    async def agent(text: str) -> str:
        await asyncio.sleep(0)
        if text in {"q3", "q7"}:
            raise _raise(kind)
        return "fine"

    return agent


def _sync_agent(kind: type[BaseException]) -> Callable[[str], Any]:
    def agent(text: str) -> str:
        if text in {"q3", "q7"}:
            raise _raise(kind)
        return "fine"

    return agent


def _check_every_trial_stored(run: agenteval.Run, kind: type[BaseException]) -> None:
    results = {r.case.id: r for r in run.results}
    assert set(results) == {c.id for c in CASES}
    for case_id, result in results.items():
        failure = result.trial.failure
        if case_id in BAD:
            assert failure is not None and failure.cause is FailureCause.AGENT_ERROR
            assert failure.error_type == kind.__name__
            assert result.scores["exact_match"].passed is False
        else:
            assert failure is None and result.scores["exact_match"].passed is True


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("make", [_async_agent, _sync_agent], ids=["async", "sync"])
async def test_an_agents_base_exception_is_its_trials_failure_and_no_trial_is_lost(
    tmp_path: Path, kind: type[BaseException], make: Callable[[type[BaseException]], Any]
) -> None:
    run = await asyncio.wait_for(
        agenteval.evaluate_async(
            make(kind), CASES, concurrency=2, store=tmp_path / "runs.db", retries=0
        ),
        HANG_GUARD_S,
    )
    _check_every_trial_stored(run, kind)
    assert run.summary.scorers["exact_match"].pass_rate == pytest.approx(0.8)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("asynchronous", [True, False], ids=["async", "sync"])
async def test_a_base_exception_in_a_later_turn_of_a_conversation(
    kind: type[BaseException], asynchronous: bool
) -> None:
    def answer(messages: list[dict[str, str]]) -> str:
        if len(messages) > 1:
            raise _raise(kind)
        return "first"

    async def async_answer(messages: list[dict[str, str]]) -> str:
        await asyncio.sleep(0)
        return answer(messages)

    case = EvalCase(conversation=[{"input": "one"}, {"input": "two"}])
    agent = async_answer if asynchronous else answer
    trial = await run_trial(agent, case, 0, timeout_s=None, retry=NO_RETRY)
    assert trial.failure is not None and trial.failure.cause is FailureCause.AGENT_ERROR
    assert trial.failure.error_type == kind.__name__


async def test_an_agents_cancelled_error_under_a_time_limit_is_its_own_failure() -> None:
    async def agent(text: str) -> str:
        raise asyncio.CancelledError("a library's task was cancelled")

    trial = await run_trial(agent, EvalCase(input="x"), 0, timeout_s=5, retry=NO_RETRY)
    assert trial.failure is not None and trial.failure.cause is FailureCause.AGENT_ERROR
    assert trial.failure.error_type == "CancelledError"
    assert "a library's task was cancelled" in trial.failure.message


async def test_a_real_cancellation_still_cancels_the_trial() -> None:
    started = asyncio.Event()

    async def agent(text: str) -> str:
        started.set()
        await asyncio.sleep(30)
        return "late"

    for timeout_s in (None, 10.0):
        task = asyncio.ensure_future(
            run_trial(agent, EvalCase(input="x"), 0, timeout_s=timeout_s, retry=NO_RETRY)
        )
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        started.clear()


@pytest.mark.parametrize("kind", [asyncio.CancelledError, SystemExit, Custom, KeyboardInterrupt])
async def test_a_scorer_raising_a_base_exception_is_that_scores_error(
    tmp_path: Path, kind: type[BaseException]
) -> None:
    def bad_scorer(case: EvalCase, trial: Trial) -> Score:
        if case.id in BAD:
            raise _raise(kind)
        return Score(name="bad_scorer", value=1.0, passed=True)

    async def bad_async_scorer(case: EvalCase, trial: Trial) -> Score:
        if case.id in BAD:
            raise _raise(kind)
        return Score(name="bad_async_scorer", value=1.0, passed=True)

    run = await asyncio.wait_for(
        agenteval.evaluate_async(
            lambda text: "fine",
            CASES,
            [bad_scorer, bad_async_scorer],
            concurrency=2,
            store=tmp_path / "runs.db",
        ),
        HANG_GUARD_S,
    )
    results = {r.case.id: r for r in run.results}
    assert set(results) == {c.id for c in CASES}
    for name in ("bad_scorer", "bad_async_scorer"):
        errors = {case_id for case_id, r in results.items() if r.scores[name].error}
        assert errors == BAD
        assert kind.__name__ in (results["c3"].scores[name].error or "")


class _Exploding(Mapping[tuple[str, int], Trial]):
    """Recorded trials of which one cannot be read: a worker would die on it."""

    def __init__(self) -> None:
        self.trials = {(c.id, 0): Trial(case_id=c.id, output="fine") for c in CASES}

    def __getitem__(self, key: tuple[str, int]) -> Trial:
        if key[0] == "c5":
            raise asyncio.CancelledError
        return self.trials[key]

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return iter(self.trials)

    def __len__(self) -> int:
        return len(self.trials)


async def test_a_worker_that_dies_with_jobs_left_fails_the_run_loudly(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    with pytest.raises(RuntimeError, match="worker"):
        await asyncio.wait_for(
            agenteval.evaluate_async(
                None, CASES, concurrency=1, store=store, recorded=_Exploding()
            ),
            HANG_GUARD_S,
        )
    with agenteval.RunStore(store) as runs:
        assert all(info.status != "finished" for info in runs.list_runs())


async def test_a_writer_that_dies_fails_the_run_loudly_and_never_hangs(tmp_path: Path) -> None:
    def on_result(result: Any) -> None:
        raise asyncio.CancelledError

    store = tmp_path / "runs.db"
    cases = [EvalCase(id=f"c{i}", input="x") for i in range(40)]
    with pytest.raises(RuntimeError, match="writer"):
        await asyncio.wait_for(
            agenteval.evaluate_async(
                lambda text: "fine", cases, concurrency=1, store=store, on_result=on_result
            ),
            HANG_GUARD_S,
        )


# -- a real Ctrl-C, in a real process


_INTERRUPTED = """
import asyncio, os, signal, sys, time
# As in a terminal, whatever this test's own process inherited (a background job ignores SIGINT).
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
import agenteval
from agenteval import EvalCase

started = Path(sys.argv[1])

async def agent(text):
    started.touch()
    {body}
    return "late"

cases = [EvalCase(id=f"c{{i}}", input="x") for i in range(4)]
{runner}
print("finished", flush=True)
"""


def _start(tmp_path: Path, body: str, runner: str) -> tuple[subprocess.Popen[str], Path]:
    started = tmp_path / "started"
    script = tmp_path / "interrupted.py"
    script.write_text(
        textwrap.dedent(_INTERRUPTED).format(body=body, runner=runner), encoding="utf-8"
    )
    process = subprocess.Popen(
        [sys.executable, str(script), str(started)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    deadline = time.monotonic() + HANG_GUARD_S
    while not started.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the agent never started"
        time.sleep(0.05)
    return process, started


@pytest.mark.parametrize(
    ("body", "runner"),
    [
        # asyncio.run: the first Ctrl-C cancels the main task.
        (
            "await asyncio.sleep(30)",
            "asyncio.run(agenteval.evaluate_async(agent, cases, concurrency=1, store='r.db'))",
        ),
        # A loop of one's own, Python's own SIGINT handler: the KeyboardInterrupt lands in the
        # agent's own frame, blocked in a call; it is a real Ctrl-C all the same.
        (
            "time.sleep(30)",
            "asyncio.new_event_loop().run_until_complete("
            "agenteval.evaluate_async(agent, cases, concurrency=1, store='r.db'))",
        ),
    ],
    ids=["asyncio.run", "own-loop"],
)
def test_a_real_ctrl_c_still_stops_the_run(tmp_path: Path, body: str, runner: str) -> None:
    process, _ = _start(tmp_path, body, runner)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=HANG_GUARD_S)
    assert "finished" not in out
    assert "KeyboardInterrupt" in err
    assert process.returncode != 0


_RESCORE = """
import asyncio, json, sys
import agenteval
from agenteval import EvalCase, Score

class Custom(BaseException):
    pass

KIND = {kind}

def bad_scorer(case, trial):
    if case.id == "c1":
        raise KIND("from the scorer")
    return Score(name="bad_scorer", value=1.0, passed=True)

async def bad_async_scorer(case, trial):
    return bad_scorer(case, trial)

cases = [EvalCase(id=f"c{{i}}", input="x", expected_output="fine") for i in range(3)]
run = agenteval.evaluate(lambda text: "fine", cases, store="runs.db")
again = agenteval.rescore(run.run_id, [bad_scorer, bad_async_scorer], store="runs.db")
print(json.dumps({{r.case.id: [r.scores["bad_scorer"].error, r.scores["bad_async_scorer"].error]
                  for r in again.results}}))
"""


@pytest.mark.parametrize("kind", ["SystemExit", "Custom", "GeneratorExit", "KeyboardInterrupt"])
def test_a_scorer_raising_a_base_exception_in_a_rescore_is_that_scores_error(
    tmp_path: Path, kind: str
) -> None:
    script = tmp_path / "rescore.py"
    script.write_text(textwrap.dedent(_RESCORE).format(kind=kind), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr
    errors = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(errors) == {"c0", "c1", "c2"}
    assert errors["c0"] == [None, None] and errors["c2"] == [None, None]
    assert all(kind in (error or "") for error in errors["c1"])


@pytest.mark.parametrize("kind", [GeneratorExit, Custom])
async def test_a_sync_scorer_raising_generator_exit_or_the_like_in_a_run(
    tmp_path: Path, kind: type[BaseException]
) -> None:
    def bad_scorer(case: EvalCase, trial: Trial) -> Score:
        if case.id in BAD:
            raise _raise(kind)
        return Score(name="bad_scorer", value=1.0, passed=True)

    run = await asyncio.wait_for(
        agenteval.evaluate_async(
            lambda text: "fine", CASES, [bad_scorer], concurrency=2, store=tmp_path / "r.db"
        ),
        HANG_GUARD_S,
    )
    errors = {r.case.id for r in run.results if r.scores["bad_scorer"].error}
    assert len(run.results) == len(CASES) and errors == BAD
