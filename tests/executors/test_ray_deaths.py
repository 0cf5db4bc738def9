"""What a Ray worker's death does to a run: an agent that exits its process is its own trial's
`worker_crashed` (and no other trial's, though they shared the process), the run goes on;
the driver killed mid-run and resumed on the cluster loses no trial and runs none twice."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.cli_process import cli_env
from tests.executors.ray_cluster import LOOPBACK, RayCluster, ray_cluster

import agenteval
from agenteval import EvalCase, RunStore
from agenteval.trace import FailureCause

__all__ = ["ray_cluster"]


async def exits_on_crash(question: str) -> str:
    if question == "crash":
        os._exit(3)
    return question.upper()


async def test_an_agent_that_exits_its_worker_is_worker_crashed(
    ray_cluster: RayCluster, tmp_path: Path
) -> None:
    cases = [EvalCase(id=f"c{i}", input="crash" if i == 2 else f"q{i}") for i in range(6)]
    run = await agenteval.evaluate_async(
        exits_on_crash,
        cases,
        concurrency=6,
        retries=2,
        store=tmp_path / "runs.db",
        executor="ray",
        workers=2,  # three trials to an actor: the crash takes its neighbours down too
        ray_address=ray_cluster.address,
    )
    by_case = {r.case.id: r.trial for r in run.results}
    assert sorted(by_case) == [f"c{i}" for i in range(6)]
    crashed = by_case.pop("c2")
    assert crashed.failure is not None
    assert crashed.failure.cause is FailureCause.WORKER_CRASHED
    assert crashed.failure.exit_code is None  # Ray does not say
    assert crashed.retries == {}
    for case_id, trial in by_case.items():
        assert trial.failure is None, (case_id, trial.failure)
        assert trial.output == f"Q{case_id[1:]}"


AGENT = """
import time
from pathlib import Path

def answer(question: str) -> str:
    folder = Path(FOLDER)
    with open(folder / "calls.log", "a") as log:
        log.write(question + "\\n")
    if int(question[1:]) >= 4:
        while not (folder / "go").exists():  # held: the driver is killed meanwhile
            time.sleep(0.05)
    return question.upper()
"""


def test_a_driver_killed_mid_run_resumes_on_the_cluster(
    ray_cluster: RayCluster, tmp_path: Path
) -> None:
    (tmp_path / "agent.py").write_text(f"FOLDER = {str(tmp_path)!r}\n{AGENT}")
    (tmp_path / "cases.json").write_text(
        "[" + ",".join(f'{{"id": "c{i}", "input": "c{i}"}}' for i in range(10)) + "]"
    )
    store = tmp_path / "runs.db"
    log = tmp_path / "calls.log"
    log.touch()
    env = cli_env(**LOOPBACK, RAY_ADDRESS=ray_cluster.address)
    command = [sys.executable, "-m", "agenteval", "run", "cases.json", "--agent", "agent.py:answer"]
    command += ["--store", str(store), "--executor", "ray", "--workers", "2", "--concurrency", "2"]
    driver = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL)
    # c0-c3 pass; c4 and c5 are held in the workers: kill the driver under them.
    while log.read_text().count("\n") < 6:
        assert driver.poll() is None
        time.sleep(0.05)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    with RunStore(store) as runs:
        (row,) = runs.list_runs()
        stored = runs.finished_keys(row.run_id)
    assert {("c4", 0), ("c5", 0)}.isdisjoint(stored)
    before = log.read_text().splitlines()

    (tmp_path / "go").touch()
    resumed = subprocess.run(
        [*command, "--resume"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    with RunStore(store) as runs:
        results = list(runs.iter_results(row.run_id))
        settings = runs.get_info(row.run_id).settings
    assert sorted(r.key for r in results) == [(f"c{i}", 0) for i in range(10)]
    assert all(r.trial.output == r.case.id.upper() for r in results)
    assert settings["executor"] == {"kind": "ray", "workers": 2}
    # The resume ran exactly the trials not stored when the driver died.
    again = log.read_text().splitlines()[len(before) :]
    assert sorted(again) == sorted(f"c{i}" for i in range(10) if (f"c{i}", 0) not in stored)


async def logs_then_exits(question: str) -> str:
    """Logs its case (`<log>|<case>`) and exits its worker for `crash`, else answers in 1 s."""
    log, case = question.split("|")
    with Path(log).open("a") as calls:  # noqa: ASYNC230 (a line, before anything else runs)
        calls.write(case + "\n")
    if case == "crash":
        os._exit(3)
    await asyncio.sleep(1.0)  # in flight when its neighbour crashes
    return case.upper()


async def test_a_trial_run_again_alone_after_a_crash_counts_both_attempts(
    ray_cluster: RayCluster, tmp_path: Path
) -> None:
    log = tmp_path / "calls.log"
    log.touch()
    names = ["a", "b", "crash", "d"]
    run = await agenteval.evaluate_async(
        logs_then_exits,
        [EvalCase(id=name, input=f"{log}|{name}") for name in names],
        concurrency=4,
        retries=0,
        store=tmp_path / "runs.db",
        executor="ray",
        workers=1,  # all four in one actor: the crash takes its neighbours down
        ray_address=ray_cluster.address,
    )
    calls = log.read_text().splitlines()
    by_case = {r.case.id: r.trial for r in run.results}
    assert sorted(by_case) == names
    assert calls.count("crash") == 2  # once among the others, once alone
    # Each try counts (one sent to the dying actor may not have started there).
    for name, trial in by_case.items():
        assert 1 <= calls.count(name) <= trial.attempts <= 2, (name, trial.attempts, calls)
    assert by_case["crash"].attempts == 2
    crashed = by_case["crash"].failure
    assert crashed is not None and crashed.cause is FailureCause.WORKER_CRASHED
    assert all(by_case[name].output == name.upper() for name in ("a", "b", "d"))


BREAKS_ON_RESTART = """
import os
from pathlib import Path

import tools

def answer(question: str) -> str:
    if question == "crash":
        (Path(tools.FOLDER) / "broken").touch()  # no worker starts from now on
        os._exit(3)
    return tools.shout(question)
"""

TOOLS = """
from pathlib import Path

FOLDER = {folder!r}
if (Path(FOLDER) / "broken").exists():
    raise ImportError("tools cannot load here")

def shout(text: str) -> str:
    return text.upper()
"""


async def test_a_pool_whose_workers_cannot_restart_stops_the_run(
    ray_cluster: RayCluster, tmp_path: Path
) -> None:
    (tmp_path / "agent.py").write_text(BREAKS_ON_RESTART)
    (tmp_path / "tools.py").write_text(TOOLS.format(folder=str(tmp_path)))
    cases = [EvalCase(id=f"c{i}", input="crash" if i == 1 else f"q{i}") for i in range(4)]
    with pytest.raises(RuntimeError, match="every Ray worker of the run died"):
        await agenteval.evaluate_async(
            "agent.py:answer",
            cases,
            agent_ref="agent.py:answer",  # as the CLI runs it: the folder ships, tools too
            base_dir=tmp_path,
            concurrency=1,
            store=tmp_path / "runs.db",
            executor="ray",
            workers=1,
            ray_address=ray_cluster.address,
        )
