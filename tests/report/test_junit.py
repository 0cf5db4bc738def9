"""JUnit XML: one test case per eval case, failing scorers only, errors apart, valid by schema."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agenteval
from agenteval import EvalCase, Score, Trial
from agenteval.report.junit import write_junit
from agenteval.run import RunInfo, TrialResult
from agenteval.store import RunStore
from agenteval.trace import Failure, FailureCause

SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))


def score(name: str, passed: bool | None, reason: str = "", error: str | None = None) -> Score:
    return Score(
        name=name,
        value=None if passed is None else float(passed),
        passed=passed,
        reason=reason or None,
        error=error,
    )


def result(
    case: str,
    trial: int,
    *scores: Score,
    output: str | None = "answer",
    failure: FailureCause | None = None,
    message: str = "",
) -> TrialResult:
    return TrialResult(
        case=EvalCase(id=case, input="q"),
        trial=Trial(
            case_id=case,
            trial=trial,
            output=output,
            latency_s=0.25,
            failure=None if failure is None else Failure(cause=failure, message=message),
        ),
        scores={s.name: s for s in scores},
    )


RESULTS = [
    # All good.
    result("good", 0, score("exact_match", True), score("tool_selection", True)),
    result("good", 1, score("exact_match", True), score("tool_selection", None)),
    # One scorer fails on one trial of two; the other passes throughout.
    result(
        "wrong",
        0,
        score("exact_match", False, "expected 'Madrid', got 'Barcelona'"),
        score("tool_selection", True),
    ),
    result("wrong", 1, score("exact_match", True), score("tool_selection", True)),
    # The agent raised: an error, and the scorers that judged it failed.
    result(
        "crash",
        0,
        score("exact_match", False, "no answer (agent_error)"),
        output=None,
        failure=FailureCause.AGENT_ERROR,
        message="KeyError: 'city'",
    ),
    # A timeout: no scorer judged it; an error only.
    result(
        "slow",
        0,
        score("exact_match", None),
        output=None,
        failure=FailureCause.TIMEOUT,
        message="ran past 2s",
    ),
    # A scorer crashed while the others passed.
    result("buggy", 0, score("exact_match", True), score("mine", None, error="ZeroDivisionError")),
    # Nothing applied.
    result("nothing", 0, score("exact_match", None)),
]


def info(target: str | None = None) -> RunInfo:
    return RunInfo(run_id="20261130-074904-9c06", trials=2, dataset="cases.yaml", target=target)


def test_the_file_is_valid_junit_with_one_testcase_per_case(tmp_path: Path) -> None:
    path = tmp_path / "out" / "junit.xml"
    totals = write_junit(path, info(), RESULTS)
    SCHEMA.validate(str(path))
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert list(cases) == ["good", "wrong", "crash", "slow", "buggy", "nothing"]
    assert (totals.tests, totals.failures, totals.errors, totals.skipped) == (6, 2, 3, 1)
    assert suite.get("tests") == "6" and suite.get("failures") == "2"
    assert suite.get("errors") == "3" and suite.get("skipped") == "1"
    assert root.get("tests") == "6"
    assert cases["good"].get("classname") == "agenteval.cases"
    assert cases["good"].get("time") == "0.500"
    assert list(cases["good"]) == [cases["good"].find("system-out")]


def test_failures_name_only_the_failing_scorers(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit(path, info(), RESULTS)
    cases = {case.get("name"): case for case in ET.parse(path).getroot().iter("testcase")}
    failure = cases["wrong"].find("failure")
    assert failure is not None
    assert failure.get("message") == "exact_match failed in 1 of 2 trials"
    assert failure.get("type") == "exact_match"
    assert "tool_selection" not in (failure.text or "")
    assert "trial 0 · exact_match (0.00): expected 'Madrid', got 'Barcelona'" in (
        failure.text or ""
    )
    assert cases["wrong"].find("error") is None
    # A passing scorer is never reported as failed, anywhere.
    for case in cases.values():
        for element in case.iter("failure"):
            assert "tool_selection" not in ET.tostring(element, encoding="unicode")


def test_agent_failures_are_errors_apart_from_failures(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit(path, info(), RESULTS)
    cases = {case.get("name"): case for case in ET.parse(path).getroot().iter("testcase")}
    crash = cases["crash"]
    error, failure = crash.find("error"), crash.find("failure")
    assert error is not None and failure is not None
    assert error.get("type") == "agent_error"
    assert error.get("message") == "trial 0: agent_error: KeyError: 'city'"
    assert failure.get("message") == "exact_match failed in 1 of 1 trial"
    slow = cases["slow"]
    assert slow.find("failure") is None
    error = slow.find("error")
    assert error is not None and error.get("type") == "timeout"
    buggy = cases["buggy"]
    error = buggy.find("error")
    assert buggy.find("failure") is None
    assert error is not None and error.get("type") == "scorer_error"
    assert "scorer mine errored: ZeroDivisionError" in (error.text or "")
    skipped = cases["nothing"].find("skipped")
    assert skipped is not None and skipped.get("message") == "no scorer applied to any trial"


def test_system_out_holds_each_trials_answer_and_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit(path, info(), RESULTS)
    cases = {case.get("name"): case for case in ET.parse(path).getroot().iter("testcase")}
    out = cases["wrong"].findtext("system-out") or ""
    assert "trial 0: answer" in out
    assert "exact_match FAILED (0.00), tool_selection passed" in out
    assert "trial 0: (no answer)" in (cases["crash"].findtext("system-out") or "")


def test_an_empty_run_is_still_a_valid_file(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    assert write_junit(path, info(), []).tests == 0
    SCHEMA.validate(str(path))


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    case_id=st.text(min_size=1, max_size=30),
    output=st.text(max_size=200),
    reason=st.text(max_size=80),
)
def test_any_text_makes_a_valid_file(
    tmp_path: Path, case_id: str, output: str, reason: str
) -> None:
    path = tmp_path / "junit.xml"
    results = [result(case_id, 0, score("exact_match", False, reason), output=output)]
    write_junit(path, info(target="<script>alert(1)</script>\x00"), results)
    SCHEMA.validate(str(path))
    root = ET.parse(path).getroot()
    testcase = root.find("testsuite/testcase")
    assert testcase is not None
    assert testcase.find("failure") is not None


def test_control_characters_are_escaped_not_dropped(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit(path, info(), [result("c", 0, score("exact_match", True), output="a\x1bb\x00")])
    assert "trial 0: a\\x1bb\\x00" in (ET.parse(path).getroot().findtext(".//system-out") or "")


@agenteval.tool
def population_of(city: str) -> dict[str, object]:
    """Look a city up."""
    return {"city": city, "population": 2_100_000}


def population_agent(question: str) -> str:
    population_of(question.split()[-1])
    return "2,100,000" if "Paris" in question else "unknown"


def test_a_stored_run_as_junit(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    cases = [
        EvalCase(
            id="paris",
            input="Population of Paris",
            expected_output="2100000",
            expected_tools=["population_of"],
        ),
        EvalCase(
            id="rome",
            input="Population of Rome",
            expected_output="2800000",
            expected_tools=["population_of"],
        ),
    ]
    run = agenteval.evaluate(population_agent, cases, trials=2, store=store)
    path = tmp_path / "junit.xml"
    with RunStore(store) as opened:
        totals = write_junit(path, opened.get_info(run.run_id), opened.iter_results(run.run_id))
    SCHEMA.validate(str(path))
    assert (totals.tests, totals.failures, totals.errors) == (2, 1, 0)
    cases_xml = {c.get("name"): c for c in ET.parse(path).getroot().iter("testcase")}
    failure = cases_xml["rome"].find("failure")
    assert failure is not None
    assert failure.get("message") is not None
    assert "tool_selection" not in (failure.get("message") or "")
    assert "exact_match failed in 2 of 2 trials" in (failure.get("message") or "")
    assert cases_xml["paris"].find("failure") is None


@pytest.mark.parametrize("bad", ["<testsuites><testsuite/></testsuites>"])
def test_the_schema_rejects_what_jenkins_would_not_read(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "bad.xml"
    path.write_text(bad)
    assert not SCHEMA.is_valid(str(path))


def test_a_case_a_scorer_could_not_judge_for_want_of_a_field_is_skipped_not_passed(
    tmp_path: Path,
) -> None:
    # An openai-v2 trace without content: the answer passed, the tool calls the case expects
    # are unknown. Nothing checked them, so the case is no pass (it was one before).
    from agenteval.scorers.recorded import NOT_RECORDED

    why = "the trace does not record the tool calls — set CAPTURE_MESSAGE_CONTENT=SPAN_ONLY"
    gap = Score(
        name="tool_selection", reason=f"not scored: {why}", details={NOT_RECORDED: ["tool_calls"]}
    )
    results = [
        result("unknown", 0, score("exact_match", True), gap),
        result("unknown", 1, score("exact_match", True), score("tool_selection", True)),
        result("wrong", 0, score("exact_match", False, "expected 'Sunny'"), gap),
    ]
    path = tmp_path / "junit.xml"
    totals = write_junit(path, info(), results)
    SCHEMA.validate(str(path))
    assert (totals.tests, totals.failures, totals.skipped) == (2, 1, 1)
    cases = {case.get("name"): case for case in ET.parse(path).getroot().iter("testcase")}
    skipped = cases["unknown"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == (
        f"not judged: tool_selection not scored in 1 of 2 trials: {why}"
    )
    assert "tool_selection not scored" in (cases["unknown"].findtext("system-out") or "")
    # A real failure still fails.
    assert cases["wrong"].find("failure") is not None and cases["wrong"].find("skipped") is None
