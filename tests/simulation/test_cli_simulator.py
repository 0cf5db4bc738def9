"""The run setting, as a user gives it: `user_simulator:` in agenteval.yaml (a spec, or the
judge's mapping form), `--user-simulator` on `agenteval run`, stored with the run's settings;
a simulator that cannot run here, or a case no one can play, stops the command with exit 2
before anything is stored. Run as a user runs it: `agenteval` in a child process, its
simulator a loopback server."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, assert_clean, cli_env
from tests.judge.fakes import FakeOpenAI

from agenteval import EndReason, RunStore

AGENT = """
import re


def answer(messages):
    said = " ".join(m["content"] for m in messages if m["role"] == "user")
    number = re.search(r"\\b(\\d{4,})\\b", said)
    if number is None:
        return "What is your order number?"
    if "@" not in said:
        return "What is your email?"
    return f"Refund issued for order {number.group(1)}."
"""

CASES = """\
- id: refund
  expected_output: Refund issued for order 8812.
  user_simulation:
    goal: Get a refund for order 8812, which arrived broken. Email ana@example.com
    persona: Gives one value at a time.
    max_turns: 6
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "cases.yaml").write_text(CASES)
    return tmp_path


def stored_runs(store: Path) -> int:
    if not store.exists():
        return 0
    with sqlite3.connect(store) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


def only_run(project: Path) -> tuple[dict[str, object], list[object]]:
    with RunStore(project / ".agenteval" / "runs.db") as store:
        (row,) = store.list_runs()
        info = store.get_info(row.run_id)
        return info.settings, list(store.iter_results(row.run_id))


def assert_played(project: Path, fake: FakeOpenAI) -> dict[str, object]:
    settings, results = only_run(project)
    (result,) = results
    simulation = result.trial.simulation  # type: ignore[attr-defined]
    assert simulation.end_reason is EndReason.GOAL_ACHIEVED
    assert [t.user for t in simulation.turns][1:] == ["8812", "ana@example.com"]
    assert result.trial.output == "Refund issued for order 8812."  # type: ignore[attr-defined]
    assert fake.request_count == 4
    return settings


def test_user_simulator_in_agenteval_yaml_plays_the_cases(project: Path, fake: FakeOpenAI) -> None:
    (project / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: agent.py:answer\nscorers: [exact_match]\n"
        "user_simulator:\n"
        "  model: openai:gpt-4o-mini\n"
        f"  base_url: {fake.base_url}\n"
        "  params: {temperature: 0.7}\n"
        "  retries: 1\n"
    )
    done = agenteval_cli(project, "run", ".")
    assert done.returncode == 0, done.stderr
    settings = assert_played(project, fake)
    assert settings["user_simulator"] == {
        "spec": "openai:gpt-4o-mini",
        "base_url": fake.base_url,
        "params": {"temperature": 0.7},
        "timeout_s": 60.0,
        "max_retries": 1,
    }
    assert fake.requests[0]["temperature"] == 0.7
    # The cache sits beside the store, as the judge's: a second run asks nothing.
    assert (project / ".agenteval" / "judge-cache.db").exists()
    again = agenteval_cli(project, "run", ".")
    assert again.returncode == 0, again.stderr
    assert fake.request_count == 4
    # --no-cache asks again.
    fresh = agenteval_cli(project, "run", ".", "--no-cache")
    assert fresh.returncode == 0, fresh.stderr
    assert fake.request_count == 8


def test_the_user_simulator_flag_plays_the_cases(project: Path, fake: FakeOpenAI) -> None:
    done = agenteval_cli(
        project,
        "run",
        "cases.yaml",
        "--agent",
        "agent.py:answer",
        "--user-simulator",
        "openai:gpt-4o-mini",
        env=cli_env(OPENAI_BASE_URL=fake.base_url),
    )
    assert done.returncode == 0, done.stderr
    settings = assert_played(project, fake)
    assert settings["user_simulator"]["spec"] == "openai:gpt-4o-mini"  # type: ignore[index]


def assert_refused(done: object, *names: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)  # type: ignore[attr-defined]
    stderr: str = done.stderr  # type: ignore[attr-defined]
    assert_clean(stderr)
    assert stderr.count("error:") == 1, stderr
    for name in names:
        assert name in stderr, stderr


def test_a_simulator_with_no_api_key_exits_2_and_stores_nothing(project: Path) -> None:
    done = agenteval_cli(
        project,
        "run",
        "cases.yaml",
        "--agent",
        "agent.py:answer",
        "--user-simulator",
        "openai:gpt-4o-mini",
    )
    assert_refused(done, "user simulator openai:gpt-4o-mini", "OPENAI_API_KEY", "--user-simulator")
    assert stored_runs(project / ".agenteval" / "runs.db") == 0


def test_a_simulator_in_the_config_with_no_key_names_the_file(project: Path) -> None:
    (project / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: agent.py:answer\nuser_simulator: anthropic:claude-haiku-4-5\n"
    )
    done = agenteval_cli(project, "run", ".")
    assert_refused(done, "ANTHROPIC_API_KEY", "agenteval.yaml")
    assert stored_runs(project / ".agenteval" / "runs.db") == 0


def test_a_case_no_one_can_play_exits_2_naming_it_and_stores_nothing(project: Path) -> None:
    done = agenteval_cli(project, "run", "cases.yaml", "--agent", "agent.py:answer")
    assert_refused(done, "refund", "user_simulation", "--user-simulator", "script:")
    assert stored_runs(project / ".agenteval" / "runs.db") == 0


def test_a_user_simulator_that_is_not_provider_model_is_refused_at_its_line(
    project: Path,
) -> None:
    (project / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: agent.py:answer\nuser_simulator: gpt-4o-mini\n"
    )
    done = agenteval_cli(project, "run", ".")
    assert_refused(done, "'gpt-4o-mini' is not a user simulator", "agenteval.yaml", ":3")


DYING_AGENT = AGENT.replace(
    "def answer(messages):\n",
    "def answer(messages):\n"
    "    import os, pathlib\n"
    "    if len(messages) >= 3 and 'dies' in messages[0]['content'] "
    "and pathlib.Path('die').exists():\n"
    "        os._exit(3)\n",
)

TWO_CASES = (
    CASES
    + """\
- id: second
  expected_output: Refund issued for order 4455.
  user_simulation:
    goal: Get a refund for order 4455, which arrived broken. Email bo@example.com
    starting_prompt: My parcel dies on arrival, it came broken.
    max_turns: 6
"""
)


def test_a_run_that_died_mid_conversation_resumes_with_its_stored_simulator(
    project: Path, fake: FakeOpenAI
) -> None:
    (project / "agent.py").write_text(DYING_AGENT)
    (project / "cases.yaml").write_text(TWO_CASES)
    (project / "die").write_text("")
    args = ("run", "cases.yaml", "--agent", "agent.py:answer", "--concurrency", "1")
    env = cli_env(OPENAI_BASE_URL=fake.base_url)
    died = agenteval_cli(project, *args, "--user-simulator", "openai:gpt-4o-mini", env=env)
    assert died.returncode == 3, died.stderr
    asked = fake.request_count
    (project / "die").unlink()
    # Resumed with no --user-simulator: the run's own, as stored; which cannot run on a
    # machine with no key and no base URL, said before anything runs.
    refused = agenteval_cli(project, *args, "--resume", env=cli_env())
    assert_refused(refused, "user simulator openai:gpt-4o-mini", "OPENAI_API_KEY")
    assert fake.request_count == asked
    resumed = agenteval_cli(project, *args, "--resume", env=env)
    assert resumed.returncode == 0, resumed.stderr
    _, results = only_run(project)
    by_case = {r.case.id: r.trial for r in results}  # type: ignore[attr-defined]
    assert by_case["second"].output == "Refund issued for order 4455."
    assert by_case["second"].simulation.end_reason is EndReason.GOAL_ACHIEVED
    assert by_case["refund"].output == "Refund issued for order 8812."
    # What the dead run asked is read from the cache, not asked again.
    assert by_case["second"].simulation.cached_calls >= 1
    assert fake.request_count - asked < 4 + 3
