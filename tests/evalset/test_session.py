"""`final_session_state_match`: ADK's `final_session_state`, actually compared."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import agenteval
from agenteval import EvalCase, Failure, FailureCause, Trial
from agenteval.evalset.session import SESSION_STATE, final_session_state_match

EXPECTING = EvalCase(
    id="c",
    input="Set my city to Paris",
    metadata={"final_session_state": {"city": "Paris", "units": "metric"}},
)


def reporting(state: dict[str, Any] | None, **fields: Any) -> Trial:
    return Trial(output="Done.", metadata={} if state is None else {SESSION_STATE: state}, **fields)


def test_the_expected_state_keys_must_all_match() -> None:
    score = final_session_state_match(
        EXPECTING, reporting({"city": "Paris", "units": "metric", "visits": 3})
    )
    assert (score.value, score.passed) == (1.0, True)
    assert score.reason == "2 of 2 expected state keys match"
    assert "never checks" in score.details["checked_by"]


def test_a_wrong_or_missing_key_lowers_the_score_and_says_which() -> None:
    score = final_session_state_match(EXPECTING, reporting({"city": "Rome"}))

    assert (score.value, score.passed) == (0.0, False)
    assert score.reason == (
        "0 of 2 expected state keys match: 'units' is missing; 'city' is \"Rome\", "
        'expected "Paris"'
    )
    assert score.details["different"] == {"city": {"expected": "Paris", "actual": "Rome"}}

    half = final_session_state_match(EXPECTING, reporting({"city": "Paris"}))
    assert (half.value, half.passed) == (0.5, False)


def test_no_score_when_nothing_is_expected_or_nothing_is_reported() -> None:
    nothing_expected = final_session_state_match(EvalCase(input="Hi"), reporting({"a": 1}))
    assert nothing_expected.value is None

    not_reported = final_session_state_match(EXPECTING, reporting(None))
    assert not_reported.value is None
    assert not_reported.reason is not None and "metadata['session_state']" in not_reported.reason


def test_failed_trials_follow_the_one_rule() -> None:
    timed_out = reporting(None, failure=Failure(cause=FailureCause.TIMEOUT))
    assert final_session_state_match(EXPECTING, timed_out).value is None

    crashed = reporting(None, failure=Failure(cause=FailureCause.AGENT_ERROR))
    score = final_session_state_match(EXPECTING, crashed)
    assert (score.value, score.passed) == (0.0, False)


def test_in_a_run_the_agent_reports_its_state_with_the_answer(tmp_path: Path) -> None:
    case = EvalCase(id="greet", input="Hi!", metadata={"final_session_state": {"greeted": True}})

    def agent(question: str) -> dict[str, Any]:
        return {"output": "Hello!", "metadata": {SESSION_STATE: {"greeted": True}}}

    run = agenteval.evaluate(
        agent,
        [case],
        scorers=[final_session_state_match],
        builtins=False,
        store=tmp_path / "runs.db",
    )
    (result,) = run.results
    assert result.scores["final_session_state_match"].passed is True
