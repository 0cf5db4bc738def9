"""Google ADK's own `AgentEvaluator.evaluate` (google-adk 2.13, needs `google-adk[eval]`) on the
drop-in's ADK agents, offline: what it says of each metric, to compare the drop-in with.

`python -m tests.evalset.dropin.adk_reference` (from the repository root, in an environment
with ADK's eval extras) runs every measurement of `MEASUREMENTS` and prints them as JSON;
`data/adk_reference.json` holds what it printed (see `test_adk_agreement.py`). ADK prints, per
eval case and metric, `Summary: ... for Metric: `NAME`. Expected threshold: `T`, actual value:
`V`.`; those lines, and the `AssertionError` it raises, are what is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
AGENTS = "tests.evalset.dropin.agents"

MEASUREMENTS: dict[str, dict[str, Any]] = {
    "home": {
        "agent_module": f"{AGENTS}.home_adk",
        "eval_dataset_file_path_or_dir": str(DATA / "home" / "home.test.json"),
        "initial_session_file": str(DATA / "home" / "initial.session.json"),
        "num_runs": 2,
    },
    "home_wrong": {
        "agent_module": f"{AGENTS}.home_adk_wrong",
        "eval_dataset_file_path_or_dir": str(DATA / "home" / "home.test.json"),
        "initial_session_file": str(DATA / "home" / "initial.session.json"),
        "num_runs": 2,
    },
    "home_team_sub_agent": {
        "agent_module": f"{AGENTS}.home_adk_team",
        "agent_name": "home_automation",
        "eval_dataset_file_path_or_dir": str(DATA / "home" / "home.test.json"),
        "num_runs": 1,
    },
}

_SUMMARY = re.compile(
    r"Summary: `(?P<status>[^`]+)` for Metric: `(?P<metric>[^`]+)`\. "
    r"Expected threshold: `(?P<threshold>[^`]+)`, actual value: `(?P<value>[^`]+)`\."
)


VARIES = frozenset({"invocation_duration_v1"})
"""Metrics whose value changes from run to run (wall-clock time): their values are not kept."""


def _number(text: str) -> float | None:
    return None if text == "None" else float(text)


async def measure(arguments: dict[str, Any]) -> dict[str, Any]:
    """What ADK's evaluator printed of each metric, and whether it raised."""
    from google.adk.evaluation.agent_evaluator import AgentEvaluator

    printed = io.StringIO()
    failure: str | None = None
    with contextlib.redirect_stdout(printed):
        try:
            await AgentEvaluator.evaluate(**arguments, print_detailed_results=True)
        except AssertionError as exc:
            failure = str(exc)
    metrics = {
        found["metric"]: {
            "status": found["status"].rsplit(".", 1)[-1],
            "threshold": _number(found["threshold"]),
            "value": None if found["metric"] in VARIES else _number(found["value"]),
        }
        for found in _SUMMARY.finditer(printed.getvalue())
    }
    return {"metrics": metrics, "assertion": failure}


def main() -> None:
    # Offline: dummy keys, and any HTTP(S) connection sent to a closed local port.
    os.environ.setdefault("GOOGLE_API_KEY", "offline")
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        os.environ[proxy] = "http://127.0.0.1:9"
    results = {name: asyncio.run(measure(args)) for name, args in MEASUREMENTS.items()}
    json.dump(results, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
