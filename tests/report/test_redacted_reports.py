"""Reports made from what a run holds in memory (its summary, its settings) are redacted as the
store is: a secret in a retry reason or a model name reaches no terminal, JSON, HTML or JUnit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agenteval.case import EvalCase
from agenteval.redaction import REDACTED, Redactor
from agenteval.report.summary import SummaryBuilder
from agenteval.run import TrialResult
from agenteval.score import Score
from agenteval.trace import ModelCall, Trial, Usage

ENV_SECRET = "hunter2-horse-battery-Staple-77"
SHAPED = "sk-proj-Zq81mXvT4kLpW29sQeRt7uYiOp0aSdFh"

AGENT = """
import os
import agenteval

def run(question: str) -> str:
    key = os.environ["MY_SERVICE_API_KEY"]
    agenteval.record_retry(f"rate limited with {key}")
    agenteval.record_retry("retried with sk-proj-Zq81mXvT4kLpW29sQeRt7uYiOp0aSdFh")
    agenteval.record_model_call(model=f"gpt-x/{key}", input_tokens=10, output_tokens=3)
    agenteval.record_model_call(
        model="proxy/sk-proj-Zq81mXvT4kLpW29sQeRt7uYiOp0aSdFh", input_tokens=1, output_tokens=1
    )
    return "ok"
"""


def test_retry_reasons_and_model_names_reach_no_report_of_agenteval_run(tmp_path: Path) -> None:
    (tmp_path / "leaky.py").write_text(AGENT)
    (tmp_path / "cases.yaml").write_text("- input: ok\n  expected_output: ok\n")
    env = {**os.environ, "MY_SERVICE_API_KEY": ENV_SECRET, "COLUMNS": "300"}
    done = subprocess.run(
        [
            *(sys.executable, "-m", "agenteval", "run", "cases.yaml", "--agent", "leaky.py:run"),
            *("--json", "run.json", "--html", "run.html", "--junit", "run.xml", "-v"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    outputs = {
        "terminal": done.stdout + done.stderr,
        "json": (tmp_path / "run.json").read_text(),
        "html": (tmp_path / "run.html").read_text(),
        "junit": (tmp_path / "run.xml").read_text(),
    }
    for where, text in outputs.items():
        assert ENV_SECRET not in text, where
        assert SHAPED not in text, where
    # The retries and the unpriced models are still reported, masked.
    assert f"rate limited with {REDACTED}" in outputs["terminal"]
    assert f"gpt-x/{REDACTED}" in outputs["json"]


def _result(case_id: str, retries: dict[str, int], models: list[str]) -> TrialResult:
    trial = Trial(
        case_id=case_id,
        output="ok",
        retries=retries,
        model_calls=[ModelCall(model=m, usage=Usage(input_tokens=5)) for m in models],
    )
    return TrialResult(
        case=EvalCase(id=case_id, input="q"),
        trial=trial,
        scores={"exact_match": Score(name="exact_match", value=1.0, passed=True)},
    )


def test_retry_reasons_that_differ_only_by_a_secret_are_counted_together() -> None:
    redactor = Redactor.from_environment({}, extra=["first-secret-1234", "second-secret-5678"])
    builder = SummaryBuilder(["exact_match"], redactor=redactor)
    builder.add(_result("a", {"failed with first-secret-1234": 2}, ["m/first-secret-1234"]))
    builder.add(_result("b", {"failed with second-secret-5678": 1, "rate_limited": 1}, []))
    summary = builder.build()
    assert summary.retries == {f"failed with {REDACTED}": 3, "rate_limited": 1}
    assert summary.cost.unpriced_models == [f"m/{REDACTED}"]
    assert summary.cost.agent_unpriced_models == [f"m/{REDACTED}"]
    assert summary.retried_trials.count == 2


def test_the_run_settings_a_report_shows_are_redacted(tmp_path: Path) -> None:
    from agenteval.report.html import write_html
    from agenteval.report.json_document import write_run_json
    from agenteval.report.junit import write_junit
    from agenteval.run import RunInfo

    info = RunInfo(
        target=f"https://user:{ENV_SECRET}@example.com/cases",
        agent=f"agent.py:run?token={SHAPED}",
        dataset="cases.yaml",
        scorers=[{"name": "my_scorer", "api_key": "plain words but a secret"}],
        settings={"note": SHAPED},
    )
    summary = SummaryBuilder().build()
    write_run_json(tmp_path / "run.json", info, summary, [])
    write_html(tmp_path / "run.html", info, summary, [])
    write_junit(tmp_path / "run.xml", info, [])
    for name in ("run.json", "run.html", "run.xml"):
        text = (tmp_path / name).read_text()
        for secret in (ENV_SECRET, SHAPED, "plain words but a secret"):
            assert secret not in text, (name, secret)


def test_a_reason_named_like_a_secret_keeps_its_count() -> None:
    # A whole-model redaction would take `api_key` for a secret-named key and mask its count.
    builder = SummaryBuilder(["exact_match"], redactor=Redactor())
    builder.add(_result("a", {"api_key": 2, "password": 1}, []))
    builder.add(_result("a", {"api_key": 1}, []))
    summary = builder.build()
    assert summary.retries == {"api_key": 3, "password": 1}
