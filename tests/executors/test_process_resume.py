"""A driver SIGKILLed mid-run takes its workers with it (no orphan, not even one stuck in a
trial that never ends, which no pipe closing would reach), and `--resume` on the pool finishes the run: nothing lost, nothing run twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from agenteval import RunStore

AGENT = """
import os, time

def answer(question: str) -> str:
    with open(os.environ["CALL_LOG"], "a") as log:
        log.write(question + "\\n")
    if question == "question 0" and os.environ.get("STUCK"):
        time.sleep(3600)  # a worker that would never notice its driver's death by itself
    time.sleep(0.05)
    return question.upper()
"""

CASES = 60


def _alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")
def test_a_killed_driver_leaves_no_worker_and_resumes_on_the_pool(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    cases = [
        {"id": f"c{i:03d}", "input": f"question {i}", "expected_output": f"QUESTION {i}"}
        for i in range(CASES)
    ]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    store = tmp_path / "runs.db"
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    args = [sys.executable, "-m", "agenteval", "run", "cases.json", "--agent", "agent.py:answer"]
    args += ["--executor", "process", "--workers", "2", "--store", str(store)]

    env = {**os.environ, "CALL_LOG": str(first_log), "STUCK": "1"}
    driver = subprocess.Popen(
        args, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        for _ in range(1200):
            if store.exists():
                with RunStore(store) as runs:
                    rows = runs.list_runs()
                    if rows and rows[0].trials_done >= 10:
                        break
            time.sleep(0.05)
        # The forkserver and the workers, each running a trial now.
        helpers = psutil.Process(driver.pid).children(recursive=True)
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert len(helpers) >= 3, helpers  # the forkserver and two workers

    for _ in range(200):  # a SIGKILL is not instant: give them a while, then none is left
        if not any(_alive(helper) for helper in helpers):
            break
        time.sleep(0.05)
    assert not [helper.pid for helper in helpers if _alive(helper)], "orphaned workers"

    with RunStore(store) as runs:
        (row,) = runs.list_runs()
        stored_before = {
            result.key: result.trial.model_dump_json() for result in runs.iter_results(row.run_id)
        }
    assert 10 <= len(stored_before) < CASES

    env = {**os.environ, "CALL_LOG": str(second_log)}
    resumed = subprocess.run(
        [*args, "--resume"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr

    with RunStore(store) as runs:
        (row,) = runs.list_runs()
        results = list(runs.iter_results(row.run_id))
    assert row.status.value == "finished"
    assert sorted(result.key for result in results) == [(f"c{i:03d}", 0) for i in range(CASES)]
    for result in results:  # the trials stored before the kill kept as they were
        if result.key in stored_before:
            assert result.trial.model_dump_json() == stored_before[result.key]
    # The resumed run ran only the trials not stored, each once.
    second_calls = second_log.read_text().splitlines()
    assert len(second_calls) == len(set(second_calls)) == CASES - len(stored_before)
    assert all(result.scores["exact_match"].passed for result in results)
