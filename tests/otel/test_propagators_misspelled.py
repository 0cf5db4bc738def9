"""A misspelled `OTEL_PROPAGATORS` stops the run at its start, as the user's mistake: one clear
message naming the variable and the fix (the CLI: one line, exit 2, no traceback), never a run
whose service-calling trials each fail as the agent's error. (Issue 21's review found the run
path importing the propagators on a process's first service call, which did the latter; the
import is at the run's start.) Real processes: the import must not have happened in the test's
own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys, agenteval
from agenteval import EvalCase
from agenteval.errors import ConfigError
from agenteval.agents.propagation import outgoing_trace

def agent(question: str) -> str:
    outgoing_trace()  # what the HTTP agent asks before each request
    return "ok"

try:
    run = agenteval.evaluate(
        agent, [EvalCase(id="a", input="x"), EvalCase(id="b", input="y")], store=sys.argv[1]
    )
except ConfigError as exc:
    print("stopped:", exc)
else:
    for result in run.results:
        print("trial:", result.trial.failure)
"""


def test_a_misspelled_propagator_stops_the_run_with_one_message(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "OTEL_PROPAGATORS": "bogus"}
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "r.db")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.stdout.strip().splitlines() == [
        "stopped: the environment variable OTEL_PROPAGATORS ('bogus') names a propagator"
        " OpenTelemetry cannot load: Propagator bogus not found. It is either misspelled or not"
        " installed.",
        "  hint: name installed propagators (the default is `tracecontext,baggage`), or unset it",
    ], done.stdout + done.stderr


def test_the_command_says_so_in_one_line(tmp_path: Path) -> None:
    quickstart = Path(__file__).parents[2] / "examples" / "quickstart"
    done = subprocess.run(
        [sys.executable, "-m", "agenteval", "run", str(quickstart), "--store", "runs.db"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "OTEL_PROPAGATORS": "tracecontxt", "COLUMNS": "200"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) <= 2, done.stderr
    assert "OTEL_PROPAGATORS" in done.stderr
    assert "tracecontxt" in done.stderr
