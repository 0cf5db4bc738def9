"""`agenteval run --executor process` from the command line: an agent.yaml naming
`my_agent.py:run`, a pool of two workers, a crashed worker's trial recorded with its exit code
(the run's exit code is 0 as with `local`: the run completed, whatever its trials; README,
"The exit code is 0 when the run completed"); and the
quickstart giving the same stored trials, scores and summary as with `local`."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
from tests.cli_process import agenteval_cli, assert_clean, cli_env, interruptible

from agenteval import RunStore
from agenteval.trace import FailureCause

QUICKSTART = Path(__file__).parents[2] / "examples" / "quickstart"
HOSTILE = Path(__file__).parent / "process_agents" / "hostile.py"

CONFIG = """\
dataset: cases.yaml
agent: my_agent.py:run
timeout: 30
retries: 0
"""

CASES = """\
- {id: fine, input: ok}
- {id: crash, input: exit}
- {id: also-fine, input: ok}
"""


def test_the_cli_runs_on_a_pool_and_records_a_crashed_worker(tmp_path: Path) -> None:
    shutil.copy(HOSTILE, tmp_path / "my_agent.py")
    (tmp_path / "agenteval.yaml").write_text(CONFIG)
    (tmp_path / "cases.yaml").write_text(CASES)

    done = agenteval_cli(
        tmp_path, "run", ".", "--executor", "process", "--workers", "2", "--store", "runs.db"
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "worker_crashed  1 of 3" in done.stdout
    assert "Traceback" not in done.stderr
    with RunStore(tmp_path / "runs.db") as runs:
        (row,) = runs.list_runs()
        info = runs.get_info(row.run_id)
        trials = {result.case.id: result.trial for result in runs.iter_results(row.run_id)}
    assert info.settings["executor"] == {"kind": "process", "workers": 2}
    assert trials["fine"].failure is None and trials["also-fine"].failure is None
    crash = trials["crash"].failure
    assert crash is not None and crash.cause is FailureCause.WORKER_CRASHED
    assert crash.exit_code == 1


_TIMINGS = {"started_at", "latency_s", "working_latency_s", "duration_s", "trace_id", "span_id"}


def _timeless(value: Any) -> Any:
    """A stored record without what differs between two runs of the same trials."""
    if isinstance(value, dict):
        return {key: _timeless(item) for key, item in value.items() if key not in _TIMINGS}
    if isinstance(value, list):
        return [_timeless(item) for item in value]
    return value


def _summary(stdout: str) -> list[str]:
    """The printed summary without the run's id, its progress bar and its latency table."""
    kept = []
    in_latencies = False
    for line in stdout.splitlines():
        if line.startswith("Latency per trial"):
            in_latencies = True
        elif in_latencies and not line.strip():
            in_latencies = False
        if in_latencies or line.startswith("trials "):
            continue
        kept.append(re.sub(r"\d{8}-\d{6}-[0-9a-f]{4}", "RUN", line))
    return kept


def test_the_quickstart_gives_the_same_results_on_a_pool_as_locally(tmp_path: Path) -> None:
    folders = {kind: tmp_path / kind for kind in ("local", "process")}
    for folder in folders.values():
        shutil.copytree(QUICKSTART, folder, ignore=shutil.ignore_patterns("*.db", "__pycache__"))
    extra = {"local": [], "process": ["--executor", "process", "--workers", "2"]}
    # The two runs at once: the quickstart waits out a timeout (and its retry) in each.
    running = {
        kind: subprocess.Popen(
            [sys.executable, "-m", "agenteval", "run", ".", "--store", "runs.db", *extra[kind]],
            cwd=folder,
            env=cli_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for kind, folder in folders.items()
    }
    outputs = {kind: process.communicate(timeout=300) for kind, process in running.items()}
    for kind, process in running.items():
        assert process.returncode == 0, outputs[kind]

    stored: dict[str, dict[tuple[str, int], Any]] = {}
    for kind, folder in folders.items():
        with RunStore(folder / "runs.db") as runs:
            (row,) = runs.list_runs()
            stored[kind] = {
                result.key: _timeless(result.model_dump(mode="json"))
                for result in runs.iter_results(row.run_id)
            }
    assert len(stored["local"]) == 20
    assert stored["process"] == stored["local"]
    assert _summary(outputs["process"][0]) == _summary(outputs["local"][0])


def test_ctrl_c_stops_the_pool_and_its_stuck_worker(tmp_path: Path) -> None:
    shutil.copy(HOSTILE, tmp_path / "my_agent.py")
    (tmp_path / "agenteval.yaml").write_text("dataset: cases.yaml\nagent: my_agent.py:run\n")
    cases = ["- {id: stuck, input: block}"] + [f"- {{id: ok{i}, input: ok}}" for i in range(6)]
    (tmp_path / "cases.yaml").write_text("\n".join(cases) + "\n")
    store = tmp_path / "runs.db"
    command = [sys.executable, "-m", "agenteval", "run", ".", "--store", str(store)]
    driver = interruptible(
        [*command, "--executor", "process", "--workers", "2"], tmp_path, cli_env()
    )
    try:
        stored = 0
        for _ in range(1200):  # every trial but the stuck one (no time limit: it never ends)
            if store.exists():
                with RunStore(store) as runs:
                    rows = runs.list_runs()
                    stored = rows[0].trials_done if rows else 0
            if stored == 6:
                break
            time.sleep(0.05)
        assert stored == 6
        helpers = psutil.Process(driver.pid).children(recursive=True)
        driver.send_signal(signal.SIGINT)
        _, err = driver.communicate(timeout=60)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    assert driver.returncode not in (0, None), err
    assert_clean(err)
    assert "--resume" in err  # the run says how to finish it
    assert len(helpers) >= 3  # the forkserver and two workers, one stuck in its trial
    for _ in range(200):
        if not any(_alive(helper) for helper in helpers):
            break
        time.sleep(0.05)
    assert not [helper.pid for helper in helpers if _alive(helper)], "workers left behind"


def _alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
