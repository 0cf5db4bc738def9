"""JUnit XML judges a case by the scorers that decide whether a trial passes (`--passing`, the
run's setting), as the summary does.

Before, `--junit` failed every case for any failing scorer whatever `--passing` said: a run
whose summary said "Trials passing: 1 of 1 (100%) (a trial passes when ... exact_match passed)"
wrote a JUnit file with both its cases failing (on `step_efficiency` and `redundant_calls`,
which the run had been told not to count), and a case none of whose deciding scorers applied
passed or failed on the others instead of being skipped. Real `agenteval run` and `agenteval
report` processes over a real store.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from tests.review.cli import agenteval, run_id

AGENT = """
import agenteval


@agenteval.tool
def lookup(city: str) -> str:
    return "sunny"


def answer(question: str) -> str:
    # Three identical calls: step_efficiency and redundant_calls fail every trial.
    lookup("Paris")
    lookup("Paris")
    lookup("Paris")
    return "rainy" if "Oslo" in question else "Sunny"
"""

CASES = """
- id: paris
  input: Weather in Paris?
  expected_output: sunny
  max_tool_calls: 1
- id: rome
  input: Weather in Rome?
  expected_tools: [lookup]
- id: oslo
  input: Weather in Oslo?
  expected_output: sunny
"""


def _project(folder: Path) -> Path:
    (folder / "agent.py").write_text(AGENT, encoding="utf-8")
    (folder / "cases.yaml").write_text(CASES, encoding="utf-8")
    (folder / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: agent.py:answer\n", encoding="utf-8"
    )
    return folder


def _outcomes(path: Path) -> dict[str, str]:
    """Each test case's outcome in the file: failure, error, skipped or ok."""
    outcomes: dict[str, str] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[case.attrib["name"]] = "+".join(kinds) or "ok"
    return outcomes


def test_junit_counts_only_the_scorers_that_decide_whether_a_trial_passes(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    done = agenteval(project, "run", ".", "--passing", "exact_match", "--junit", "run.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Trials passing: 1 of 2" in done.stdout
    # paris passed exact_match (step_efficiency and redundant_calls do not count); rome has
    # no exact_match to decide it: skipped, as the summary gives it no verdict; oslo failed
    # exact_match. Before: paris and rome both failed (on the scorers not counted).
    outcomes = _outcomes(project / "run.xml")
    assert outcomes == {"paris": "ok", "rome": "skipped", "oslo": "failure"}
    root = ET.parse(project / "run.xml").getroot()
    (oslo,) = [case for case in root.iter("testcase") if case.attrib["name"] == "oslo"]
    failure = oslo.find("failure")
    assert failure is not None
    assert failure.attrib["message"] == "exact_match failed in 1 of 1 trial"
    # What the other scorers said stays in the trial's output.
    out = oslo.findtext("system-out") or ""
    assert "redundant_calls FAILED" in out
    (rome,) = [case for case in root.iter("testcase") if case.attrib["name"] == "rome"]
    skipped = rome.find("skipped")
    assert skipped is not None
    assert "exact_match" in skipped.attrib["message"]

    # A stored run's JUnit keeps the run's own setting, and `report --passing` replaces it.
    run = run_id(done)
    again = agenteval(project, "show", run, "--junit", "show.xml")
    assert again.returncode == 0, again.stdout + again.stderr
    assert _outcomes(project / "show.xml") == outcomes
    other = agenteval(
        project, "report", run, "--junit", "report.xml", "--passing", "redundant_calls"
    )
    assert other.returncode == 0, other.stdout + other.stderr
    assert set(_outcomes(project / "report.xml").values()) == {"failure"}


def test_without_passing_every_scorer_still_counts(tmp_path: Path) -> None:
    project = _project(tmp_path)
    done = agenteval(project, "run", ".", "--junit", "run.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(_outcomes(project / "run.xml").values()) == {"failure"}
