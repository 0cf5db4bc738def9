"""state_match: the trial's final environment state holds the case's expected_state."""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase, Failure, FailureCause, Trial
from agenteval.catalog import resolve_scorers
from agenteval.errors import ScorerError
from agenteval.redaction import REDACTED
from agenteval.scorers.redacted import KEPT, scoring_from_store
from agenteval.scorers.state import StateMatch, state_difference

match = StateMatch()
exact = StateMatch(exact=True)


def case(expected: dict[str, Any] | None) -> EvalCase:
    return EvalCase(id="c", input="q", expected_state=expected)


def test_no_expected_state_is_no_score_and_declined() -> None:
    score = match(case(None), Trial(state={"a": 1}))
    assert (score.value, score.passed, score.reason) == (
        None,
        None,
        "no expected_state in the case",
    )
    assert match.declines(case(None)) == "no expected_state in the case"
    assert match.declines(case({})) is None


def test_listed_keys_must_be_equal_and_others_are_ignored() -> None:
    expected = {"tickets": [{"id": "T-1", "status": "open"}], "charged": 42}
    state = {"tickets": [{"id": "T-1", "status": "open", "by": "bot"}], "charged": 42, "x": 1}
    score = match(case(expected), Trial(state=state))
    assert score.passed is True and score.value == 1.0
    assert score.reason == "the state holds the 2 expected keys"


def test_the_reason_names_the_first_difference_by_path() -> None:
    expected = {"tickets": [{"id": "T-1", "status": "open"}], "charged": 42}
    state = {"tickets": [{"id": "T-1", "status": "closed"}], "charged": 41}
    score = match(case(expected), Trial(state=state))
    assert score.passed is False and score.value == 0.0
    assert score.reason == 'state.tickets[0].status: expected "open", got "closed"'
    assert score.details["difference"] == score.reason


@pytest.mark.parametrize(
    ("expected", "actual", "reason"),
    [
        ({"a": {"b": 1}}, {"a": {}}, "state.a.b: missing (expected 1)"),
        ({"a": 1}, {}, "state.a: missing (expected 1)"),
        ({"a": [1, 2]}, {"a": [1]}, "state.a: expected 2 items, got 1"),
        ({"a": [1, 2]}, {"a": [2, 1]}, "state.a[0]: expected 1, got 2"),
        ({"a": [1]}, {"a": "1"}, 'state.a: expected a list, got "1"'),
        ({"a": {"b": 1}}, {"a": 3}, "state.a: expected a mapping, got 3"),
        ({"a": True}, {"a": 1}, "state.a: expected true, got 1"),  # a flag is no count
        ({"a": 1}, {"a": True}, "state.a: expected 1, got true"),
        ({"a": None}, {"a": 0}, "state.a: expected null, got 0"),
        ({"odd key": 1}, {"odd key": 2}, 'state["odd key"]: expected 1, got 2'),
        ({"a": "x" * 200}, {"a": "y"}, 'state.a: expected "' + "x" * 78 + '…, got "y"'),
    ],
)
def test_each_kind_of_difference(expected: Any, actual: Any, reason: str) -> None:
    assert state_difference(expected, actual) == reason
    assert match(case(expected), Trial(state=actual)).reason == reason


def test_equal_values_of_other_shapes_match() -> None:
    assert state_difference({"a": 1}, {"a": 1.0}) is None  # numbers by value
    assert state_difference({"a": [1, {"b": 2}]}, {"a": (1, {"b": 2, "c": 3})}) is None


def test_exact_names_a_key_not_expected_at_any_level() -> None:
    assert exact(case({"a": 1}), Trial(state={"a": 1})).passed is True
    score = exact(case({"a": 1}), Trial(state={"a": 1, "b": 2}))
    assert score.passed is False
    assert score.reason == "state.b: not expected (exact), got 2"
    nested = exact(case({"a": {"b": 1}}), Trial(state={"a": {"b": 1, "c": 0}}))
    assert nested.reason == "state.a.c: not expected (exact), got 0"
    assert match(case({"a": {"b": 1}}), Trial(state={"a": {"b": 1, "c": 0}})).passed is True


def test_an_empty_expected_state_is_an_expectation() -> None:
    # `expected_state: {}` expects an empty state, exact or not: before, without exact it was
    # a subset check of nothing, so any state passed it ("expected_state is empty: any state
    # holds it"), a vacuous 1.0.
    for scorer in (match, exact):
        failed = scorer(case({}), Trial(state={"a": 1}))
        assert (failed.value, failed.passed) == (0.0, False)
        assert failed.reason == 'state: expected an empty state, got {"a": 1}'
        held = scorer(case({}), Trial(state={}))
        assert (held.value, held.reason) == (1.0, "the state is empty, as expected")


def test_an_empty_mapping_or_list_inside_expects_an_empty_one() -> None:
    # As an empty list expects an empty list, an empty mapping expects an empty mapping at any
    # level: `cart: {}` is "the cart is empty", not "there is a cart".
    failed = match(case({"cart": {}}), Trial(state={"cart": {"sku": "A1"}, "n": 1}))
    assert failed.passed is False
    assert failed.reason == 'state.cart: expected an empty mapping, got {"sku": "A1"}'
    assert match(case({"cart": {}}), Trial(state={"cart": {}, "n": 1})).passed is True
    listed = match(case({"items": []}), Trial(state={"items": [1]}))
    assert listed.reason == "state.items: expected 0 items, got 1"
    assert match(case({"cart": {}}), Trial(state={"cart": []})).reason == (
        "state.cart: expected a mapping, got []"
    )


def test_a_trial_with_no_state_fails_saying_so() -> None:
    for scorer in (match, exact):
        for expected in ({}, {"a": 1}):
            score = scorer(case(expected), Trial(output="done"))
            assert score.passed is False and score.value == 0.0
            assert "left no environment state" in (score.reason or "")


def test_an_infrastructure_failure_is_not_judged_and_an_agent_failure_is() -> None:
    timed_out = Trial(state={"a": 1}, failure=Failure(cause=FailureCause.TIMEOUT, message="30s"))
    score = match(case({"a": 1}), timed_out)
    assert score.value is None and "infrastructure" in (score.reason or "")
    crashed = Trial(state={"a": 2}, failure=Failure(cause=FailureCause.AGENT_ERROR, message="x"))
    assert match(case({"a": 1}), crashed).reason == "state.a: expected 1, got 2"


def test_it_is_a_built_in_with_the_exact_setting() -> None:
    from agenteval.scorers.builtin import BUILTIN_SCORERS

    assert BUILTIN_SCORERS["state_match"] is StateMatch
    assert StateMatch.reads == frozenset({"state"})
    (configured,) = resolve_scorers([{"name": "state_match", "exact": True}], builtins=False)
    assert configured == StateMatch(exact=True)
    with pytest.raises(ScorerError, match="state_match has no setting 'exactly'"):
        resolve_scorers([{"name": "state_match", "exactly": True}], builtins=False)


def test_a_rescore_does_not_decide_on_masked_values() -> None:
    trial = Trial(state={"token": f"sk-proj-{REDACTED}"})
    expected = case({"token": f"sk-proj-{REDACTED}"})
    assert match(expected, trial).passed is True  # live: what the agent wrote
    with scoring_from_store():
        assert match(expected, trial).value is None
        assert match(case({"n": 1}), Trial(state={"n": 1})).passed is True  # no mark: decided


# -- through a run: the state stored, the verdict, a rescore -----------------------------------

KEY_A = "sk-proj-Q7vX2mLp9RtY4kWz8NcB3dFh6JsA1gUe5iOq0HxVbT"
KEY_B = "sk-proj-ZZZZ2mLp9RtY4kWz8NcB3dFh6JsA1gUe5iOq0Hxyyy"


@agenteval.tool
def save_key(key: str) -> str:
    agenteval.state()["api_key_in_use"] = key
    agenteval.state()["saves"] = agenteval.state().get("saves", 0) + 1
    return "saved"


def saves_key_b(prompt: str) -> str:
    save_key(KEY_B)
    return "done"


def test_a_run_scores_the_state_and_a_rescore_keeps_a_masked_verdict(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    cases = [
        EvalCase(id="count", input="q", initial_state={"saves": 1}, expected_state={"saves": 2}),
        EvalCase(id="key", input="q", expected_state={"api_key_in_use": KEY_A}),
        EvalCase(id="none", input="q"),
    ]
    run = agenteval.evaluate(saves_key_b, cases, store=store)
    live = {result.case.id: result for result in run.iter_results()}
    assert live["count"].scores["state_match"].passed is True
    # Read back from the store: the key is masked there.
    assert live["count"].trial.state == {"saves": 2, "api_key_in_use": f"sk-proj-{REDACTED}"}
    wrong = live["key"].scores["state_match"]
    assert wrong.passed is False and (wrong.reason or "").startswith("state.api_key_in_use:")
    assert live["none"].scores["state_match"].value is None
    with sqlite3.connect(store) as conn:
        rows = [data for (data,) in conn.execute("SELECT data FROM trials")]
    conn.close()
    assert all(KEY_B not in data for data in rows)  # the state is stored redacted
    rescored = {r.case.id: r for r in agenteval.rescore(run.run_id, store=store).iter_results()}
    kept = rescored["key"].scores["state_match"]
    assert kept.passed is False and KEPT in kept.details  # not the false pass masks would give
    assert rescored["count"].scores["state_match"].passed is True


@agenteval.tool
def pay(amount: str) -> str:
    """Pay `amount` into the account (money kept as Decimal, as a ledger does)."""
    state = agenteval.state()
    state["balance"] = state["balance"] + Decimal(amount)
    state["payments"] = [*state.get("payments", []), Decimal(amount)]
    return "paid"


def paying(prompt: str) -> str:
    pay(prompt)
    return "done"


def test_a_decimal_in_the_state_is_the_number_it_stands_for(tmp_path: Path) -> None:
    # Before, the state kept a Decimal as its text: "1.50" against expected_state's 1.5 failed a
    # trial that paid exactly what was asked, and an expectation written as a Decimal was kept
    # as its text in the store, so a rescore compared text with text.
    store = tmp_path / "runs.db"
    start = {"balance": Decimal("0")}
    cases = [
        EvalCase(id="yaml", input="1.50", initial_state=start, expected_state={"balance": 1.5}),
        EvalCase(id="tenth", input="0.10", initial_state=start, expected_state={"balance": 0.1}),
        EvalCase(
            id="decimal",
            input="0.10",
            initial_state=start,
            expected_state={"balance": Decimal("0.1"), "payments": [Decimal("0.10")]},
        ),
        EvalCase(id="whole", input="2", initial_state=start, expected_state={"balance": 2}),
        EvalCase(id="short", input="1.40", initial_state=start, expected_state={"balance": 1.5}),
    ]
    run = agenteval.evaluate(paying, cases, store=store, scorers=["state_match"])
    live = {result.case.id: result for result in run.iter_results()}
    assert live["yaml"].trial.state == {"balance": 1.5, "payments": [1.5]}
    assert live["whole"].trial.state == {"balance": 2, "payments": [2]}
    verdicts = {key: result.scores["state_match"].passed for key, result in live.items()}
    assert verdicts == {"yaml": True, "tenth": True, "decimal": True, "whole": True, "short": False}
    assert live["short"].scores["state_match"].reason == "state.balance: expected 1.5, got 1.4"
    rescored = agenteval.rescore(run.run_id, store=store).iter_results()
    assert {r.case.id: r.scores["state_match"].passed for r in rescored} == verdicts


def leaves_state_alone(prompt: str) -> str:
    return "nothing to do"


def test_a_run_with_an_empty_expected_state_fails_a_trial_that_left_state(tmp_path: Path) -> None:
    # Before, both passed: the empty expectation held whatever state the trial left.
    cases = [
        EvalCase(id="wrote", input="q", expected_state={}),
        EvalCase(id="cleared", input="q", initial_state={"saves": 1}, expected_state={}),
    ]
    run = agenteval.evaluate(saves_key_b, cases, store=tmp_path / "runs.db")
    scores = {r.case.id: r.scores["state_match"] for r in run.iter_results()}
    assert scores["wrote"].passed is False
    assert (scores["wrote"].reason or "").startswith("state: expected an empty state, got {")
    assert scores["cleared"].passed is False
    quiet = agenteval.evaluate(leaves_state_alone, cases[:1], store=tmp_path / "runs.db")
    (result,) = quiet.iter_results()
    assert result.scores["state_match"].passed is True


def paying_what_the_state_holds(prompt: str) -> str:
    """Pays `prompt`, then answers with the kind of value the state's balance started as."""
    started = type(agenteval.state()["balance"]).__name__
    pay(prompt)
    return started


def test_a_decimal_in_the_initial_state_reaches_the_agent_as_a_decimal_streamed_or_not(
    tmp_path: Path,
) -> None:
    # Before, a streamed case (a generator, read back from the store) started from the text
    # "0.50": the ledger's tool failed adding a Decimal to it, where the same case given as a
    # list started from Decimal("0.50") and passed.
    def cases() -> list[EvalCase]:
        return [
            EvalCase(
                id=name,
                input=amount,
                initial_state={"balance": Decimal("0.50"), "limits": [Decimal("2")]},
                expected_state={"balance": expected, "limits": [2]},
            )
            for name, amount, expected in (("fills", "1.50", 2), ("short", "1.00", 2))
        ]

    runs = {
        "listed": agenteval.evaluate(
            paying_what_the_state_holds, cases(), store=tmp_path / "a.db", scorers=["state_match"]
        ),
        "streamed": agenteval.evaluate(
            paying_what_the_state_holds,
            iter(cases()),
            store=tmp_path / "b.db",
            scorers=["state_match"],
        ),
    }
    for how, run in runs.items():
        results = {result.case.id: result for result in run.iter_results()}
        assert {key: r.trial.output for key, r in results.items()} == {
            "fills": "Decimal",
            "short": "Decimal",
        }, how
        assert results["fills"].trial.state == {"balance": 2, "limits": [2], "payments": [1.5]}
        verdicts = {key: r.scores["state_match"].passed for key, r in results.items()}
        assert verdicts == {"fills": True, "short": False}, how
        # The stored case keeps the Decimal as the Decimal it was.
        assert results["short"].case.initial_state == {
            "balance": Decimal("0.50"),
            "limits": [Decimal("2")],
        }, how
        assert isinstance(results["short"].case.initial_state["balance"], Decimal), how
