"""`agenteval run --judge` and `agenteval judge`, as a user runs them, against a loopback
OpenAI-compatible server."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from tests.cli_process import agenteval_cli, cli_env
from tests.judge.fakes import FakeOpenAI, verdict

from agenteval import EvalCase, evaluate

EXAMPLE = Path(__file__).parents[2] / "examples" / "quickstart"
# The case the quickstart plants to show a timeout (3 s against a 2 s limit, retried once): what
# it shows, these tests do not check, and it would cost each run of them 4 seconds.
PLANTED_TIMEOUT = "annual-report-timeout"


@pytest.fixture
def quickstart(tmp_path: Path) -> Path:
    """The quickstart (its agenteval.yaml, agent, tools and every other case), copied without
    its planted timeout case."""
    folder = tmp_path / "quickstart"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    cases = yaml.safe_load((folder / "cases.yaml").read_text(encoding="utf-8"))
    kept = [case for case in cases if case["id"] != PLANTED_TIMEOUT]
    assert len(kept) == len(cases) - 1
    (folder / "cases.yaml").write_text(yaml.safe_dump(kept, sort_keys=False), encoding="utf-8")
    return folder


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        server.handler = lambda body: verdict(
            {"reasoning": "Checked.", "score": 1.0}, input_tokens=300, output_tokens=30
        )
        yield server


def agenteval(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return agenteval_cli(cwd, *args, env=cli_env(COLUMNS="160", **env), timeout=300)


def test_the_quickstart_with_a_judge_gets_the_four_rubrics_with_tokens_and_cost(
    fake: FakeOpenAI, quickstart: Path, tmp_path: Path
) -> None:
    env = {"OPENAI_BASE_URL": fake.base_url}
    done = agenteval(
        tmp_path,
        "run",
        str(quickstart),
        "--judge",
        "openai:gpt-4o-mini",
        "--json",
        "run.json",
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "LLM judge rubrics" in done.stdout and "Judge tokens" in done.stdout
    document = json.loads((tmp_path / "run.json").read_text())
    summary = document["summary"]
    for rubric in ("correctness", "groundedness", "answer_relevance", "context_relevance"):
        assert summary["scorers"][rubric]["scored"] > 0, rubric
    assert summary["judge_usage"]["input_tokens"] > 0
    assert summary["cost"]["judge_usd"] > 0
    scored = next(r for r in document["results"] if r["scores"]["correctness"]["value"] is not None)
    assert scored["scores"]["correctness"]["reason"] == "Checked."

    calls = fake.request_count
    judged = agenteval(
        tmp_path,
        "judge",
        "latest",
        "--judge",
        "openai:gpt-4o-mini",
        "--rubric",
        "correctness,groundedness",
        "--json",
        "judged.json",
        env=env,
    )
    assert judged.returncode == 0, judged.stderr
    assert fake.request_count == calls  # every verdict came from the cache
    shown = agenteval(tmp_path, "show", "latest", "--json", "shown.json", env=env)
    assert shown.returncode == 0, shown.stderr
    results = json.loads((tmp_path / "shown.json").read_text())["results"]
    assert any(r["scores"]["correctness"]["value"] == 1.0 for r in results)


def test_without_a_judge_the_rubrics_are_skipped_with_one_warning(
    quickstart: Path, tmp_path: Path
) -> None:
    done = agenteval(
        tmp_path, "run", str(quickstart), "--scorer", "correctness", "--json", "r.json", env={}
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("warning:") == 1 and "--judge" in done.stderr
    stats = json.loads((tmp_path / "r.json").read_text())["summary"]["scorers"]["correctness"]
    assert stats["mean"] is None or stats["scored"] <= 2  # only trials with no answer score (0)


def test_a_missing_key_is_named_and_nothing_runs(tmp_path: Path) -> None:
    # A judge asked for that cannot run stops the run up front (tests/test_cli_judge_required.py).
    done = agenteval(
        tmp_path,
        "run",
        str(EXAMPLE),
        "--judge",
        "openai:gpt-4o-mini",
        "--json",
        "r.json",
        env={},
    )
    assert done.returncode == 2, done.stderr
    assert "OPENAI_API_KEY" in done.stderr
    assert not (tmp_path / "r.json").exists()


def test_judge_needs_a_judge(tmp_path: Path) -> None:
    # A stored run where `agenteval run` would put it, made in this process: one case is enough.
    case = EvalCase(id="c1", input="2+2?", expected_output="4")
    evaluate(lambda question: "4", [case], store=tmp_path / ".agenteval" / "runs.db")
    done = agenteval(tmp_path, "judge", "latest", env={})
    assert done.returncode == 2
    assert "no judge given" in done.stderr and "Traceback" not in done.stderr
    bad = agenteval(tmp_path, "judge", "latest", "--judge", "gpt-4o", env={})
    assert bad.returncode == 2 and "PROVIDER:MODEL" in bad.stderr
