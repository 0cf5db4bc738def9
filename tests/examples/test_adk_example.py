"""examples/adk_agent run as its README says, from a fresh clone (the committed state, HEAD),
offline and with no API key: `agenteval run examples/adk_agent` succeeds with nothing on
stderr, stores what the ADK agent did, and leaves the clone as it was."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli_process import assert_clean, cli_env
from tests.examples.clones import git

from agenteval.store import RunStore


def test_the_adk_example_runs_from_a_fresh_clone(clone: Path) -> None:
    env = cli_env(PYTHONPATH=str(clone / "src"), NO_PROXY="*")
    done = subprocess.run(
        [sys.executable, "-m", "agenteval", "run", "examples/adk_agent"],
        cwd=clone,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert_clean(done.stderr)
    assert done.stderr.strip() == "", done.stderr
    with RunStore(clone / ".agenteval" / "runs.db", create=False) as store:
        (row,) = store.list_runs()
        results = {(r.case.id, r.trial.trial): r for r in store.iter_results(row.run_id)}
    assert len(results) == 8
    for trial in (0, 1):
        two = results[("two-cities", trial)].trial
        assert [c.arguments for c in two.tool_calls] == [{"city": "Paris"}, {"city": "Lima"}]
        assert two.output == "Paris is 21C and sunny; Lima is 17C and cloudy."
        home = results[("home-city", trial)]
        assert home.trial.metadata["turn_outputs"] == ["Noted: Oslo.", "Oslo is 4C with rain."]
        assert home.scores["final_session_state_match"].passed is True
        packing = results[("packing", trial)].trial
        assert packing.node_visits == ["weather_desk", "packing_advisor"]
        assert packing.output == "Pack a raincoat: Oslo is 4C with rain."
        unknown = results[("unknown-city", trial)].trial
        assert unknown.failure is not None and unknown.failure.cause.value == "agent_error"
        assert unknown.tool_calls[0].error == "KeyError: 'atlantis'"
        assert all(r.scores["tool_arguments_valid"].passed for r in results.values())
    assert git("status", "--porcelain", "--untracked-files=all", cwd=clone) == ""
