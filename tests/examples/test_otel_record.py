"""`examples/otel/record.py` records the example agent's traces without touching the repository:
by default into `.agenteval/traces.jsonl` of the current directory (ignored by git), and the
committed `traces.jsonl` only when it is named."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.cli_process import assert_clean, cli_env

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "otel"


def test_record_by_default_leaves_the_committed_traces_alone(tmp_path: Path) -> None:
    example = tmp_path / "otel"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("__pycache__"))
    committed = (example / "traces.jsonl").read_bytes()
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, str(example / "record.py")],
        cwd=work,
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert_clean(done.stderr)
    assert (example / "traces.jsonl").read_bytes() == committed
    recorded = work / ".agenteval" / "traces.jsonl"
    assert recorded.stat().st_size > 0
    assert str(Path(".agenteval") / "traces.jsonl") in done.stdout
    # The command it prints scores what it wrote.
    command = done.stdout.split("score it: ", 1)[1].split()
    assert command[:2] == ["agenteval", "score"]
    scored = subprocess.run(
        [sys.executable, "-m", "agenteval", *command[1:], "--store", "runs.db"],
        cwd=work,
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    )
    assert scored.returncode == 0, scored.stderr
