"""A pytest session that runs only some of a decorated test's cases (`-k`, `--lf`, `-x`,
Ctrl-C) ends its run `partial`: not `running` forever, never `finished`, and every command
reads it so (`runs`, `show` and its hints, JSON, JUnit, HTML, `compare`, `gate`, `--resume`).
Each test runs pytest on a small project, in a child process where it matters, over a real
SQLite store."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, assert_clean, interruptible

from agenteval.run import RunStatus
from agenteval.store import RunStore

pytest_plugins = ("pytester",)

AGENT = """
import asyncio
import os
from pathlib import Path


async def answer(question: str) -> str:
    if "slow" in question:
        Path(os.environ["PP_STARTED"]).touch()
        await asyncio.sleep(120)
    if "broken" in question:
        return "no idea"
    return "yes"
"""

# The failing case comes second, so `-x` stops before the third.
CASES = """
- id: refund
  input: Can I get a refund?
  expected_output: "yes"
- id: broken
  input: This one is broken
  expected_output: "yes"
- id: shipping
  input: Do you ship abroad?
  expected_output: "yes"
"""

TEST = """
from agenteval.pytest_plugin import agenteval_cases

@agenteval_cases("cases.yaml", agent="agent.py:answer", trials=TRIALS, scorers=["exact_match"])
def test_support(agenteval_result):
    pass
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", cases=CASES)
    (pytester.path / "agent.py").write_text(AGENT, encoding="utf-8")
    pytester.makeini(
        "[pytest]\nagenteval_store = runs.db\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(test_support=TEST.replace("TRIALS", "2"))
    return pytester


def _runs(path: Path) -> list[tuple[str, RunStatus, int, int]]:
    """(run id, status, trials stored, trials asked for), oldest first."""
    with RunStore(path, create=False) as store:
        rows = store.list_runs()
    return [(r.run_id, r.status, r.trials_done, r.trials_total) for r in reversed(rows)]


def _resume(folder: Path, store: Path, *run_id: str) -> subprocess.CompletedProcess[str]:
    """`agenteval run cases.yaml --resume [RUN_ID]` on the pytest session's cases and agent."""
    return agenteval_cli(
        folder,
        "run",
        "cases.yaml",
        "--agent",
        "agent.py:answer",
        "--store",
        str(store),
        "--resume",
        *run_id,
    )


def _stored_cases(path: Path, run_id: str) -> set[str]:
    with RunStore(path, create=False) as store:
        return {result.case.id for result in store.iter_results(run_id)}


def test_a_deselected_session_ends_its_run_partial_and_counts_only_what_ran(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "-k", "refund")
    result.assert_outcomes(passed=1, deselected=2)
    ((run_id, status, done, total),) = _runs(project.path / "runs.db")
    assert (status, done, total) == (RunStatus.PARTIAL, 2, 6)
    with RunStore(project.path / "runs.db", create=False) as store:
        assert store.get_info(run_id).finished_at is not None
    # The summary counts the case that ran, and says how many did not.
    result.stdout.fnmatch_lines(
        [
            "*agenteval*",
            f"run {run_id}: test_support.py::test_support (1 of 3 cases × 2 trials; "
            "2 not run: deselected or stopped) · partial in *runs.db*",
        ]
    )
    assert "(3 cases" not in result.stdout.str()


def test_a_whole_session_still_ends_finished(project: pytest.Pytester) -> None:
    result = project.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    ((run_id, status, done, total),) = _runs(project.path / "runs.db")
    assert (status, done, total) == (RunStatus.FINISHED, 6, 6)
    result.stdout.fnmatch_lines(
        [f"run {run_id}: test_support.py::test_support (3 cases × 2 trials) in *runs.db*"]
    )


def test_last_failed_and_exitfirst_end_their_runs_partial(project: pytest.Pytester) -> None:
    store = project.path / "runs.db"
    project.runpytest("-p", "no:randomly").assert_outcomes(passed=2, failed=1)
    project.runpytest("-p", "no:randomly", "--lf").assert_outcomes(failed=1)
    stopped = project.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "-x")
    stopped.assert_outcomes(passed=1, failed=1)
    whole, last_failed, first_failure = _runs(store)
    assert whole[1:] == (RunStatus.FINISHED, 6, 6)
    assert last_failed[1:] == (RunStatus.PARTIAL, 2, 6)
    assert _stored_cases(store, last_failed[0]) == {"broken"}
    assert first_failure[1:] == (RunStatus.PARTIAL, 4, 6)
    assert _stored_cases(store, first_failure[0]) == {"refund", "broken"}
    stopped.stdout.fnmatch_lines(
        ["run *: test_support.py::test_support (2 of 3 cases × 2 trials; 1 not run: *) · partial*"]
    )


def _interrupted_session(
    project: pytest.Pytester, *extra: str, stop: signal.Signals = signal.SIGINT
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """pytest in a child process, stopped with Ctrl-C (SIGINT to its process group, as a
    terminal sends it; or `stop`) while the case `slow` is running."""
    (project.path / "cases.yaml").write_text(
        CASES.replace("Do you ship abroad?", "Do you ship abroad, slow?"), encoding="utf-8"
    )
    started = project.path / "started"
    env = {**os.environ, "PP_STARTED": str(started), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    process = interruptible(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", *extra],
        project.path,
        env,
        new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the slow case never started"
            time.sleep(0.05)
        os.killpg(process.pid, stop)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err), started


def test_ctrl_c_ends_the_run_partial_with_what_was_stored(project: pytest.Pytester) -> None:
    done, _ = _interrupted_session(project)
    assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout + done.stderr
    assert_clean(done.stderr)
    ((run_id, status, stored, total),) = _runs(project.path / "runs.db")
    assert (status, stored, total) == (RunStatus.PARTIAL, 4, 6), done.stdout
    assert _stored_cases(project.path / "runs.db", run_id) == {"refund", "broken"}
    assert f"run {run_id}: test_support.py::test_support (2 of 3 cases" in done.stdout


needs_xdist = pytest.mark.skipif(
    importlib.util.find_spec("xdist") is None, reason="needs pytest-xdist"
)


@needs_xdist
def test_under_xdist_a_deselected_session_ends_one_run_partial(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess(
        "-n", "2", "-p", "xdist", "-p", "no:randomly", "-p", "no:cacheprovider", "-k", "not broken"
    )
    result.assert_outcomes(passed=2)  # the controller does not count what workers deselect
    ((run_id, status, done, total),) = _runs(project.path / "runs.db")
    assert (status, done, total) == (RunStatus.PARTIAL, 4, 6)
    result.stdout.fnmatch_lines(
        [
            f"run {run_id}: test_support.py::test_support (2 of 3 cases × 2 trials; "
            "1 not run: deselected or stopped) · partial in *"
        ]
    )


@needs_xdist
def test_under_xdist_ctrl_c_ends_the_run_partial(project: pytest.Pytester) -> None:
    done, _ = _interrupted_session(project, "-n", "2", "-p", "xdist")
    assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout + done.stderr
    ((_, status, stored, total),) = _runs(project.path / "runs.db")
    assert status is RunStatus.PARTIAL and stored < total == 6, done.stdout


# --- Every command reads a partial run ------------------------------------------------------


@pytest.fixture
def partial_store(project: pytest.Pytester) -> tuple[Path, str, str]:
    """A store with a whole session's run (finished) and a `-k refund` session's (partial)."""
    project.runpytest("-p", "no:randomly", "-p", "no:cacheprovider").assert_outcomes(
        passed=2, failed=1
    )
    project.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "-k", "refund")
    (whole, _, _, _), (partial, status, _, _) = _runs(project.path / "runs.db")
    assert status is RunStatus.PARTIAL
    return project.path / "runs.db", whole, partial


def test_runs_lists_a_partial_run_as_partial(partial_store: tuple[Path, str, str]) -> None:
    store, whole, partial = partial_store
    listed = agenteval_cli(store.parent, "runs", "--store", str(store))
    assert listed.returncode == 0, listed.stderr
    rows = {words[1]: line for line in listed.stdout.splitlines() if len(words := line.split()) > 1}
    assert "partial" in rows[partial] and "2/6" in rows[partial]
    assert "finished" in rows[whole]


def test_show_says_partial_and_suggests_only_what_works(
    partial_store: tuple[Path, str, str],
) -> None:
    store, _, partial = partial_store
    folder = store.parent
    shown = agenteval_cli(
        folder,
        "show",
        partial,
        "--store",
        str(store),
        "--json",
        "run.json",
        "--junit",
        "junit.xml",
        "--html",
        "run.html",
    )
    assert shown.returncode == 0, shown.stderr
    assert_clean(shown.stderr)
    said = " ".join((shown.stdout + shown.stderr).split())
    assert f"run {partial} is partial" in said
    assert "pytest test_support.py::test_support" in said
    assert "--resume" not in said and "agenteval run pytest:" not in said
    document = json.loads((folder / "run.json").read_text())
    assert document["status"] == "partial" and document["complete"] is False
    assert document["missing"]["count"] == 4 and document["missing"]["stored"] == 2
    junit = (folder / "junit.xml").read_text()
    assert 'type="missing_trials"' in junit
    page = (folder / "run.html").read_text()
    assert "UTC · partial" in page and "<strong>Incomplete:</strong> 4 of 6 trials" in page
    # Scored again, it is still partial: exit 3, and the hint is pytest again.
    rescored = agenteval_cli(folder, "rescore", partial, "--store", str(store))
    assert rescored.returncode == 3, rescored.stdout + rescored.stderr
    said = " ".join(rescored.stderr.split())
    assert "pytest test_support.py::test_support" in said and "--resume" not in said


def test_resume_refuses_a_partial_pytest_run_clearly(
    partial_store: tuple[Path, str, str],
) -> None:
    store, _, partial = partial_store
    resumed = _resume(store.parent, store, partial)
    assert resumed.returncode == 2, resumed.stdout + resumed.stderr
    said = " ".join(resumed.stderr.split())
    assert "pytest session" in said and "cannot be resumed" in said
    assert "pytest test_support.py::test_support" in said
    assert "agenteval run pytest:" not in said
    # `--resume` alone never picks it either: nothing of this target is unfinished.
    latest = _resume(store.parent, store)
    assert latest.returncode == 2 and "no unfinished run" in latest.stderr
    assert _runs(store)[-1][1] is RunStatus.PARTIAL


def test_compare_and_gate_on_a_partial_run(partial_store: tuple[Path, str, str]) -> None:
    store, whole, partial = partial_store
    compared = agenteval_cli(store.parent, "compare", whole, partial, "--store", str(store))
    assert compared.returncode == 0, compared.stderr
    said = " ".join(compared.stdout.split())
    assert f"the candidate run {partial} is partial" in said
    assert "1 shared case" in said
    gated = agenteval_cli(store.parent, "gate", whole, partial, "--store", str(store))
    assert gated.returncode == 1, gated.stdout + gated.stderr
    said = " ".join(gated.stdout.split())
    assert "✗ both runs finished" in said and f"the candidate run {partial} is partial" in said
    assert "pytest test_support.py::test_support" in said
    assert "agenteval run TARGET" not in said and "--allow-subset" not in said
    # Saying the subset was meant does not make a partial run whole.
    gated = agenteval_cli(
        store.parent, "gate", whole, partial, "--allow-subset", "--store", str(store)
    )
    assert gated.returncode == 1 and "✗ both runs finished" in gated.stdout
    # A partial base is refused the same way.
    gated = agenteval_cli(store.parent, "gate", partial, whole, "--store", str(store))
    assert gated.returncode == 1 and f"the base run {partial} is partial" in gated.stdout


def test_a_killed_session_stays_running_and_show_hints_only_pytest(
    project: pytest.Pytester,
) -> None:
    """A session killed outright cannot end its run: it stays stored as running (as a killed
    `agenteval run` does), shown `interrupted` since its process is gone, and `show` and
    `--resume` point at pytest, not at a resume."""
    done, _ = _interrupted_session(project, stop=signal.SIGKILL)
    assert done.returncode == -signal.SIGKILL
    store = project.path / "runs.db"
    ((run_id, status, stored, total),) = _runs(store)
    assert (status, stored, total) == (RunStatus.RUNNING, 4, 6)
    shown = agenteval_cli(project.path, "show", run_id, "--store", str(store))
    said = " ".join(shown.stderr.split())
    assert shown.returncode == 0 and f"run {run_id} was interrupted (its process" in said, said
    assert "`pytest test_support.py::test_support` runs every case again" in said
    assert "--resume" not in said
    resumed = _resume(project.path, store, run_id)
    assert resumed.returncode == 2 and "cannot be resumed" in resumed.stderr
