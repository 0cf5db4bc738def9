"""A run of simulated conversations killed with SIGKILL while conversations are under way, then
resumed: every trial stored exactly once, none lost, and each stored conversation whole (a
trial is stored all or nothing: a conversation cut by the kill is played again from its start)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from tests.cli_process import cli_env

from agenteval import EndReason, RunStore

TURNS = 4
CASES = 30
TRIALS = 2

AGENT = """
import os, time

def answer(messages):
    last = messages[-1]["content"]
    with open(os.environ["CALL_LOG"], "a") as log:
        log.write(last + "\\n")
    time.sleep(0.02)  # slow enough for the kill to find conversations half played
    return "heard: " + " | ".join(m["content"] for m in messages if m["role"] == "user")
"""

USERS = f"""
from agenteval import EndReason, UserReply

def user(messages, request):
    n = sum(1 for m in messages if m["role"] == "user")
    if n >= {TURNS}:
        return UserReply(stop=EndReason.GOAL_ACHIEVED)
    return f"{{request.case_id}}/t{{request.trial}} says {{n}}"
"""


def _said(case_id: str, trial: int, n: int) -> str:
    return f"{case_id}/t{trial} says {n}"


def _heard(log: Path) -> list[tuple[str, int]]:
    """The conversation of each user message the agent got, in order (a line the kill cut
    in the middle left out)."""
    found = (
        re.fullmatch(r"(c\d\d)/t(\d+) says \d+", line) for line in log.read_text().splitlines()
    )
    return [(match.group(1), int(match.group(2))) for match in found if match]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_run_killed_mid_conversation_resumes_with_every_conversation_whole(
    tmp_path: Path,
) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "users.py").write_text(USERS)
    cases = [
        {"id": f"c{i:02d}", "user_simulation": {"script": "users.py:user", "max_turns": 8}}
        for i in range(CASES)
    ]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    store = tmp_path / "runs.db"
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    args = [sys.executable, "-m", "agenteval", "run", "cases.json", "--agent", "agent.py:answer"]
    args += ["--trials", str(TRIALS), "--concurrency", "4", "--store", str(store)]

    process = subprocess.Popen(
        args,
        cwd=tmp_path,
        env=cli_env(CALL_LOG=str(first_log)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        # Killed once some trials are stored and a conversation is under way: a user message
        # the agent got whose trial is not stored yet.
        while process.poll() is None:
            if store.exists():
                with RunStore(store) as runs:
                    rows = runs.list_runs()
                    if rows and rows[0].trials_done >= 8:
                        break
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == -signal.SIGKILL, "the run ended before it could be killed"

    with RunStore(store) as runs:
        (row,) = runs.list_runs()
        before = {r.key: r.trial.model_dump_json() for r in runs.iter_results(row.run_id)}
    assert 8 <= len(before) < CASES * TRIALS
    started = set(_heard(first_log))
    cut = started - set(before)
    assert cut, "no conversation was under way at the kill"

    resumed = subprocess.run(
        [*args, "--resume"],
        cwd=tmp_path,
        env=cli_env(CALL_LOG=str(second_log)),
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr

    with RunStore(store) as runs:
        (row,) = runs.list_runs()
        results = list(runs.iter_results(row.run_id))
    assert row.status.value == "finished"
    keys = Counter(r.key for r in results)
    assert keys == {(f"c{i:02d}", t): 1 for i in range(CASES) for t in range(TRIALS)}
    for result in results:
        case_id, index = result.key
        if result.key in before:  # stored before the kill: kept as it was
            assert result.trial.model_dump_json() == before[result.key]
        simulation = result.trial.simulation
        assert simulation is not None
        users = [_said(case_id, index, n) for n in range(TURNS)]
        assert [turn.user for turn in simulation.turns] == users
        assert [turn.agent for turn in simulation.turns] == [
            "heard: " + " | ".join(users[: n + 1]) for n in range(TURNS)
        ]
        assert simulation.end_reason is EndReason.GOAL_ACHIEVED
        assert result.trial.metadata["turn_outputs"] == [t.agent for t in simulation.turns]
    # The resumed run played only the conversations not stored, each whole from its start,
    # the ones the kill cut included.
    heard = Counter(_heard(second_log))
    everything = {(f"c{i:02d}", t) for i in range(CASES) for t in range(TRIALS)}
    assert set(heard) == everything - set(before)
    assert cut <= set(heard)
    assert all(count == TURNS for count in heard.values())
    lines = second_log.read_text().splitlines()
    for case_id, trial in heard:
        own = [line for line in lines if line.startswith(f"{case_id}/t{trial} ")]
        assert own == [_said(case_id, trial, n) for n in range(TURNS)]
