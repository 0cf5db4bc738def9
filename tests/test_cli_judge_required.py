"""A judge the user asked for (`--judge`, `judge:` in agenteval.yaml, `AGENTEVAL_JUDGE`,
`agenteval judge`, `rescore --judge`, `score --judge`) that cannot run here (no API key, its SDK
extra not installed) ends the command with exit 2 before anything runs, in one message naming
what to set or install; nothing is stored. Without a judge asked for, the rubrics give no score
with one warning, as before. Run as a user runs it: `agenteval` in a child process."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_process import assert_clean, cli_env
from tests.judge.fakes import FakeOpenAI, verdict

from agenteval import RunStore

AGENT = "def answer(question):\n    return 'Paris'\n"
CASES = "- id: capital\n  input: Capital of France?\n  expected_output: Paris\n"


def agenteval(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # cli_env holds no API key and no base URL: a clean machine.
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=cli_env(**env),
        timeout=120,
    )


def stored_runs(store: Path) -> int:
    if not store.exists():
        return 0
    with sqlite3.connect(store) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "cases.yaml").write_text(CASES)
    return tmp_path


def assert_refused(done: subprocess.CompletedProcess[str], *names: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert_clean(done.stderr)
    assert done.stderr.count("error:") == 1, done.stderr
    for name in names:
        assert name in done.stderr, done.stderr
    assert "run " not in done.stdout  # no run started, no summary


def test_run_with_judge_flag_and_no_key_exits_2_before_any_run(project: Path) -> None:
    done = agenteval(
        project, "run", "cases.yaml", "--agent", "agent.py:answer", "--judge", "openai:gpt-4o-mini"
    )
    assert_refused(done, "OPENAI_API_KEY", "--judge")
    assert stored_runs(project / ".agenteval" / "runs.db") == 0


def test_judge_in_the_config_and_no_key_exits_2_naming_the_variable(project: Path) -> None:
    (project / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: agent.py:answer\njudge: anthropic:claude-haiku-4-5\n"
    )
    done = agenteval(project, "run", ".")
    assert_refused(done, "ANTHROPIC_API_KEY", "agenteval.yaml")
    assert stored_runs(project / ".agenteval" / "runs.db") == 0


def test_judge_from_the_environment_and_no_key_exits_2(project: Path) -> None:
    done = agenteval(
        project,
        "run",
        "cases.yaml",
        "--agent",
        "agent.py:answer",
        AGENTEVAL_JUDGE="google:gemini-2.5-flash",
    )
    assert_refused(done, "GOOGLE_API_KEY", "AGENTEVAL_JUDGE")


def test_a_missing_sdk_extra_is_named_with_the_pip_command(project: Path) -> None:
    # The openai package made unimportable for the child, as on a machine without the extra.
    shadow = project / "shadow" / "openai"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named openai')\n")
    env = cli_env()
    env["PYTHONPATH"] = f"{project / 'shadow'}:{env['PYTHONPATH']}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agenteval",
            "run",
            "cases.yaml",
            "--agent",
            "agent.py:answer",
            "--judge",
            "openai:gpt-4o-mini",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        env={**env, "OPENAI_API_KEY": "sk-test"},
        timeout=120,
    )
    assert_refused(done, "pip install 'agenteval[openai]'")
    assert stored_runs(project / ".agenteval" / "runs.db") == 0


def test_judge_rescore_and_score_with_a_judge_that_cannot_run_change_nothing(
    project: Path,
) -> None:
    first = agenteval(
        project, "run", "cases.yaml", "--agent", "agent.py:answer", "--json", "run.json"
    )
    assert first.returncode == 0, first.stderr
    store = project / ".agenteval" / "runs.db"
    before = store.read_bytes()
    judged = agenteval(project, "judge", "latest", "--judge", "openai:gpt-4o-mini")
    assert_refused(judged, "OPENAI_API_KEY")
    rescored = agenteval(project, "rescore", "latest", "--judge", "anthropic:claude-haiku-4-5")
    assert_refused(rescored, "ANTHROPIC_API_KEY")
    assert stored_runs(store) == 1
    # The stored run is untouched: no score replaced by a no-score.
    with sqlite3.connect(store) as conn:
        scores = conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    assert scores == 1
    assert before[:100] == store.read_bytes()[:100]

    trial = json.loads((project / "run.json").read_text())["results"][0]
    (project / "trials.jsonl").write_text(
        json.dumps({"case_id": "capital", "trial": 0, "output": trial["output"]}) + "\n"
    )
    scored = agenteval(
        project, "score", "trials.jsonl", "--cases", "cases.yaml", "--judge", "openai:gpt-4o-mini"
    )
    assert_refused(scored, "OPENAI_API_KEY")
    assert stored_runs(store) == 1


def test_without_a_judge_asked_for_the_rubrics_give_no_score_with_one_warning(
    project: Path,
) -> None:
    done = agenteval(
        project, "run", "cases.yaml", "--agent", "agent.py:answer", "--scorer", "correctness"
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("warning:") == 1 and "--judge" in done.stderr
    assert stored_runs(project / ".agenteval" / "runs.db") == 1


def test_a_base_url_without_a_key_can_run_and_nothing_is_opened(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agenteval.judge.choice import judge_problem
    from agenteval.judge.judge import JudgeConfig

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    problem = judge_problem(JudgeConfig(spec="openai:gpt-4o-mini"))
    assert problem is not None and "OPENAI_API_KEY" in problem
    # A local OpenAI-compatible server needs no key (README, The LLM judge).
    assert judge_problem(JudgeConfig("openai:llama3.1:8b", base_url="http://127.0.0.1:9")) is None
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert judge_problem(JudgeConfig(spec="openai:gpt-4o-mini")) is None
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    assert judge_problem(JudgeConfig(spec="google:gemini-2.5-flash")) is None


def judged_run(project: Path) -> None:
    """A run judged against a (loopback) OpenAI-compatible server, its verdicts stored."""
    with FakeOpenAI() as server:
        server.handler = lambda body: verdict({"reasoning": "Checked.", "score": 1.0})
        judged = agenteval(
            project,
            "run",
            "cases.yaml",
            "--agent",
            "agent.py:answer",
            "--judge",
            "openai:gpt-4o-mini",
            "--rubric",
            "answer_relevance",
            OPENAI_BASE_URL=server.base_url,
        )
    assert judged.returncode == 0, judged.stderr


def test_rescoring_a_judged_run_whose_judge_cannot_run_keeps_its_verdicts(project: Path) -> None:
    judged_run(project)
    store = project / ".agenteval" / "runs.db"
    with RunStore(store, create=False) as runs:
        (row,) = runs.list_runs()
        (result,) = runs.iter_results(row.run_id)
    assert result.scores["answer_relevance"].value == 1.0
    # Rescored where that judge cannot run (no key, no base URL): its own judge, not asked
    # for on this line, but the rescore would replace every verdict with no score.
    done = agenteval(project, "rescore", "latest")
    assert_refused(done, "OPENAI_API_KEY", "openai:gpt-4o-mini", "--judge")
    with RunStore(store, create=False) as runs:
        (result,) = runs.iter_results(row.run_id)
    assert result.scores["answer_relevance"].value == 1.0


def test_resuming_a_judged_run_whose_judge_cannot_run_exits_2(project: Path) -> None:
    (project / "cases.yaml").write_text(CASES + CASES.replace("capital", "capital-2"))
    judged_run(project)
    store = project / ".agenteval" / "runs.db"
    # The run as an interruption leaves it: one trial stored, the other not, still running.
    with sqlite3.connect(store) as conn:
        for table in ("scores", "trials"):
            conn.execute(f"DELETE FROM {table} WHERE case_id = 'capital-2'")
        conn.execute("UPDATE runs SET status = 'running', finished_at = NULL")
    done = agenteval(project, "run", "cases.yaml", "--agent", "agent.py:answer", "--resume")
    assert_refused(done, "OPENAI_API_KEY", "openai:gpt-4o-mini")
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 1
