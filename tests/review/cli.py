"""Running the real `agenteval` command in a subprocess, for the review's end-to-end tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HANG_GUARD_S = 120


def environment(**extra: str) -> dict[str, str]:
    """A clean environment: no provider key, the worktree's code first, a wide terminal."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "COLUMNS": "200",
        **extra,
    }


def agenteval(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`agenteval ARGS` in `cwd`, with a guard that only stops a hang."""
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=cwd,
        env=environment(**env),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )


def project(folder: Path, agent: str, cases: list[dict[str, Any]], config: str = "") -> Path:
    """A project folder: agent.py (`answer`), cases.json and agenteval.yaml."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agent.py").write_text(agent)
    (folder / "cases.json").write_text(json.dumps(cases))
    (folder / "agenteval.yaml").write_text("dataset: cases.json\nagent: agent.py:answer\n" + config)
    return folder


def run_id(done: subprocess.CompletedProcess[str]) -> str:
    """The run id `agenteval run` printed on its first line."""
    first = done.stdout.splitlines()[0]
    assert first.startswith("run "), done.stdout + done.stderr
    return first.split()[1]
