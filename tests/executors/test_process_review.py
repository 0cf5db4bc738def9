"""What the review of the process executor found a `process` run doing unlike a `local` one,
each shown by the same run on both."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.cli_process import agenteval_cli, cli_env

import agenteval
from agenteval import EvalCase
from agenteval.store import RunStore
from agenteval.trace import FailureCause


@agenteval.tool
def pxr_lookup(city: str) -> dict[str, Any]:
    """A lookup that answers differently each time it runs (so a replay shows)."""
    return {"n": random.random()}


def lookup_agent(city: str) -> str:
    return f"{city}: {pxr_lookup(city)['n']}"


def test_a_replay_runs_on_worker_processes_as_it_does_locally(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    cases = [EvalCase(id="Paris", input="Paris"), EvalCase(id="Rome", input="Rome")]
    recorded = agenteval.evaluate(lookup_agent, cases, store=store)
    replayed = agenteval.evaluate(
        lookup_agent,
        cases,
        executor="process",
        workers=2,
        replay_tools=recorded.run_id,
        store=store,
    )
    outputs = {result.case.id: result.trial.output for result in recorded.results}
    assert {result.case.id: result.trial.output for result in replayed.results} == outputs
    for result in replayed.results:
        assert result.trial.failure is None
        assert [call.mocked for call in result.trial.tool_calls] == ["replay"]


QUICK_LEAK = f"{Path(__file__).parent / 'process_agents' / 'quick_leak.py'}:run"


def test_the_trial_that_leaves_its_worker_past_the_memory_limit_is_charged_with_it(
    tmp_path: Path,
) -> None:
    # One worker, one trial at a time: each `leak` keeps 12 MB and ends before the watchdog
    # looks; the trial after it (innocent, 0.15 s) was charged with the limit the leak passed.
    cases = []
    for index in range(12):
        cases += [EvalCase(id=f"leak{index}", input="leak"), EvalCase(id=f"ok{index}", input="hi")]
    run = agenteval.evaluate(
        QUICK_LEAK,
        cases,
        executor="process",
        workers=1,
        concurrency=1,
        worker_memory_mb=100,
        store=tmp_path / "runs.db",
    )
    trials = {result.case.id: result.trial for result in run.results}
    charged = sorted(case for case, trial in trials.items() if trial.failure is not None)
    assert charged, "a worker at 44 MB that keeps 144 MB passes its 100 MB limit"
    assert all(case.startswith("leak") for case in charged), charged
    for case in charged:
        failure = trials[case].failure
        assert failure is not None and failure.cause is FailureCause.WORKER_CRASHED
        assert "memory limit (worker_memory_mb: 100 MB)" in failure.message


_UNGUARDED = """\
import agenteval
from agenteval import EvalCase


def agent(question: str) -> str:
    return "hi " + question


run = agenteval.evaluate(
    agent, [EvalCase(id="x", input="q")], executor="process", workers=1, store={store!r}
)
print("output:", run.results[0].trial.output)
"""


def test_a_script_without_a_main_guard_is_told_to_add_one(tmp_path: Path) -> None:
    # Each worker imports the script again (as every multiprocessing program's do): there
    # its evaluate(executor="process") must not start a pool of its own, nor a run.
    script = tmp_path / "script.py"
    store = tmp_path / "runs.db"
    script.write_text(_UNGUARDED.format(store=str(store)))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, env=_env()
    )
    assert done.returncode != 0
    said = "executor='process' was asked for by a worker process importing the script"
    assert said in done.stderr
    assert "if __name__ == '__main__':" in done.stderr.splitlines()[-1]
    with RunStore(store) as runs:
        assert len(runs.list_runs()) <= 1  # the script's own run, never one of a worker's


def _env() -> dict[str, str]:
    """This interpreter's environment, with the agenteval under test first on the path."""
    src = str(Path(agenteval.__file__).parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def test_the_commands_on_stored_runs_do_not_check_where_trials_would_run(
    tmp_path: Path,
) -> None:
    # AGENTEVAL_WORKERS exported for the runs of `--executor process`: `show` and `rescore`
    # run no trial, and refused it (local being their executor).
    store = tmp_path / "runs.db"
    run = agenteval.evaluate(lookup_agent, [EvalCase(id="Oslo", input="Oslo")], store=store)
    env = cli_env(AGENTEVAL_WORKERS="2")
    for command in (["show", run.run_id], ["runs"], ["rescore", run.run_id]):
        done = agenteval_cli(tmp_path, *command, "--store", str(store), env=env)
        assert done.returncode == 0, done.stderr


def test_the_terminal_says_one_worker_in_the_singular() -> None:
    from agenteval.cli.live import _executor_words

    assert _executor_words({"kind": "process", "workers": 1}) == " · in 1 worker process"
    assert _executor_words({"kind": "process", "workers": 2}) == " · in 2 worker processes"
    assert _executor_words({"kind": "ray", "workers": 1}) == " · on Ray, 1 worker"
    assert _executor_words({"kind": "local"}) == ""


EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize("example", ["langgraph_agent", "pydantic_ai_agent"])
def test_a_framework_agent_given_by_reference_runs_on_worker_processes(
    tmp_path: Path, example: str
) -> None:
    # `agent: agent.py:graph` names an object holding locks and clients: each worker loads
    # it again from its reference, as the driver did, rather than be refused it.
    pytest.importorskip("langgraph" if example == "langgraph_agent" else "pydantic_ai")
    folder = tmp_path / example
    shutil.copytree(EXAMPLES / example, folder)
    outputs = {}
    for executor in ("local", "process"):
        report = tmp_path / f"{executor}.json"
        done = agenteval_cli(
            folder,
            "run",
            ".",
            "--executor",
            executor,
            "--json",
            str(report),
            "--store",
            str(tmp_path / "runs.db"),
        )
        assert done.returncode == 0, done.stderr
        results = json.loads(report.read_text())["results"]
        outputs[executor] = sorted((r["case_id"], r["output"], r["failure"]) for r in results)
    assert outputs["process"] == outputs["local"]


def test_a_framework_agent_given_to_evaluate_by_reference_runs_on_worker_processes(
    tmp_path: Path,
) -> None:
    pytest.importorskip("langgraph")
    agent = f"{EXAMPLES / 'langgraph_agent' / 'agent.py'}:graph"
    cases = EXAMPLES / "langgraph_agent" / "cases.yaml"
    outputs = {}
    for executor in ("local", "process"):
        run = agenteval.evaluate(
            agent, cases, executor=executor, store=tmp_path / "runs.db", builtins=False
        )
        outputs[executor] = sorted((r.case.id, r.trial.output) for r in run.results)
    assert outputs["process"] == outputs["local"]
