"""`agenteval` in a child process, as the CLI tests run it: its environment, one command run to
the end, a child that Ctrl-C reaches, a case file, a Ctrl-C sent twice, and the noise a clean
stop must not print."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from agenteval import RunStore

__all__ = [
    "CHECKOUT_SRC",
    "agenteval_cli",
    "assert_clean",
    "cli_env",
    "ctrl_c_twice",
    "interruptible",
    "write_cases",
]


CHECKOUT_SRC = str(Path(__file__).resolve().parents[1] / "src")
"""This checkout's `src`, for a child's PYTHONPATH: an empty one would import the installed
agenteval (an editable install of another tree, say), and a worktree's run would not test its
own code."""


def cli_env(**extra: str) -> dict[str, str]:
    """A small environment for a child `agenteval`, with this test run's import path."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "COLUMNS": "200",
        **extra,
    }


def agenteval_cli(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`agenteval ARGS` run to the end in `cwd`, its output captured; in `env` (`cli_env()`
    unless given)."""
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(env) if env is not None else cli_env(),
        timeout=timeout,
    )


def interruptible(
    command: Sequence[str], cwd: Path, env: Mapping[str, str], *, new_session: bool = False
) -> subprocess.Popen[str]:
    """`command` started in `cwd`, its output piped, as a terminal runs it: SIGINT (Ctrl-C) stops
    it. `new_session` makes it the leader of its own process group (for `os.killpg`)."""
    return subprocess.Popen(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=new_session,
        # A shell running the tests in the background ignores SIGINT, and children inherit
        # that; the user at a terminal does not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def write_cases(folder: Path, count: int) -> None:
    """`cases.json` with `count` cases `c000`..., input `q{i}`, expected `Q{i}`."""
    (folder / "cases.json").write_text(
        json.dumps(
            [
                {"id": f"c{i:03d}", "input": f"q{i}", "expected_output": f"Q{i}"}
                for i in range(count)
            ]
        )
    )


def assert_clean(err: str) -> None:
    for noise in ("Traceback", "Task was destroyed", "never retrieved", "Exception ignored"):
        assert noise not in err, err


def ctrl_c_twice(
    args: list[str], cwd: Path, store: Path, cancelled: Path, env: dict[str, str]
) -> tuple[int, str]:
    """Run `agenteval ARGS`; once 20 trials are stored send SIGINT, and again once the task it
    cancelled has said so (touched `cancelled`), so the second lands inside that task. The exit
    code and stderr."""
    process = interruptible([sys.executable, "-m", "agenteval", *args], cwd, env)
    try:
        deadline = time.monotonic() + 60
        stored = 0
        while stored < 20:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
            if store.exists():
                with RunStore(store) as runs:
                    rows = runs.list_runs()
                    stored = rows[0].trials_done if rows else 0
        process.send_signal(signal.SIGINT)
        while not cancelled.exists():
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.01)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, err
