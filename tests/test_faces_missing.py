"""Every face refuses to call a run with missing trials finished or passing.

The store side (`tests/test_store_missing.py`) counts what is missing; here each face that
turns a run into a verdict or a listing is checked against it: the pytest plugin, the seed
APIs (`AgentEvaluator`, `EvalSuite`), `agenteval rescore` and `judge`, `agenteval runs`, the
JSON document and the HTML report. Trials go missing the two ways the store tests use: a
writer that loses a batch (fault injection), or trial rows deleted with sqlite3 from a
finished run (what a store written by an older agenteval can hold).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli

import agenteval
from agenteval import RunStore
from agenteval.case import EvalCase
from agenteval.otel.scoring import score_traces
from agenteval.run import RunStatus

pytest_plugins = ("pytester",)

CASES = [EvalCase(id=f"c{i}", input=f"q{i}", expected_output=f"Q{i}") for i in range(10)]


def upper(question: str) -> str:
    return question.upper()


def _lose_trials(store: Path, run_id: str, *case_ids: str) -> None:
    """Delete the cases' trial rows (and scores) from a stored run, leaving its status as it
    was: what a store written by an older agenteval, whose writer lost them, holds."""
    marks = ", ".join("?" for _ in case_ids)
    with sqlite3.connect(store) as db:
        for table in ("trials", "scores"):
            db.execute(
                f"DELETE FROM {table} WHERE run_id = ? AND case_id IN ({marks})",
                (run_id, *case_ids),
            )
    db.close()


def _finished_with_holes(tmp_path: Path) -> tuple[Path, str]:
    store = tmp_path / "runs.db"
    run = agenteval.evaluate(upper, CASES, store=store)
    _lose_trials(store, run.run_id, "c1", "c4")
    with RunStore(store) as runs:
        assert runs.get_info(run.run_id).status is RunStatus.FINISHED
    return store, run.run_id


NAMED = "2 of 10 trials have no stored result (case 'c1' trial 0, case 'c4' trial 0)"


# --- The pytest plugin ---------------------------------------------------------------------------

LOSSY_CONFTEST = '''
import pytest

from agenteval.store import RunStore

_real_write = RunStore.write_results


@pytest.fixture(autouse=True)
def lossy_writer(monkeypatch):
    """The writer silently loses every batch holding a trial of the case `lost`."""

    def lossy_write(self, run_id, encoded):
        if any(case_id == "lost" for case_id, _trial in encoded.keys):
            return
        _real_write(self, run_id, encoded)

    monkeypatch.setattr(RunStore, "write_results", lossy_write)
'''


def test_the_pytest_plugin_fails_a_case_whose_trials_were_not_stored(
    pytester: pytest.Pytester,
) -> None:
    """The trials ran and passed in memory, but the store lost them: the case fails, naming
    them, rather than passing on what the agent did with nothing stored to show for it."""
    pytester.makeconftest(LOSSY_CONFTEST)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        test_lossy="""
        from agenteval import EvalCase
        from agenteval.pytest_plugin import agenteval_cases

        CASES = [
            EvalCase(id="kept", input="paris", expected_output="PARIS"),
            EvalCase(id="lost", input="rome", expected_output="ROME"),
        ]

        def shout(question):
            return question.upper()

        # One passing trial of three would be enough: only what is stored may count.
        @agenteval_cases(CASES, agent=shout, trials=3, pass_k=1, pass_k_min=0.3)
        def test_shout(agenteval_result):
            pass
        """
    )
    store = pytester.path / "runs.db"
    result = pytester.runpytest("-v", f"--agenteval-store={store}", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_shout?kept? PASSED*", "*test_shout?lost? FAILED*"])
    result.stdout.fnmatch_lines(
        ["*case 'lost': 3 of 3 trials have no stored result (case 'lost' trials 0, 1, 2)*"]
    )
    assert "Traceback" not in result.stdout.str()
    with RunStore(store, create=False) as runs:
        (row,) = runs.list_runs()
    assert row.status is RunStatus.PARTIAL  # never finished with holes; the session is over
    result.stdout.fnmatch_lines(
        [
            "run *: test_lossy.py::test_shout (2 cases × 3 trials; 3 trials not stored) · partial in *"
        ]
    )


# --- agenteval runs ------------------------------------------------------------------------------


def test_runs_lists_a_finished_run_with_holes_as_incomplete(tmp_path: Path) -> None:
    store, holed = _finished_with_holes(tmp_path)
    whole = agenteval.evaluate(upper, CASES, store=store)
    # Recorded traces give cases unequal numbers of trials: complete with 3 of 2 × 2.
    (tmp_path / "cases.yaml").write_text(
        "- id: a\n  input: q a\n  expected_output: A\n- id: b\n  input: q b\n  expected_output: B\n"
    )
    (tmp_path / "trials.jsonl").write_text(
        '{"case_id": "a", "output": "A"}\n{"case_id": "a", "output": "A"}\n'
        '{"case_id": "b", "output": "B"}\n'
    )
    scored = score_traces(tmp_path / "trials.jsonl", tmp_path / "cases.yaml", store=store)
    assert scored.complete
    listed = agenteval_cli(tmp_path, "runs", "--store", str(store))
    assert listed.returncode == 0, listed.stderr
    cells = [
        [cell.strip() for cell in line.split("│")[1:-1]] for line in listed.stdout.splitlines()
    ]
    rows = {row[0]: row[2:4] for row in cells if row}
    assert rows[holed] == ["incomplete", "8/10"], listed.stdout
    assert rows[whole.run_id] == ["finished", "10/10"], listed.stdout
    assert rows[scored.run_id] == ["finished", "3/3"], listed.stdout


# --- agenteval rescore and judge -----------------------------------------------------------------


def test_rescoring_a_run_with_holes_says_what_it_covers_and_exits_3(tmp_path: Path) -> None:
    store, holed = _finished_with_holes(tmp_path)
    whole = agenteval.evaluate(upper, CASES, store=store)
    done = agenteval_cli(tmp_path, "rescore", holed, "--store", str(store))
    assert done.returncode == 3, done.stdout + done.stderr
    said = " ".join(done.stderr.split())
    assert f"run {holed} did not finish: the summary covers 8 of 10 trials; {NAMED}" in said
    # The run was made from Python: it is resumed from Python, not by a command that cannot work.
    assert f'resume="{holed}"' in said and "agenteval run python:" not in said
    assert "Traceback" not in done.stderr
    # Rescoring the stored trials still happened (legitimately): they have their scores.
    with RunStore(store) as runs:
        assert runs.count_results(holed) == 8
    assert agenteval_cli(tmp_path, "rescore", whole.run_id, "--store", str(store)).returncode == 0
    # In Python, the rescored run says it is incomplete too.
    rescored = agenteval.rescore(holed, store=store)
    assert not rescored.complete
    assert rescored.missing is not None and rescored.missing.count == 2


def test_judging_a_run_with_holes_exits_3(tmp_path: Path) -> None:
    from tests.judge.fakes import PROVIDER_ENV, FakeOpenAI, verdict

    store, holed = _finished_with_holes(tmp_path)
    with FakeOpenAI(default=verdict({"reasoning": "Looks right.", "score": 1.0})) as fake:
        env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
        env.update(
            COLUMNS="200",
            OPENAI_API_KEY="sk-test-not-a-key",
            OPENAI_BASE_URL=fake.base_url,
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        done = subprocess.run(
            [
                *(sys.executable, "-m", "agenteval", "judge", holed, "--store", str(store)),
                *("--judge", "openai:gpt-4o-mini", "--rubric", "correctness"),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert fake.request_count > 0, done.stderr
    assert done.returncode == 3, done.stdout + done.stderr
    said = " ".join(done.stderr.split())
    assert f"the summary covers 8 of 10 trials; {NAMED}" in said


# --- The JSON document and the HTML report -------------------------------------------------------

MISSING_KEY = {
    "count": 2,
    "expected": 10,
    "stored": 8,
    "examples": [{"case_id": "c1", "trial": 0}, {"case_id": "c4", "trial": 0}],
}


def test_the_json_document_and_the_html_report_carry_completeness(tmp_path: Path) -> None:
    """A CI reading `--json` cannot take a run with holes for a finished one: `status` is not
    "finished", `complete` is false and `missing` counts and names the trials; the HTML page
    says so at its top."""
    store, holed = _finished_with_holes(tmp_path)
    whole = agenteval.evaluate(upper, CASES, store=store)
    for command in ("show", "rescore"):
        out = tmp_path / f"{command}.json"
        agenteval_cli(tmp_path, command, holed, "--store", str(store), "--json", str(out))
        document = json.loads(out.read_text())
        assert document["status"] == "incomplete", command
        assert document["complete"] is False
        assert document["missing"] == MISSING_KEY
        assert len(document["results"]) == 8
    shown = agenteval_cli(
        tmp_path, "show", whole.run_id, "--store", str(store), "--json", "whole.json"
    )
    assert shown.returncode == 0, shown.stderr
    document = json.loads((tmp_path / "whole.json").read_text())
    assert (document["status"], document["complete"], document["missing"]) == (
        "finished",
        True,
        None,
    )
    for command in ("show", "report"):
        page = tmp_path / f"{command}.html"
        done = agenteval_cli(tmp_path, command, holed, "--store", str(store), "--html", str(page))
        assert done.returncode == 0, done.stderr
        text = page.read_text()
        assert "Incomplete" in text and NAMED.replace("'", "&#39;") in text, command
    page = tmp_path / "whole.html"
    agenteval_cli(tmp_path, "report", whole.run_id, "--store", str(store), "--html", str(page))
    assert "Incomplete" not in page.read_text()


def test_run_to_json_of_an_incomplete_evaluate_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "runs.db"
    real_write = RunStore.write_results

    def lossy_write(self: RunStore, run_id: str, encoded: object) -> None:
        if any(case_id == "c3" for case_id, _ in encoded.keys):  # type: ignore[attr-defined]
            return
        real_write(self, run_id, encoded)  # type: ignore[arg-type]

    monkeypatch.setattr(RunStore, "write_results", lossy_write)
    run = agenteval.evaluate(upper, CASES, store=store, concurrency=1)
    assert not run.complete
    document = run.to_json()
    assert document["complete"] is False and document["status"] == "running"
    assert {"case_id": "c3", "trial": 0} in document["missing"]["examples"]


# --- The seed APIs -------------------------------------------------------------------------------


def _lossy(monkeypatch: pytest.MonkeyPatch, *lost: str) -> None:
    """The writer silently loses every batch holding a trial of the `lost` cases."""
    real_write = RunStore.write_results

    def lossy_write(self: RunStore, run_id: str, encoded: object) -> None:
        if any(case_id in lost for case_id, _ in encoded.keys):  # type: ignore[attr-defined]
            return
        real_write(self, run_id, encoded)  # type: ignore[arg-type]

    monkeypatch.setattr(RunStore, "write_results", lossy_write)


def test_agent_evaluator_never_passes_an_incomplete_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every stored trial passes, but c3's were lost: the report does not pass, counts the lost
    trials as not judged (`error`), and says the run is incomplete."""
    from agenteval.criteria import ExactMatchCriterion
    from agenteval.evalset import AgentEvaluator, CaseStatus, EvalConfig

    _lossy(monkeypatch, "c3")
    cases = [
        EvalCase(id=case.id, input=case.input, expected_output=str(case.input).upper())
        for case in CASES[:5]
    ]
    evaluator = AgentEvaluator(
        upper,
        EvalConfig(criteria={}),
        criteria=[ExactMatchCriterion()],
        trials=2,
        concurrency=1,
        store=tmp_path / "runs.db",
    )
    report = evaluator.evaluate_sync(cases)
    assert not report.complete
    assert not report.passed
    lost = report.case("c3")
    assert [(r.trial, r.status) for r in lost] == [(0, CaseStatus.ERROR), (1, CaseStatus.ERROR)]
    assert lost[0].error is not None and "no stored result" in lost[0].error
    # A lost batch may hold another case's trial too: whatever was lost is counted.
    summary, missing = report.summary, report.missing
    assert missing is not None and missing.count >= 2
    lost_cases = {r.eval_id for r in report.results if r.status is CaseStatus.ERROR}
    assert (summary.total_cases, summary.trials) == (5, 10)
    assert (summary.passed_cases, summary.error_cases) == (5 - len(lost_cases), len(lost_cases))
    assert summary.missing_trials == missing.count
    assert f"{missing.count} of 10 trials have no stored result" in report.format_summary()
    document = report.to_json()
    assert document["complete"] is False and document["missing"]["count"] == missing.count
    # The whole run, stored as it should be, passes.
    monkeypatch.undo()
    whole = evaluator.evaluate_sync(cases)
    assert whole.complete and whole.passed and whole.to_json()["complete"] is True


def test_evaluate_case_of_a_lost_trial_is_not_a_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agenteval.criteria import ExactMatchCriterion
    from agenteval.evalset import AgentEvaluator, CaseStatus, EvalConfig

    _lossy(monkeypatch, "c0")
    evaluator = AgentEvaluator(
        upper, EvalConfig(criteria={}), criteria=[ExactMatchCriterion()], store=tmp_path / "r.db"
    )
    import asyncio

    result = asyncio.run(
        evaluator.evaluate_case(EvalCase(id="c0", input="q0", expected_output="Q0"))
    )
    assert result.status is CaseStatus.ERROR and result.passed is None


def test_eval_suite_returns_an_incomplete_run_that_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from agenteval.evaluators import EvalSuite

    _lossy(monkeypatch, "c2")
    suite = EvalSuite("lossy", store=tmp_path / "runs.db").add_cases(CASES)
    report = suite.add_evaluators("exact_match").run(upper, concurrency=1)
    assert not report.complete
    assert report.missing is not None and ("c2", 0) in report.missing.examples
    assert "incomplete" in repr(report)
    document = report.to_json()
    assert document["complete"] is False and document["status"] == "running"
    assert any("no stored result" in record.getMessage() for record in caplog.records)


def test_junit_of_a_run_with_holes_holds_an_error_naming_them(tmp_path: Path) -> None:
    """A CI reading JUnit sees the lost trials as an error, not a suite of passing cases."""
    import xml.etree.ElementTree as ET

    store, holed = _finished_with_holes(tmp_path)
    whole = agenteval.evaluate(upper, CASES, store=store)
    for command in ("report", "show"):
        out = tmp_path / f"{command}.xml"
        done = agenteval_cli(tmp_path, command, holed, "--store", str(store), "--junit", str(out))
        assert done.returncode == 0, done.stderr
        suite = ET.parse(out).getroot().find("testsuite")
        assert suite is not None
        assert (suite.get("tests"), suite.get("errors"), suite.get("failures")) == ("9", "1", "0")
        (error,) = suite.iter("error")
        assert error.get("type") == "missing_trials"
        assert error.get("message") == NAMED, command
    out = tmp_path / "whole.xml"
    agenteval_cli(tmp_path, "report", whole.run_id, "--store", str(store), "--junit", str(out))
    suite = ET.parse(out).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("errors")) == ("10", "0")
