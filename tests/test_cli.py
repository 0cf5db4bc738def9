"""The `agenteval` command, run as a user runs it: in a subprocess, in a project folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agenteval import RunStore

AGENT = """
import agenteval

@agenteval.tool
def lookup(city: str) -> dict:
    return {"city": city, "population": 2100000}

def answer(question: str) -> str:
    if "population" in question:
        return f"{lookup(question.split()[-1])['population']:,}"
    return "Paris"
"""

SCORERS = """
def concise(case, trial):
    return len(trial.output or "") < 5, "under 5 characters"
"""

CASES = """
- id: capital
  input: What is the capital of France?
  expected_output: paris
- id: population
  input: What is the population of Paris
  expected_output: 2100000
  expected_tools: [lookup]
"""


def agenteval(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "COLUMNS": "160",
            # The code under test (a worktree's, when PYTHONPATH names it), not the editable install.
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        },
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "my_agent.py").write_text(AGENT)
    (tmp_path / "my_scorers.py").write_text(SCORERS)
    (tmp_path / "cases.yaml").write_text(CASES)
    (tmp_path / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: my_agent.py:answer\ntrials: 2\nconcurrency: 4\n"
    )
    return tmp_path


def test_run_a_folder_with_its_config_and_write_json(project: Path) -> None:
    done = agenteval(project, "run", ".", "--json", "out.json")
    assert done.returncode == 0, done.stderr
    assert "exact_match" in done.stdout
    document = json.loads((project / "out.json").read_text())
    assert document["schema"] == "agenteval.run/1"
    assert document["summary"]["trials"] == 4
    assert document["summary"]["scorers"]["exact_match"]["pass_rate"] == 1.0
    assert (project / ".agenteval" / "runs.db").is_file()


def test_run_a_dataset_with_an_agent_flag_and_a_custom_scorer(project: Path) -> None:
    done = agenteval(
        project,
        "run",
        "cases.yaml",
        "--agent",
        "my_agent:answer",
        "--scorer",
        "my_scorers:concise",
        "--json",
        "out.json",
    )
    assert done.returncode == 0, done.stderr
    scores = json.loads((project / "out.json").read_text())["results"][0]["scores"]
    assert scores["concise"] == {
        "value": 0.0,
        "passed": False,
        "reason": "under 5 characters",
        "error": None,
        "details": {},
    }
    assert "exact_match" in scores


def test_no_builtins_runs_only_the_named_scorers(project: Path) -> None:
    done = agenteval(
        project, "run", ".", "--no-builtins", "--scorer", "exact_match", "--json", "o.json"
    )
    assert done.returncode == 0, done.stderr
    result = json.loads((project / "o.json").read_text())["results"][0]
    assert set(result["scores"]) == {"exact_match"}


def test_flags_override_the_config(project: Path) -> None:
    done = agenteval(project, "run", ".", "--trials", "1", "--json", "o.json")
    assert done.returncode == 0, done.stderr
    assert json.loads((project / "o.json").read_text())["summary"]["trials"] == 2


def test_runs_show_and_rescore_work_on_the_stored_run(project: Path) -> None:
    assert agenteval(project, "run", ".").returncode == 0
    listed = agenteval(project, "runs")
    assert listed.returncode == 0 and "finished" in listed.stdout
    shown = agenteval(project, "show", "latest", "--json", "shown.json")
    assert shown.returncode == 0, shown.stderr
    run_id = json.loads((project / "shown.json").read_text())["run_id"]
    rescored = agenteval(
        project, "rescore", run_id[:15], "--scorer", "my_scorers:concise", "--json", "r.json"
    )
    assert rescored.returncode == 0, rescored.stderr
    results = json.loads((project / "r.json").read_text())["results"]
    assert all("concise" in r["scores"] and "exact_match" in r["scores"] for r in results)


def test_schema_prints_the_case_file_json_schema(project: Path) -> None:
    done = agenteval(project, "schema")
    assert done.returncode == 0
    schema = json.loads(done.stdout)
    assert "input" in json.dumps(schema)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "missing.yaml"], "no such file or folder: missing.yaml"),
        # (A case file with no agent anywhere: tests/test_cli_case_file_config.py; here the
        # agenteval.yaml beside cases.yaml gives it one.)
        (["run", "cases.yaml", "--agent", "my_agent.py:anser"], "did you mean my_agent.py:answer?"),
        (["run", "cases.yaml", "--agent", "nope_module:run"], "no module named 'nope_module'"),
        (["run", ".", "--scorer", "exact_mach"], "exact_match"),
        (["run", ".", "--scorer", "my_scorers:nope"], "my_scorers has no attribute 'nope'"),
        (["show", "20990101"], "agenteval runs"),
        (["run", ".", "--resume"], "no unfinished run"),
    ],
)
def test_user_mistakes_end_in_one_clear_message_and_exit_2(
    project: Path, args: list[str], expected: str
) -> None:
    if args[0] == "show":
        assert agenteval(project, "run", ".").returncode == 0
    done = agenteval(project, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert expected in done.stderr
    assert "Traceback" not in done.stderr


def test_a_broken_dataset_names_the_file_line_and_field(project: Path) -> None:
    (project / "cases.yaml").write_text("- input: hi\n  expeted_output: x\n")
    done = agenteval(project, "run", ".")
    assert done.returncode == 2
    assert "cases.yaml:2" in done.stderr
    assert "expected_output" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_config_setting_is_named_with_its_line(project: Path) -> None:
    (project / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: my_agent.py:answer\ntrails: 3\n"
    )
    done = agenteval(project, "run", ".")
    assert done.returncode == 2
    assert "agenteval.yaml:3" in done.stderr and "did you mean 'trials'?" in done.stderr


def test_a_corrupt_store_is_refused_and_left_untouched(project: Path) -> None:
    store = project / "bad.db"
    store.write_bytes(b"not a database at all" * 10)
    done = agenteval(project, "run", ".", "--store", str(store))
    assert done.returncode == 2
    assert "bad.db" in done.stderr and "Traceback" not in done.stderr
    assert store.read_bytes() == b"not a database at all" * 10


def test_a_builtin_scorer_takes_settings_in_the_config(project: Path) -> None:
    (project / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: my_agent.py:answer\n"
        "scorers:\n  - name: step_efficiency\n    threshold: 0.9\n"
    )
    assert agenteval(project, "run", ".", "--json", "o.json").returncode == 0
    (project / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: my_agent.py:answer\n"
        "scorers:\n  - name: step_efficiency\n    treshold: 0.9\n"
    )
    done = agenteval(project, "run", ".")
    assert done.returncode == 2
    assert "step_efficiency has no setting 'treshold'" in done.stderr
    assert "did you mean 'threshold'?" in done.stderr
    assert "agenteval.yaml:4" in done.stderr  # the scorer's line


@pytest.mark.parametrize("elsewhere", [False, True], ids=["usual-store", "--store"])
def test_ctrl_c_stops_the_run_with_a_hint_to_resume(tmp_path: Path, elsewhere: bool) -> None:
    import re
    import shlex
    import signal
    import time

    (tmp_path / "slow.py").write_text(
        "import time\ndef answer(q):\n    time.sleep(0.05)\n    return q\n"
    )
    (tmp_path / "cases.json").write_text(json.dumps([{"input": f"q{i}"} for i in range(200)]))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agenteval",
            "run",
            "cases.json",
            "--agent",
            "slow.py:answer",
            "--concurrency",
            "2",
            *(["--store", "other.db"] if elsewhere else []),
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell running the tests in the background ignores SIGINT, and children inherit
        # that; the user at a terminal does not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    store = tmp_path / ("other.db" if elsewhere else ".agenteval/runs.db")
    # Interrupt once trials are being stored: the run is under way, its handler in place.
    stored = 0
    while stored < 5 and process.poll() is None:
        time.sleep(0.05)
        if store.exists():
            with RunStore(store) as runs:
                rows = runs.list_runs()
                stored = rows[0].trials_done if rows else 0
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "--resume" in err and "Traceback" not in err
    # The hint, as printed, is the command that resumes the run (its store named when needed).
    hint = re.search(r"`(agenteval run [^`]*--resume[^`]*)`", " ".join(err.split()))
    assert hint is not None, err
    command = shlex.split(hint.group(1))[1:]
    resumed = agenteval(tmp_path, *command, "--agent", "slow.py:answer", "--concurrency", "8")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming run" in resumed.stdout


def test_a_hung_sync_agent_times_out_and_the_run_still_ends(tmp_path: Path) -> None:
    (tmp_path / "hang.py").write_text(
        "import threading\n"
        "def run(q):\n"
        "    if q == 'hang':\n"
        "        threading.Event().wait()\n"
        "    return q\n"
    )
    (tmp_path / "cases.json").write_text(
        json.dumps([{"input": "hang"}, {"input": "a"}, {"input": "b"}])
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agenteval",
            "run",
            "cases.json",
            "--agent",
            "hang.py:run",
            "--timeout",
            "0.5",
            "--retries",
            "0",
            "--concurrency",
            "1",
            "--json",
            "out.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out.json").read_text())["summary"]
    assert summary["failures"] == {"timeout": 1}


def test_resume_checks_the_target_and_takes_a_run_id_prefix(project: Path) -> None:
    (project / "other.yaml").write_text("- input: hi\n")
    assert agenteval(project, "run", ".").returncode == 0
    listed = agenteval(project, "show", "latest", "--json", "s.json")
    run_id = json.loads((project / "s.json").read_text())["run_id"]
    wrong = agenteval(
        project, "run", "other.yaml", "--agent", "my_agent:answer", "--resume", run_id
    )
    assert wrong.returncode == 2 and "was started on" in wrong.stderr, listed.stderr
    again = agenteval(project, "run", ".", "--resume", run_id[:8], "--trials", "5")
    assert again.returncode == 0, again.stderr
    assert "ignoring --trials" in again.stderr


def test_a_json_path_that_is_a_folder_is_refused_before_the_run(project: Path) -> None:
    (project / "out").mkdir()
    done = agenteval(project, "run", ".", "--json", "out")
    assert done.returncode == 2 and "is a folder" in done.stderr
    assert not (project / ".agenteval").exists()


def test_text_from_cases_is_printed_as_written_not_as_markup(project: Path) -> None:
    (project / "cases.yaml").write_text(
        "- id: '[red]x[/red] [/]'\n  input: hi\n  expected_output: nope\n"
    )
    done = agenteval(project, "run", ".", "-v")
    assert done.returncode == 0, done.stderr
    assert "[red]x[/red] [/]" in done.stdout


def test_version_and_debug_after_the_command(project: Path) -> None:
    assert agenteval(project, "--version").stdout.startswith("agenteval ")
    done = agenteval(project, "run", "missing.yaml", "--debug")
    assert done.returncode == 2 and "Traceback" in done.stderr


def test_show_says_when_a_run_is_unfinished(project: Path) -> None:
    import sqlite3

    from agenteval import RunStore
    from agenteval.run import RunStatus

    assert agenteval(project, "run", ".").returncode == 0
    with RunStore(project / ".agenteval" / "runs.db") as runs:
        runs.set_status(runs.resolve_run_id("latest"), RunStatus.RUNNING)
    with sqlite3.connect(project / ".agenteval" / "runs.db") as db:
        db.execute("DELETE FROM trials WHERE trial = 1")
    shown = agenteval(project, "show", "latest")
    assert shown.returncode == 0, shown.stderr
    err = " ".join(shown.stderr.split())
    # The run's process (`agenteval run` above) is gone: nothing more is coming.
    assert "was interrupted (its process" in err
    assert "is gone): 2 of 4 trials have no stored result" in err and "--resume" in err
