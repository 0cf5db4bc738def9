"""Naming an executor: checked on every face, recorded with the run, and the driver's retries
of attempts whose worker died (`RemoteTrials`), whatever executor stands behind them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenteval import EvalCase, evaluate
from agenteval.config import ProjectConfig, find_target, resolve_settings
from agenteval.engine.executors.remote import RemoteTrials, TrialJob, WorkerDeath
from agenteval.engine.options import OptionError, RunOptions
from agenteval.errors import ConfigError
from agenteval.retry import RetryPolicy
from agenteval.store import RunStore
from agenteval.trace import FailureCause, Trial


def answer(question: str) -> str:
    return "Paris"


def test_a_run_records_its_executor(tmp_path: Path) -> None:
    run = evaluate(answer, [EvalCase(input="capital?")], store=tmp_path / "runs.db")
    with RunStore(tmp_path / "runs.db") as store:
        assert store.get_info(run.run_id).settings["executor"] == {"kind": "local"}


@pytest.mark.parametrize(
    ("given", "field", "words"),
    [
        ({"executor": "threads"}, "executor", "local, process or ray, got 'threads'"),
        ({"workers": 2}, "workers", "workers applies to the process and ray executors"),
        ({"executor": "process", "workers": 0}, "workers", "workers must be at least 1"),
        ({"executor": "process", "ray_address": "auto"}, "ray_address", "applies to the ray"),
        ({"executor": "ray", "worker_memory_mb": 512}, "worker_memory_mb", "the process"),
        ({"executor": "process", "otlp_receiver": 0}, "otlp_receiver", "local executor only"),
    ],
)
def test_a_setting_the_executor_does_not_read_is_refused(
    given: dict[str, object], field: str, words: str
) -> None:
    with pytest.raises(OptionError, match=words) as caught:
        RunOptions(**given)  # type: ignore[arg-type]
    assert caught.value.field == field


def test_the_executor_resolves_flag_then_environment_then_config(tmp_path: Path) -> None:
    config = ProjectConfig(executor="process", workers=3)
    assert resolve_settings(config, tmp_path, env={}).executor == "process"
    assert resolve_settings(config, tmp_path, env={}).workers == 3
    env = {"AGENTEVAL_EXECUTOR": "local", "AGENTEVAL_WORKERS": ""}
    assert resolve_settings(ProjectConfig(), tmp_path, env=env).executor == "local"
    chosen = resolve_settings(config, tmp_path, executor="ray", workers=4, env={})
    assert (chosen.executor, chosen.workers) == ("ray", 4)
    stored = chosen.engine_settings().executor.stored()
    assert stored == {"kind": "ray", "workers": 4}


def test_another_executor_chosen_leaves_out_the_settings_it_does_not_read(
    tmp_path: Path,
) -> None:
    """A project set up for worker processes (`executor: process`, `workers:`,
    `worker_memory_mb:` in agenteval.yaml, or in the environment) runs with `--executor local`
    (as the process executor's own hints say to, to see an error in place): the settings the
    chosen executor does not read are left out, not refused."""
    config = ProjectConfig(executor="process", workers=3, worker_memory_mb=512)
    local = resolve_settings(config, tmp_path, executor="local", env={})
    assert (local.executor, local.workers, local.worker_memory_mb) == ("local", None, None)
    env = {"AGENTEVAL_EXECUTOR": "ray"}
    ray = resolve_settings(config, tmp_path, env=env)
    assert (ray.executor, ray.workers, ray.worker_memory_mb) == ("ray", 3, None)
    env = {"AGENTEVAL_EXECUTOR": "process", "AGENTEVAL_WORKERS": "2"}
    flag = resolve_settings(ProjectConfig(), tmp_path, executor="local", env=env)
    assert (flag.executor, flag.workers) == ("local", None)
    # Written where the executor is chosen, a setting it does not read is still a mistake.
    with pytest.raises(ConfigError, match="workers applies"):
        resolve_settings(ProjectConfig(executor="local", workers=3), tmp_path, env={})
    with pytest.raises(ConfigError, match="workers applies"):
        resolve_settings(config, tmp_path, executor="local", workers=2, env={})


def test_a_mistake_names_where_it_was_written(tmp_path: Path) -> None:
    (tmp_path / "agenteval.yaml").write_text("dataset: cases.yaml\nexecutor: threads\n")
    (tmp_path / "cases.yaml").write_text("- input: hi\n")
    target = find_target(tmp_path)
    config_file = tmp_path / "agenteval.yaml"
    with pytest.raises(ConfigError) as caught:
        resolve_settings(target.config, tmp_path, env={}, config_file=config_file)
    assert (caught.value.file, caught.value.line) == (str(config_file), 2)
    with pytest.raises(ConfigError) as caught:
        resolve_settings(ProjectConfig(), tmp_path, env={"AGENTEVAL_EXECUTOR": "threads"})
    assert caught.value.field == "AGENTEVAL_EXECUTOR"
    with pytest.raises(ConfigError) as caught:
        resolve_settings(ProjectConfig(), tmp_path, executor="process", workers=0, env={})
    assert caught.value.field == "--workers"


class _Pool:
    """Outcomes given in order, and the jobs the driver sent, as an executor's pool would."""

    def __init__(self, outcomes: list[Trial | WorkerDeath]) -> None:
        self._outcomes: Iterator[Trial | WorkerDeath] = iter(outcomes)
        self.jobs: list[TrialJob] = []

    async def attempt(self, job: TrialJob) -> Trial | WorkerDeath:
        self.jobs.append(job)
        return next(self._outcomes)


_NO_WAIT = RetryPolicy(max_retries=2, initial_wait_s=0.0, max_wait_s=0.0)
_CASE = EvalCase(id="c1", input="capital?")
_LOST = WorkerDeath(FailureCause.WORKER_LOST, "node 10.0.0.2 died")


async def test_a_lost_worker_is_retried_and_counted_in_the_trial() -> None:
    done = Trial(case_id="c1", trial=0, output="Paris", attempts=1)
    pool = _Pool([_LOST, done])
    trial = await RemoteTrials(pool, _NO_WAIT).run(_CASE, 0)
    assert trial.output == "Paris"
    assert (trial.attempts, trial.retries) == (2, {"worker_lost": 1})
    # The worker's own retries are what the run allows, less those the driver made.
    assert [job.retries_left for job in pool.jobs] == [2, 1]


async def test_a_crashed_worker_fails_its_trial_and_is_not_retried() -> None:
    crash = WorkerDeath(FailureCause.WORKER_CRASHED, "killed by SIGSEGV", exit_code=-11)
    pool = _Pool([crash])
    trial = await RemoteTrials(pool, _NO_WAIT).run(_CASE, 0)
    assert trial.failure is not None
    assert (trial.failure.cause, trial.failure.exit_code) == (FailureCause.WORKER_CRASHED, -11)
    assert (trial.case_id, trial.attempts, trial.retries) == ("c1", 1, {})
    assert len(pool.jobs) == 1


async def test_retries_run_out_and_the_trial_says_why() -> None:
    pool = _Pool([_LOST, _LOST, _LOST])
    trial = await RemoteTrials(pool, _NO_WAIT).run(_CASE, 3)
    assert trial.failure is not None and trial.failure.cause is FailureCause.WORKER_LOST
    assert (trial.trial, trial.attempts, trial.retries) == (3, 3, {"worker_lost": 2})


def test_the_json_document_says_where_the_trials_ran(tmp_path: Path) -> None:
    from agenteval.report.json_document import run_document

    run = evaluate(answer, [EvalCase(input="capital?")], store=tmp_path / "runs.db")
    with RunStore(tmp_path / "runs.db") as store:
        info = store.get_info(run.run_id)
        document = run_document(info, run.summary, store.iter_results(run.run_id))
    assert document["settings"]["executor"] == {"kind": "local"}


class _SlowPool(_Pool):
    """`_Pool`, each attempt taking `seconds` (a worker stuck, then killed), as measured by
    the engine's clock."""

    def __init__(self, outcomes: list[Trial | WorkerDeath], seconds: float) -> None:
        super().__init__(outcomes)
        self._seconds = seconds

    async def attempt(self, job: TrialJob) -> Trial | WorkerDeath:
        await asyncio.sleep(self._seconds)
        return await super().attempt(job)


async def test_the_attempts_a_worker_died_in_count_as_working_time() -> None:
    # A local trial's working latency counts every attempt (a timed-out one too), less the
    # waits; a lost attempt is work the trial did as well, not a wait.
    trial = await RemoteTrials(_SlowPool([_LOST, _LOST, _LOST], 0.05), _NO_WAIT).run(_CASE, 0)
    assert trial.working_latency_s is not None
    assert trial.working_latency_s >= 0.15
    done = Trial(case_id="c1", trial=0, output="Paris", attempts=1, working_latency_s=0.001)
    trial = await RemoteTrials(_SlowPool([_LOST, done], 0.05), _NO_WAIT).run(_CASE, 0)
    assert trial.working_latency_s is not None and trial.working_latency_s >= 0.051
    assert trial.latency_s is not None and trial.latency_s >= trial.working_latency_s


async def test_a_worker_killed_past_its_jobs_time_is_not_retried_past_the_runs_retries() -> None:
    # The driver kills a worker only once the job's whole time (every attempt it may make)
    # is spent, and cannot know how many of those attempts the worker made: retrying it
    # could run the agent more times than the run allows, and pass a trial that should fail.
    killed = WorkerDeath(FailureCause.TIMEOUT, "the worker was killed past its limit")
    done = Trial(case_id="c1", trial=0, output="Paris", attempts=1)
    pool = _Pool([killed, done])
    trial = await RemoteTrials(pool, _NO_WAIT).run(_CASE, 0)
    assert trial.failure is not None and trial.failure.cause is FailureCause.TIMEOUT
    assert len(pool.jobs) == 1


class _RefusingPool:
    """Every worker meets the same mistake at the same moment (workers that cannot load the
    agent, say): both raise before either is cancelled."""

    def __init__(self) -> None:
        self._arrived = 0
        self._all_here = asyncio.Event()

    async def attempt(self, job: TrialJob) -> Trial | WorkerDeath:
        self._arrived += 1
        if self._arrived == 2:
            self._all_here.set()
        await self._all_here.wait()
        raise ConfigError("the workers cannot load the agent", field="executor")


def test_the_same_mistake_met_by_several_workers_at_once_is_one_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextlib import asynccontextmanager

    from agenteval.engine import scheduler

    @asynccontextmanager
    async def refusing(*args: object) -> Any:
        yield RemoteTrials(_RefusingPool(), _NO_WAIT)

    monkeypatch.setattr(scheduler, "open_trials", refusing)
    cases = [EvalCase(id=f"c{i}", input="capital?") for i in range(2)]
    with pytest.raises(ConfigError, match="cannot load the agent"):
        evaluate(answer, cases, concurrency=2, store=tmp_path / "runs.db")
