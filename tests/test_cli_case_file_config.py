"""`agenteval run cases.yaml --agent ...` (a case file as TARGET) reads the agenteval.yaml
beside the case file, else the current directory's; `--config FILE` names one. So the hint "add
them under `prices:` in agenteval.yaml" can be followed: a user who does it sees the cost.
Run end to end, as a user does: the hint, the edit, the run again."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli as agenteval
from tests.cli_process import assert_clean

AGENT = """
import agenteval

def answer(question):
    agenteval.record_model_call("house-model-1", input_tokens=1_000_000, output_tokens=0)
    return "Paris"
"""
CASES = "- id: capital\n  input: Capital of France?\n  expected_output: Paris\n"
PRICES = "prices:\n  house-model-1: {input: 2.0, output: 4.0}\n"


def agent_cost(document: Path) -> float | None:
    cost = json.loads(document.read_text())["summary"]["cost"]
    return cost["agent_usd"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "evals").mkdir()
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "evals" / "cases.yaml").write_text(CASES)
    return tmp_path


def run_cases(project: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    done = agenteval(
        project, "run", "evals/cases.yaml", "--agent", "agent.py:answer", "--json", "r.json", *extra
    )
    assert done.returncode == 0, done.stderr
    assert_clean(done.stderr)
    return done


def test_the_price_hint_leads_to_a_config_beside_the_case_file_that_works(project: Path) -> None:
    first = run_cases(project)
    assert "under `prices:` in agenteval.yaml" in " ".join(first.stdout.split())
    assert agent_cost(project / "r.json") is None
    # The user follows the hint: agenteval.yaml beside the case file.
    (project / "evals" / "agenteval.yaml").write_text(PRICES)
    second = run_cases(project)
    assert "no price" not in second.stdout
    assert agent_cost(project / "r.json") == pytest.approx(2.0)
    # The store is the current directory's, as for a config TARGET without `store:`.
    assert (project / ".agenteval" / "runs.db").exists()
    # And the stored run is shown with the same prices.
    shown = agenteval(project, "show", "latest", "--json", "shown.json")
    assert shown.returncode == 0, shown.stderr
    assert agent_cost(project / "shown.json") == pytest.approx(2.0)


def test_the_current_directory_config_is_read_when_none_is_beside_the_cases(
    project: Path,
) -> None:
    (project / "agenteval.yaml").write_text(PRICES)
    run_cases(project)
    assert agent_cost(project / "r.json") == pytest.approx(2.0)


def test_the_config_beside_the_case_file_wins_over_the_current_directory(project: Path) -> None:
    (project / "agenteval.yaml").write_text("prices:\n  house-model-1: {input: 9.0, output: 9.0}\n")
    (project / "evals" / "agenteval.yaml").write_text(PRICES)
    done = run_cases(project)
    assert agent_cost(project / "r.json") == pytest.approx(2.0)
    assert "evals/agenteval.yaml" in done.stderr  # it says which config it read


def test_config_names_the_file_and_the_flags_still_win(project: Path) -> None:
    (project / "evals" / "agenteval.yaml").write_text("trials: 3\n" + PRICES)
    (project / "other.yaml").write_text(
        "trials: 2\nprices:\n  house-model-1: {input: 5.0, output: 0}\n"
    )
    run_cases(project, "--config", "other.yaml")
    document = json.loads((project / "r.json").read_text())
    assert document["settings"]["trials"] == 2
    assert agent_cost(project / "r.json") == pytest.approx(10.0)
    run_cases(project, "--config", "other.yaml", "--trials", "1")
    assert json.loads((project / "r.json").read_text())["settings"]["trials"] == 1


def test_a_config_file_that_is_missing_is_named(project: Path) -> None:
    done = agenteval(
        project, "run", "evals/cases.yaml", "--agent", "agent.py:answer", "--config", "nope.yaml"
    )
    assert done.returncode == 2 and "nope.yaml" in done.stderr
    assert_clean(done.stderr)


def test_score_reads_the_config_beside_its_case_file(project: Path) -> None:
    (project / "evals" / "agenteval.yaml").write_text(PRICES)
    trial = {
        "case_id": "capital",
        "trial": 0,
        "output": "Paris",
        "model_calls": [{"model": "house-model-1", "usage": {"input_tokens": 1_000_000}}],
    }
    (project / "trials.jsonl").write_text(json.dumps(trial) + "\n")
    done = agenteval(
        project, "score", "trials.jsonl", "--cases", "evals/cases.yaml", "--json", "r.json"
    )
    assert done.returncode == 0, done.stderr
    assert agent_cost(project / "r.json") == pytest.approx(2.0)


def test_the_no_agent_hint_leads_to_a_config_that_works(project: Path) -> None:
    done = agenteval(project, "run", "evals/cases.yaml")
    assert done.returncode == 2
    assert "no agent given" in done.stderr and "`agent:` in agenteval.yaml" in done.stderr
    (project / "agenteval.yaml").write_text("agent: agent.py:answer\n")
    again = agenteval(project, "run", "evals/cases.yaml")
    assert again.returncode == 0, again.stderr
