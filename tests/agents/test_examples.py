"""The built-in agent example, run as its README says, against its scripted server."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from tests.cli_process import CHECKOUT_SRC

from agenteval.store import RunStore

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "builtin_agent"


def _scripted_server() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "builtin_scripted_server", EXAMPLE / "scripted_server.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_builtin_agent_example_runs_offline(tmp_path: Path) -> None:
    server = _scripted_server().serve(0)
    try:
        port = server.server_address[1]
        done = subprocess.run(
            [sys.executable, "-m", "agenteval", "run", str(EXAMPLE), "--store", "runs.db"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={
                "PATH": "/usr/bin:/bin",
                "COLUMNS": "160",
                "PYTHONPATH": CHECKOUT_SRC,
                "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
                "NO_PROXY": "*",
            },
            timeout=120,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    with RunStore(tmp_path / "runs.db", create=False) as store:
        (row,) = store.list_runs()
        info = store.get_info(row.run_id)
        results = list(store.iter_results(row.run_id))
    assert info.agent == "builtin:openai:gpt-4o-mini"
    assert {"get_weather", "convert_currency"} <= set(info.tools)
    assert len(results) == 8 and all(r.trial.failure is None for r in results)
    by_case = {r.case.id: r for r in results}
    trip = by_case["trip-budget"].trial
    assert trip.output == "Snow and -3 °C in Oslo; 200 EUR is 216.0 USD."
    # Asked for together (parallel tool calls): one step, two calls, then the answer.
    assert [len(step.tool_calls) for step in trip.steps] == [2, 0]
    assert len(trip.model_calls) == 2 and trip.usage.input_tokens > 0
    for case in ("paris-weather", "trip-budget", "no-tool-needed"):
        assert by_case[case].scores["exact_match"].passed is True, case
        assert by_case[case].scores["tool_selection"].passed is True, case
    unknown = by_case["unknown-city"]
    assert unknown.trial.tool_calls[0].error == "LookupError: no weather for 'Atlantis'"
    assert unknown.scores["tool_execution"].passed is False
    assert unknown.scores["avoids_forbidden_text"].passed is True
