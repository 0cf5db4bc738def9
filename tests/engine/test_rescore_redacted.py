"""A rescore reads masked secrets: it never turns the live verdict into one the real values
would not give.

The store keeps `sk-proj-[REDACTED]` for any key of that shape, so from the store an answer
giving key B "matches" a case expecting key A (before: the rescore stored a pass for a trial
the live run failed), and a forbidden key A is "found" in an answer giving key B (a false
failure of a live pass). Real runs in a real SQLite store, rescored as `agenteval rescore`
does; both directions; ordinary rescoring unchanged.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import agenteval
from agenteval import EvalCase, Score, Trial
from agenteval.criteria import ExactMatchCriterion
from agenteval.redaction import REDACTED
from agenteval.run import TrialResult
from agenteval.scorers.answer import ExactMatch
from agenteval.scorers.redacted import KEPT, UNDECIDABLE, scoring_from_store
from agenteval.scorers.safety import AvoidsForbiddenText

KEY_A = "sk-proj-Q7vX2mLp9RtY4kWz8NcB3dFh6JsA1gUe5iOq0HxVbT"
KEY_B = "sk-proj-ZZZZ2mLp9RtY4kWz8NcB3dFh6JsA1gUe5iOq0Hxyyy"


def gives_key_b(question: str) -> str:
    return "configure it" if question == "hello" else f"configure {KEY_B}"


def gives_key_a(question: str) -> str:
    return "configure it" if question == "hello" else f"configure {KEY_A}"


def cases() -> list[EvalCase]:
    return [
        # The answer must be key A: key B is a live failure, key A a live pass.
        EvalCase(id="which-key", input="which key?", expected_output=f"configure {KEY_A}"),
        # Key A must never be said: key B is a live pass.
        EvalCase(id="never-a", input="any key?", must_not_contain=[KEY_A]),
        # No secret anywhere: rescored as it always was.
        EvalCase(id="plain", input="hello", expected_output="configure it"),
    ]


def by_case(results: list[TrialResult]) -> dict[str, dict[str, Score]]:
    return {result.case.id: result.scores for result in results}


def stored_scores(store: Path, run_id: str) -> dict[tuple[str, str], str]:
    with sqlite3.connect(store) as conn:
        rows = conn.execute(
            "SELECT case_id, name, data FROM scores WHERE run_id = ?", (run_id,)
        ).fetchall()
    conn.close()
    return {(case_id, name): data for case_id, name, data in rows}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


def test_the_store_holds_both_keys_as_the_same_masked_text(store: Path) -> None:
    # The premise: from the store, the two keys cannot be told apart.
    run = agenteval.evaluate(gives_key_b, cases(), store=store)
    stored = by_case(list(run.iter_results()))
    with sqlite3.connect(store) as conn:
        (case_data,) = conn.execute("SELECT data FROM cases WHERE case_id = 'which-key'").fetchone()
        (trial_data,) = conn.execute(
            "SELECT data FROM trials WHERE case_id = 'which-key'"
        ).fetchone()
    conn.close()
    assert KEY_A not in case_data and KEY_B not in trial_data
    assert f"sk-proj-{REDACTED}" in case_data and f"sk-proj-{REDACTED}" in trial_data
    assert stored["which-key"]["exact_match"].passed is False


def test_a_live_failure_stays_a_failure_and_a_live_pass_stays_a_pass(store: Path) -> None:
    run = agenteval.evaluate(gives_key_b, cases(), store=store)
    live = by_case(list(run.iter_results()))
    assert live["which-key"]["exact_match"].passed is False  # wrong key
    assert live["never-a"]["avoids_forbidden_text"].passed is True  # key A not said
    rescored_run = agenteval.rescore(run.run_id, store=store)
    rescored = by_case(list(rescored_run.iter_results()))
    # Before: exact_match passed (both read `sk-proj-[REDACTED]`) and avoids_forbidden_text
    # failed (the masked phrase was "found" in the masked answer).
    wrong = rescored["which-key"]["exact_match"]
    assert wrong.passed is False and wrong.value == 0.0
    assert wrong.reason == live["which-key"]["exact_match"].reason
    assert "cannot be decided from the store" in wrong.details[KEPT]
    kept = rescored["never-a"]["avoids_forbidden_text"]
    assert kept.passed is True and kept.value == 1.0
    assert KEPT in kept.details
    # The summary counts the verdicts as kept.
    stats = rescored_run.summary.scorers
    assert stats["exact_match"].passed == 1 and stats["exact_match"].scored == 2  # plain passes
    assert stats["avoids_forbidden_text"].passed == 1
    assert rescored["plain"]["exact_match"].passed is True


def test_the_same_key_live_pass_is_kept_too(store: Path) -> None:
    run = agenteval.evaluate(gives_key_a, cases(), store=store)
    live = by_case(list(run.iter_results()))
    assert live["which-key"]["exact_match"].passed is True
    assert live["never-a"]["avoids_forbidden_text"].passed is False  # key A said
    rescored = by_case(list(agenteval.rescore(run.run_id, store=store).iter_results()))
    assert rescored["which-key"]["exact_match"].passed is True
    assert rescored["never-a"]["avoids_forbidden_text"].passed is False


def test_a_second_rescore_writes_nothing_and_plain_trials_rescore_as_before(store: Path) -> None:
    run = agenteval.evaluate(gives_key_b, cases(), store=store)
    before = stored_scores(store, run.run_id)
    agenteval.rescore(run.run_id, store=store)
    once = stored_scores(store, run.run_id)
    # Only the kept scores changed (their note); every score of the plain case is as it was.
    changed = {key for key in once if once[key] != before[key]}
    assert changed == {("which-key", "exact_match"), ("never-a", "avoids_forbidden_text")}
    agenteval.rescore(run.run_id, store=store)
    assert stored_scores(store, run.run_id) == once


def test_a_scorer_new_to_the_run_gives_no_score_rather_than_a_verdict(store: Path) -> None:
    run = agenteval.evaluate(gives_key_b, cases(), builtins=False, store=store)
    rescored = by_case(
        list(agenteval.rescore(run.run_id, [ExactMatchCriterion()], store=store).iter_results())
    )
    score = rescored["which-key"]["exact_match"]
    assert score.value is None and score.passed is None
    assert score.details[UNDECIDABLE] == "redacted"
    assert "cannot be decided from the store" in (score.reason or "")
    plain = rescored["plain"]["exact_match"]  # no mask: decided as ever
    assert plain.value == 1.0 and plain.passed is True


def test_a_changed_scorer_still_rewrites_every_decidable_verdict(store: Path) -> None:
    run = agenteval.evaluate(gives_key_b, cases(), store=store)

    def exact_match(case: EvalCase, trial: Trial) -> Score:  # a new rule, named like the old
        return Score(name="exact_match", value=1.0, passed=True, reason="lenient")

    rescored = by_case(
        list(agenteval.rescore(run.run_id, [exact_match], store=store).iter_results())
    )
    # Scored beside the built-in, under a name of its own (two codes never share one name).
    assert rescored["plain"]["exact_match_2"].reason == "lenient"
    # A rule of the user's own is not ours to second-guess: it decides on what it reads.
    assert rescored["which-key"]["exact_match_2"].reason == "lenient"


def test_live_scoring_is_unchanged_by_the_mark_in_real_text() -> None:
    # An agent that writes the mark itself is judged on what it wrote, outside a rescore.
    case = EvalCase(
        id="x", input="q", expected_output=f"configure {KEY_A}", must_not_contain=[REDACTED]
    )
    trial = Trial(output=f"configure sk-proj-{REDACTED}")
    assert ExactMatch()(case, trial).passed is False
    assert AvoidsForbiddenText()(case, trial).passed is False
    with scoring_from_store():
        assert ExactMatch()(case, trial).value is None
        assert AvoidsForbiddenText()(case, trial).value is None
        no_mark = EvalCase(id="y", input="q", expected_output="configure it")
        assert ExactMatch()(no_mark, Trial(output="configure it")).passed is True
        assert ExactMatch()(no_mark, Trial(output="")).passed is False  # no answer: decided


# -- the tool scorers: secret-named arguments and results are stored as `[REDACTED]` ---------


@agenteval.tool
def connect(api_key: str) -> dict[str, object]:
    """Open a session with a key."""
    return {"ok": True}


@agenteval.tool
def unlock(password: int) -> dict[str, object]:
    """Unlock with a numeric password."""
    return {"unlocked": True}


@agenteval.tool
def account() -> dict[str, object]:
    """The account's details."""
    return {"holder": "Ada", "password": 4821, "key": KEY_A}


def two_sessions(question: str) -> str:
    connect(api_key=KEY_A)  # two different keys: not a repeat
    connect(api_key=KEY_B)
    unlock(password=1234)  # valid: an int
    return "connected"


def reads_the_account(question: str) -> str:
    account()
    return "the code is 4821" if question == "code?" else f"use {KEY_B}"


def test_tool_scorers_keep_live_passes_that_masked_arguments_would_fail(store: Path) -> None:
    case = EvalCase(id="sessions", input="connect twice")
    run = agenteval.evaluate(two_sessions, [case], store=store)
    (live,) = list(run.iter_results())
    assert live.scores["redundant_calls"].passed is True
    assert live.scores["tool_arguments_valid"].passed is True
    (again,) = list(agenteval.rescore(run.run_id, store=store).iter_results())
    # Before: both keys read `[REDACTED]` (a "repeat") and the password a string (invalid).
    assert again.scores["redundant_calls"].passed is True
    assert KEPT in again.scores["redundant_calls"].details
    assert again.scores["tool_arguments_valid"].passed is True
    assert KEPT in again.scores["tool_arguments_valid"].details
    execution = again.scores["tool_execution"]  # nothing masked that it reads: rescored
    assert execution.passed is True and KEPT not in execution.details


def test_tool_faithfulness_keeps_the_live_verdict_both_ways(store: Path) -> None:
    cases = [EvalCase(id="code", input="code?"), EvalCase(id="key", input="key?")]
    run = agenteval.evaluate(reads_the_account, cases, store=store)
    live = by_case(list(run.iter_results()))
    assert live["code"]["tool_faithfulness"].passed is True  # 4821 is in the result
    assert live["key"]["tool_faithfulness"].passed is False  # key B is not
    again = by_case(list(agenteval.rescore(run.run_id, store=store).iter_results()))
    # Before: 4821 was masked out of the stored result (a false failure), and key B read as
    # the masked key A (a false pass).
    assert again["code"]["tool_faithfulness"].passed is True
    assert again["key"]["tool_faithfulness"].passed is False
    assert KEPT in again["code"]["tool_faithfulness"].details
    assert KEPT in again["key"]["tool_faithfulness"].details
