"""Resuming one run from several processes at once: exactly one runs it, the others refuse.

Each round starts the same `agenteval run … --resume RUN_ID` in several real processes held at
a barrier (each imports agenteval, says it is ready, and waits for the go), so that they claim
the run within a millisecond of each other. Claiming was a read and a write in two
transactions: two processes could both see the run unowned and both run every pending trial.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, cli_env

from agenteval import RunStore
from agenteval.case import EvalCase
from agenteval.run import RunInfo, RunStatus

PROCESSES = 4
ROUNDS = 10
CASES = 4

AGENT = """
import os, time

def answer(question: str) -> str:
    with open(os.environ["CALL_LOG"], "a") as log:
        log.write(f"{os.getpid()} {question}\\n")
    time.sleep(0.25)  # long enough that every other process claims while this one runs
    return question.upper()
"""

# Imports the CLI first (the slow part), says it is ready, waits for the go, then runs it.
LAUNCHER = """
import os, sys, time
from pathlib import Path
from agenteval.cli import main

ready, go = Path(sys.argv[1]), Path(sys.argv[2])
ready.touch()
while not go.exists():
    time.sleep(0.0005)
main(sys.argv[3:])
"""


def _env(log: Path) -> dict[str, str]:
    return cli_env(CALL_LOG=str(log))


def _pending_run(tmp_path: Path, store: Path) -> str:
    """A run of `cases.json` with no trial stored yet and no live owner (a killed run)."""
    cases = [EvalCase(id=f"c{i}", input=f"q{i}", expected_output=f"Q{i}") for i in range(CASES)]
    info = RunInfo(
        target=str((tmp_path / "cases.json").resolve()),
        agent="agent.py:answer",
        trials=1,
        settings={"owner": {"pid": 2**22 + 1, "host": socket.gethostname()}},  # no such process
    )
    with RunStore(store) as runs:
        runs.create_run(info, cases)
    return info.run_id


def _at_once(
    tmp_path: Path, folder: Path, count: int, args: list[str]
) -> list[tuple[int, str, str]]:
    """Start `agenteval ARGS` in `count` processes held at a barrier, release them together,
    and return each one's exit code, stdout and stderr."""
    go = folder / "go"
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                str(tmp_path / "launcher.py"),
                str(folder / f"ready{i}"),
                str(go),
                *args,
            ],
            cwd=tmp_path,
            env=_env(folder / "calls.log"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(count)
    ]
    try:
        deadline = time.monotonic() + 60
        while sum((folder / f"ready{i}").exists() for i in range(count)) < count:
            assert time.monotonic() < deadline, "the processes never got ready"
            assert all(p.poll() is None for p in processes), [p.communicate() for p in processes]
            time.sleep(0.005)
        go.touch()
        return [(p.wait(timeout=120), *p.communicate()) for p in processes]
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait()


@pytest.mark.skipif(sys.platform == "win32", reason="process barrier by files, fork timing")
def test_resumes_without_an_id_started_at_once_each_take_a_different_run(tmp_path: Path) -> None:
    """Two `--resume` alone at once, two stopped runs: the one that loses the claim on the
    newest takes the next, instead of refusing because the newest just became live."""
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "launcher.py").write_text(LAUNCHER)
    (tmp_path / "cases.json").write_text(
        "[" + ",".join(f'{{"id": "c{i}", "input": "q{i}"}}' for i in range(CASES)) + "]"
    )
    template = tmp_path / "template.db"
    runs = [_pending_run(tmp_path, template)]
    time.sleep(0.01)
    runs.append(_pending_run(tmp_path, template))
    for round_number in range(4):
        folder = tmp_path / f"round{round_number}"
        folder.mkdir()
        store = folder / "runs.db"
        shutil.copy(template, store)
        outcomes = _at_once(
            tmp_path,
            folder,
            2,
            [
                "run",
                "cases.json",
                "--agent",
                "agent.py:answer",
                "--store",
                str(store),
                "--concurrency",
                "1",
                "--resume",
            ],
        )
        assert [code for code, _, _ in outcomes] == [0, 0], outcomes
        with RunStore(store) as opened:
            for run_id in runs:
                assert opened.get_info(run_id).status is RunStatus.FINISHED
        calls = (folder / "calls.log").read_text().splitlines()
        assert len(calls) == 2 * CASES  # each run's trials once


@pytest.mark.skipif(sys.platform == "win32", reason="process barrier by files, fork timing")
def test_the_same_resume_started_at_once_is_run_by_exactly_one_process(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "launcher.py").write_text(LAUNCHER)
    (tmp_path / "cases.json").write_text(
        "[" + ",".join(f'{{"id": "c{i}", "input": "q{i}"}}' for i in range(CASES)) + "]"
    )
    template = tmp_path / "template.db"
    run_id = _pending_run(tmp_path, template)
    for round_number in range(ROUNDS):
        folder = tmp_path / f"round{round_number}"
        folder.mkdir()
        store = folder / "runs.db"
        shutil.copy(template, store)
        log = folder / "calls.log"
        outcomes = _at_once(
            tmp_path,
            folder,
            PROCESSES,
            [
                "run",
                "cases.json",
                "--agent",
                "agent.py:answer",
                "--store",
                str(store),
                "--concurrency",
                "1",
                "--resume",
                run_id,
            ],
        )
        codes = sorted(code for code, _, _ in outcomes)
        calls = log.read_text().splitlines() if log.exists() else []
        callers = {line.split()[0] for line in calls}
        where = f"round {round_number}: exit codes {codes}, {len(calls)} agent calls by {callers}"
        assert len(callers) == 1 and len(calls) == CASES, where
        # The others refuse while the winner runs; on a loaded machine one may come only after
        # the winner finished, and then finds nothing left to run (exit 0, no agent call).
        assert set(codes) <= {0, 2} and codes.count(0) >= 1, where
        for code, _, err in outcomes:
            if code == 2:
                assert f"run {run_id} is still running (process" in " ".join(err.split()), err
                assert "Traceback" not in err
        with RunStore(store) as runs:
            assert runs.get_info(run_id).status is RunStatus.FINISHED
            assert runs.missing_trials(run_id).count == 0


def test_resume_without_an_id_skips_a_run_a_live_process_is_running(tmp_path: Path) -> None:
    """`--resume` alone takes the newest run of the target that no live process runs; another
    live run of the target is never a reason to refuse."""
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "cases.json").write_text(
        "[" + ",".join(f'{{"id": "c{i}", "input": "q{i}"}}' for i in range(CASES)) + "]"
    )
    store = tmp_path / "runs.db"
    older = _pending_run(tmp_path, store)
    time.sleep(0.01)  # created later: newer
    busy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        newer = _pending_run(tmp_path, store)
        with RunStore(store) as runs:
            live = runs.get_info(newer)
            live.settings["owner"] = {"pid": busy.pid, "host": socket.gethostname()}
            runs.update_info(live)
        done = agenteval_cli(
            tmp_path,
            "run",
            "cases.json",
            "--agent",
            "agent.py:answer",
            "--store",
            str(store),
            "--resume",
            env=_env(tmp_path / "calls.log"),
        )
    finally:
        busy.send_signal(signal.SIGKILL)
        busy.wait()
    assert done.returncode == 0, done.stderr
    assert f"resuming run {older}" in " ".join(done.stdout.split()) or older in done.stdout
    with RunStore(store) as runs:
        assert runs.get_info(older).status is RunStatus.FINISHED
        untouched = runs.get_info(newer)
        assert untouched.status is RunStatus.RUNNING
        assert untouched.settings["owner"]["pid"] == busy.pid
        assert runs.count_results(newer) == 0
