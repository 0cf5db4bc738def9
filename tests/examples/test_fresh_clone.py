"""Every example, run as its README says from a fresh clone of the repository (the committed
state, HEAD), offline and with no API key: each command succeeds, and afterwards git sees no
change, nothing tracked rewritten and nothing new outside what .gitignore ignores."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli_process import assert_clean, cli_env
from tests.examples.clones import git

COMMANDS = [
    ["-m", "agenteval", "run", "examples/quickstart"],
    ["examples/builtin_agent/run_offline.py"],
    ["-m", "agenteval", "run", "examples/otel"],
    [
        "-m",
        "agenteval",
        "score",
        "examples/otel/traces.jsonl",
        "--cases",
        "examples/otel/cases.yaml",
    ],
    ["examples/otel/record.py"],
    ["-m", "pytest", "examples/pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"],
    # Agents built on frameworks, each on a scripted model (README, "Agents built on frameworks").
    ["-m", "agenteval", "run", "examples/adk_agent"],
    ["-m", "agenteval", "run", "examples/openai_agents"],
    ["-m", "agenteval", "run", "examples/langgraph_agent"],
    ["-m", "agenteval", "run", "examples/pydantic_ai_agent"],
    ["-m", "agenteval", "show", "latest"],
]


def test_every_example_runs_from_a_fresh_clone_and_leaves_it_as_it_was(clone: Path) -> None:
    env = cli_env(PYTHONPATH=str(clone / "src"), NO_PROXY="*")
    for command in COMMANDS:
        done = subprocess.run(
            [sys.executable, *command],
            cwd=clone,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, (command, done.stdout[-2000:] + done.stderr[-2000:])
        assert_clean(done.stderr)
    assert git("status", "--porcelain", "--untracked-files=all", cwd=clone) == ""
