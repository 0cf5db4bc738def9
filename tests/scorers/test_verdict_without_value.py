"""A scorer that gives its verdict as `Score(passed=...)` with no `value` is read as that
verdict, as a bool is: `passed=False` fails the trial, `passed=True` passes it. One that gives
a `Score(value=...)` with no `passed` passes at its threshold, as a number does.

Before, such a score was read as "did not apply" (no value): a scorer returning
`Score(name=..., passed=False, reason="not JSON")` on every trial left the run with "applied to
no trial", no trial failing, and its JUnit case skipped: the failure it reported was lost. A
real `agenteval run` over a real store. And `Score(value=0.9)` with no `passed` failed its
trial in the summary (pass rate 0%, `passed` unset read as a fail) while the pytest plugin
passed it.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tests.review.cli import agenteval, project

from agenteval import EvalCase, Score, Trial
from agenteval.scorers.base import prepare_scorer, to_score

SCORERS = """
import json

from agenteval.score import Score


def valid_json(case, trial):
    try:
        json.loads(trial.output)
    except ValueError as exc:
        return Score(name="valid_json", passed=False, reason=f"not JSON: {exc}")
    return Score(name="valid_json", passed=True, reason="JSON")
"""

AGENT = """
def answer(question: str) -> str:
    return '{"ok": true}' if "json" in question else "plain words"
"""


def test_a_verdict_given_without_a_value_counts(tmp_path: Path) -> None:
    folder = project(
        tmp_path / "p",
        AGENT,
        [{"id": "good", "input": "json please"}, {"id": "bad", "input": "words please"}],
        "scorers: [checks.py:valid_json]\nbuiltins: false\n",
    )
    (folder / "checks.py").write_text(SCORERS, encoding="utf-8")
    done = agenteval(folder, "run", ".", "--json", "run.json", "--junit", "run.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    stats = document["summary"]["scorers"]["valid_json"]
    # Before: scored 0, skipped 2, and no trial failed.
    assert (stats["scored"], stats["passed"], stats["skipped"]) == (2, 1, 0)
    assert document["summary"]["passed"]["count"] == 1
    scores = {r["case_id"]: r["scores"]["valid_json"] for r in document["results"]}
    assert (scores["bad"]["value"], scores["bad"]["passed"]) == (0.0, False)
    assert scores["bad"]["reason"].startswith("not JSON")
    assert (scores["good"]["value"], scores["good"]["passed"]) == (1.0, True)
    cases = {c.attrib["name"]: c for c in ET.parse(folder / "run.xml").getroot().iter("testcase")}
    assert cases["bad"].find("failure") is not None
    assert cases["good"].find("failure") is None and cases["good"].find("skipped") is None


@pytest.mark.parametrize("passed", [True, False])
async def test_both_ways_of_calling_a_scorer_read_the_verdict(passed: bool) -> None:
    case, trial = EvalCase(id="c", input="q"), Trial(output="a")

    def verdict(case: EvalCase, trial: Trial) -> Score:
        return Score(name="verdict", passed=passed)

    score = await prepare_scorer(verdict).run(case, trial)
    assert (score.value, score.passed) == (float(passed), passed)
    renamed = to_score("other", Score(name="verdict", passed=passed))
    assert (renamed.name, renamed.value, renamed.passed) == ("other", float(passed), passed)
    # No verdict and no value is still "did not apply"; an error stays an error.
    assert to_score("v", Score(name="v", reason="n/a")).value is None
    errored = to_score("v", Score(name="v", passed=False, error="boom"))
    assert (errored.value, errored.error) == (None, "boom")


@pytest.mark.parametrize(("value", "passed"), [(0.9, True), (0.5, True), (0.2, False)])
async def test_a_value_given_without_a_verdict_passes_at_the_threshold(
    value: float, passed: bool
) -> None:
    case, trial = EvalCase(id="c", input="q"), Trial(output="a")

    def relevance(case: EvalCase, trial: Trial) -> Score:
        return Score(name="relevance", value=value, reason="judged")

    score = await prepare_scorer(relevance).run(case, trial)
    assert (score.value, score.passed) == (value, passed)

    def strict(case: EvalCase, trial: Trial) -> Score:
        return Score(name="strict", value=value)

    strict.threshold = 0.95  # type: ignore[attr-defined]
    assert (await prepare_scorer(strict).run(case, trial)).passed is False


def test_a_value_given_without_a_verdict_counts_in_the_summary(tmp_path: Path) -> None:
    import agenteval

    def relevance(case: EvalCase, trial: Trial) -> Score:
        return Score(name="relevance", value=0.9, reason="mostly relevant")

    run = agenteval.evaluate(
        lambda question: "hi",
        [EvalCase(id="a", input="q")],
        scorers=[relevance],
        builtins=False,
        store=tmp_path / "runs.db",
    )
    # Before: pass rate 0% and no trial passing.
    assert run.summary.scorers["relevance"].pass_rate == 1.0
    assert run.summary.passed.count == 1
