"""`agenteval run TARGET --replay-tools RUN_ID` in a child process: the replayed run touches no
live system, says which run it replayed (summary, `show`, `--json`), reports a miss, refuses
an unknown or unfinished run in one line (exit 2), and keeps replaying when resumed after
Ctrl-C."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

from tests.cli_process import agenteval_cli, assert_clean, cli_env, interruptible

from agenteval import RunStore
from agenteval.records import RunStatus

AGENT = """
import asyncio
import os
from pathlib import Path

import agenteval

SIDE_EFFECTS = Path(__file__).with_name("side_effects.txt")


@agenteval.tool
def create_ticket(title: str) -> dict:
    with SIDE_EFFECTS.open("a") as out:  # a live system: every real call leaves a trace
        out.write(title + "\\n")
    return {"id": f"T-{len(SIDE_EFFECTS.read_text().splitlines())}"}


async def answer(question: str) -> str:
    if question == os.environ.get("HANG_ON"):
        Path(__file__).with_name("hanging").touch()
        await asyncio.sleep(3600)  # until Ctrl-C stops the run
    title = question if os.environ.get("AGENT_V2") is None else question.upper()
    return create_ticket(title)["id"]
"""


def project(tmp_path: Path, cases: int = 3) -> Path:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "cases.json").write_text(
        json.dumps([{"id": f"c{i}", "input": f"q{i}"} for i in range(cases)])
    )
    (tmp_path / "agenteval.yaml").write_text(
        "agent: agent.py:answer\ndataset: cases.json\nstore: runs.db\n"
    )
    return tmp_path


def side_effects(folder: Path) -> list[str]:
    path = folder / "side_effects.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_a_replayed_run_touches_nothing_and_says_what_it_replayed(tmp_path: Path) -> None:
    folder = project(tmp_path)
    recorded = agenteval_cli(folder, "run", ".", "--json", "recorded.json")
    assert recorded.returncode == 0, recorded.stderr
    assert len(side_effects(folder)) == 3
    first = json.loads((folder / "recorded.json").read_text())
    replayed = agenteval_cli(folder, "run", ".", "--replay-tools", "latest", "--json", "out.json")
    assert replayed.returncode == 0, replayed.stderr
    assert len(side_effects(folder)) == 3  # no tool ran
    document = json.loads((folder / "out.json").read_text())
    run_id = first["run_id"]
    assert document["settings"]["replay"] == {
        "run_id": run_id,
        "match": "in-order",
        "fallthrough": False,
    }
    outputs = {r["case_id"]: r["output"] for r in document["results"]}
    assert outputs == {r["case_id"]: r["output"] for r in first["results"]}
    line = f"tool calls replayed from run {run_id} (in order; calls it never made fail the trial"
    assert line in replayed.stdout
    shown = agenteval_cli(folder, "show", document["run_id"], "--store", "runs.db")
    assert shown.returncode == 0 and line in shown.stdout
    assert "replayed" not in agenteval_cli(folder, "show", run_id, "--store", "runs.db").stdout


def test_a_changed_agent_misses_and_fallthrough_runs_the_call(tmp_path: Path) -> None:
    folder = project(tmp_path, cases=1)
    first = agenteval_cli(folder, "run", ".")
    assert first.returncode == 0, first.stderr
    env = cli_env(AGENT_V2="1")
    missed = agenteval_cli(folder, "run", ".", "--replay-tools", "latest", "-v", env=env)
    assert_clean(missed.stderr)
    assert side_effects(folder) == ["q0"]  # the miss never ran live
    said = " ".join(missed.stdout.split())
    assert "replay_miss" in said
    assert "create_ticket(title='Q0') was never called in the replayed run" in said
    # `latest` is now the run that missed: its refused call is no answer to replay, so the
    # call misses again, and falls through to the live tool.
    through = agenteval_cli(
        folder,
        "run",
        ".",
        "--replay-tools",
        "latest",
        "--replay-match",
        "any-order",
        "--replay-fallthrough",
        env=env,
    )
    assert through.returncode == 0, through.stderr
    assert side_effects(folder) == ["q0", "Q0"]
    assert "(any order; calls it never made run for real)" in through.stdout


def test_replaying_an_unknown_or_unfinished_run_is_one_clear_error(tmp_path: Path) -> None:
    folder = project(tmp_path, cases=1)
    unknown = agenteval_cli(folder, "run", ".", "--replay-tools", "nope")
    assert unknown.returncode == 2
    assert_clean(unknown.stderr)
    assert "cannot replay run 'nope'" in unknown.stderr and "agenteval runs" in unknown.stderr
    none_yet = agenteval_cli(folder, "run", ".", "--replay-tools", "latest")
    assert none_yet.returncode == 2 and "no finished run of" in none_yet.stderr
    alone = agenteval_cli(folder, "run", ".", "--replay-fallthrough")
    assert alone.returncode == 2 and "apply only to a replay" in alone.stderr
    done = agenteval_cli(folder, "run", ".")
    assert done.returncode == 0, done.stderr
    with RunStore(folder / "runs.db") as runs:
        (row,) = runs.list_runs()
        runs.set_status(row.run_id, RunStatus.RUNNING)
    unfinished = agenteval_cli(folder, "run", ".", "--replay-tools", row.run_id)
    assert unfinished.returncode == 2
    assert_clean(unfinished.stderr)
    assert f"cannot replay run {row.run_id}: it did not finish" in unfinished.stderr
    assert "--resume" in unfinished.stderr
    assert not side_effects(folder)[1:]  # nothing ran


def test_a_replaying_run_stopped_by_ctrl_c_resumes_replaying_the_same_run(tmp_path: Path) -> None:
    folder = project(tmp_path, cases=6)
    first = agenteval_cli(folder, "run", ".")
    assert first.returncode == 0, first.stderr
    with RunStore(folder / "runs.db") as runs:
        recorded = runs.list_runs()[0].run_id
    assert len(side_effects(folder)) == 6
    command = [sys.executable, "-m", "agenteval", "run", ".", "--replay-tools", recorded]
    process = interruptible(command, folder, cli_env(HANG_ON="q5"))
    try:
        deadline = time.monotonic() + 60
        stored = 0
        while stored < 5 or not (folder / "hanging").exists():
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
            with RunStore(folder / "runs.db") as runs:
                rows = runs.list_runs()
                stored = rows[0].trials_done if rows[0].run_id != recorded else 0
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    resumed = agenteval_cli(folder, "run", ".", "--resume", "--json", "out.json")
    assert resumed.returncode == 0, resumed.stderr
    document = json.loads((folder / "out.json").read_text())
    assert document["settings"]["replay"]["run_id"] == recorded
    assert f"tool calls replayed from run {recorded}" in resumed.stdout
    assert len(side_effects(folder)) == 6  # neither part of the run touched the live system
    assert sorted(r["output"] for r in document["results"]) == [f"T-{i}" for i in range(1, 7)]
