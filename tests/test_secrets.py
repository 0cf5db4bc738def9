"""Secrets never reach the store, a report or a log, whatever the agent does with them."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

SECRET = "sk-proj-Zq81mXvT4kLpW29sQeRt7uYiOp0aSdFg"

AGENT = """
import os
import agenteval

@agenteval.tool
def call_api(query: str, api_key: str) -> dict:
    return {"query": query, "echo": api_key}

def run(question: str) -> str:
    key = os.environ["MY_SERVICE_API_KEY"]
    call_api(question, api_key=key)
    if "fail" in question:
        raise RuntimeError(f"Incorrect API key provided: {key}")
    return f"used {key}"
"""


def test_a_key_the_agent_leaks_is_in_no_store_report_or_output(tmp_path: Path) -> None:
    (tmp_path / "leaky.py").write_text(AGENT)
    (tmp_path / "cases.yaml").write_text("- input: ok\n- input: fail\n")
    env = {**os.environ, "MY_SERVICE_API_KEY": SECRET, "COLUMNS": "200"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agenteval",
            "run",
            "cases.yaml",
            "--agent",
            "leaky.py:run",
            "--json",
            "run.json",
            "-v",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr
    document = (tmp_path / "run.json").read_text()
    assert SECRET not in document
    assert "[REDACTED]" in document
    with sqlite3.connect(tmp_path / ".agenteval" / "runs.db") as db:
        rows = [
            row
            for table in ("runs", "cases", "trials", "scores")
            for row in db.execute(f"SELECT * FROM {table}")
        ]
    assert rows and SECRET not in json.dumps(rows, default=str)
    results = json.loads(document)["results"]
    failed = next(r for r in results if r["failure"])
    assert failed["failure"]["message"].startswith("Incorrect API key provided:")
