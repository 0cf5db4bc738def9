"""Found by issue 21's review of the run path, before its fix: the OpenTelemetry propagators are imported on a
process's first service call from a trial instead of when the run starts. With a misspelled
`OTEL_PROPAGATORS`, main stops the run before any trial with OpenTelemetry's own message
("Propagator bogus not found. ..."); the branch runs it, fails every trial that calls a
service as the agent's error (AGENT_ERROR), with that message (or, for some, with
"cannot import name 'propagate' from 'opentelemetry' (unknown location)"), and finishes the run.
A real process: the import must not have happened in the test's own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys, agenteval
from agenteval import EvalCase
from agenteval.agents.propagation import outgoing_trace

def agent(question: str) -> str:
    outgoing_trace()  # what the HTTP agent asks before each request
    return "ok"

try:
    run = agenteval.evaluate(
        agent, [EvalCase(id="a", input="x"), EvalCase(id="b", input="y")], store=sys.argv[1]
    )
except ValueError as exc:
    print("stopped:", exc)
else:
    for result in run.results:
        print("trial:", result.trial.failure)
"""


def test_v21_runpath_a_misspelled_propagator_stops_the_run_as_on_main(tmp_path: Path) -> None:
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
        "stopped: Propagator bogus not found. It is either misspelled or not installed."
    ], done.stdout + done.stderr
