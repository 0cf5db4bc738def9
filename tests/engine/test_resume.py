"""A run killed with SIGKILL resumes to the same results: no trial lost, none run twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agenteval import RunStore

AGENT = """
import os, time

def answer(question: str) -> str:
    with open(os.environ["CALL_LOG"], "a") as log:
        log.write(question + "\\n")
        log.flush()
    time.sleep(0.03)
    return question.upper()
"""


def _agenteval(*args: str, env: dict[str, str]) -> list[str]:
    return [sys.executable, "-m", "agenteval", *args]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_run_killed_mid_way_resumes_without_losing_or_repeating_a_trial(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    cases = [
        {"id": f"c{i:03d}", "input": f"question {i}", "expected_output": f"QUESTION {i}"}
        for i in range(200)
    ]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    store = tmp_path / "runs.db"
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    args = [
        "run",
        "cases.json",
        "--agent",
        "agent.py:answer",
        "--trials",
        "2",
        "--concurrency",
        "4",
        "--store",
        str(store),
    ]

    env = {**os.environ, "CALL_LOG": str(first_log)}
    process = subprocess.Popen(
        _agenteval(*args, env=env),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    stored_before: dict[tuple[str, int], str] = {}
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if store.exists():
                with RunStore(store) as runs:
                    rows = runs.list_runs()
                    if rows and rows[0].trials_done >= 30:
                        break
            time.sleep(0.03)
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == -signal.SIGKILL, "the run ended before it could be killed"

    with RunStore(store) as runs:
        (row,) = runs.list_runs()
        assert 30 <= row.trials_done < 400
        for result in runs.iter_results(row.run_id):
            stored_before[result.key] = result.trial.model_dump_json()

    env = {**os.environ, "CALL_LOG": str(second_log)}
    resumed = subprocess.run(
        _agenteval(*args, "--resume", env=env),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr

    with RunStore(store) as runs:
        (row,) = runs.list_runs()
        results = list(runs.iter_results(row.run_id))
    assert row.status.value == "finished"
    assert len(results) == 400
    assert len({r.key for r in results}) == 400
    # Trials stored before the kill are kept as they were...
    for result in results:
        if result.key in stored_before:
            assert result.trial.model_dump_json() == stored_before[result.key]
    # ...and the resumed run called the agent only for the pairs that were not stored.
    second_calls = second_log.read_text().splitlines()
    stored_cases = [case_id for case_id, _ in stored_before]
    assert len(second_calls) == 400 - len(stored_before)
    for case_number in {int(q.split()[-1]) for q in second_calls}:
        case_id = f"c{case_number:03d}"
        assert stored_cases.count(case_id) < 2, f"{case_id} had both trials stored, yet ran again"
    assert all(r.scores["exact_match"].passed for r in results)
