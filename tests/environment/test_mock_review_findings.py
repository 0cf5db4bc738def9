"""What a review of tool mocks found, each seen failing first: a `when` on an argument left at
its default (or given as a tuple) still answers, so the real tool never runs; a mocked call's
arguments are checked in the JSON form the trace records (a tuple, a date, a dataclass);
a replay answers what the recorded run answered without checking the arguments again; a
state holding values that cannot be copied never costs the run; a mock's function that
raises answers the call with its error as an injected failure."""

from __future__ import annotations

import datetime
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import agenteval
from agenteval import EvalCase, FailureCause, evaluate

LIVE: list[Any] = []


@agenteval.tool
def refund_items(
    order_id: str, currency: str = "EUR", items: list[str] | None = None
) -> dict[str, Any]:
    LIVE.append((order_id, currency, items))  # would hit the payments API
    return {"refunded": True, "live": True}


def refunding(prompt: str) -> str:
    first = refund_items("o-1")  # currency left at its default
    second = refund_items("o-2", "EUR", ("sku1", "sku2"))  # type: ignore[arg-type]  # a tuple
    return f"{first['live']} {second['live']}"


def test_a_when_sees_defaults_and_json_forms(tmp_path: Path) -> None:
    mocks = {
        "refund_items": [
            {"when": {"order_id": "o-1", "currency": "EUR"}, "result": {"live": False}},
            {"when": {"order_id": "o-2", "items": ["sku1", "sku2"]}, "result": {"live": False}},
        ]
    }
    LIVE.clear()
    run = evaluate(
        refunding, [EvalCase(id="c", input="x", tool_mocks=mocks)], store=tmp_path / "r.db"
    )
    (result,) = run.results
    assert LIVE == []
    assert result.trial.output == "False False"
    assert [call.mocked for call in result.trial.tool_calls] == ["mock", "mock"]


@dataclass
class Address:
    city: str


@agenteval.tool
def ship_parcel(items: list[str], day: datetime.date, to: Address) -> str:
    LIVE.append(("ship_parcel", items))
    return "live shipment"


def shipping(prompt: str) -> str:
    return ship_parcel(("a", "b"), datetime.date(2026, 1, 2), Address(city="Paris"))  # type: ignore[arg-type]


def test_mocked_arguments_are_checked_as_the_trace_records_them(tmp_path: Path) -> None:
    LIVE.clear()
    case = EvalCase(id="c", input="x", tool_mocks={"ship_parcel": {"result": "mocked shipment"}})
    run = evaluate(shipping, [case], store=tmp_path / "r.db")
    (result,) = run.results
    assert result.trial.failure is None, result.trial.failure
    assert result.trial.output == "mocked shipment"
    assert LIVE == []


@agenteval.tool
def fetch_order_day(order_id: int, day: datetime.date) -> dict[str, Any]:
    return {"id": order_id, "status": "shipped"}


def ordering(prompt: str) -> str:
    return str(fetch_order_day("42", datetime.date(2026, 1, 2)))  # type: ignore[arg-type]  # an LLM's "42"


def test_a_replay_answers_what_the_recorded_run_answered(tmp_path: Path) -> None:
    store = tmp_path / "r.db"
    case = EvalCase(id="c", input="x", expected_output="{'id': '42', 'status': 'shipped'}")
    recorded = evaluate(ordering, [case], store=store)
    again = evaluate(ordering, [case], store=store, replay_tools=recorded.info.run_id)
    (first,), (second,) = recorded.results, again.results
    assert first.scores["exact_match"].value == 1.0
    assert second.trial.failure is None, second.trial.failure
    assert second.scores["exact_match"].value == 1.0
    assert [call.mocked for call in second.trial.tool_calls] == ["replay"]


@agenteval.tool
def book_slot(slot: str) -> str:
    state = agenteval.state()
    state["booked"] = slot
    state["db"] = sqlite3.connect(":memory:")
    state["lock"] = threading.Lock()
    state["at"] = datetime.datetime(2026, 1, 1)
    return "ok"


def booking(prompt: str) -> str:
    book_slot(prompt)
    return "booked"


def test_a_state_that_cannot_be_copied_never_costs_the_run(tmp_path: Path) -> None:
    cases = [EvalCase(id=s, input=s, expected_state={"booked": s}) for s in ("9am", "10am")]
    run = evaluate(booking, cases, store=tmp_path / "r.db")
    results = list(run.results)
    assert len(results) == 2
    for result in results:
        assert result.trial.failure is None
        assert result.scores["state_match"].passed is True
        assert (
            result.trial.state is not None and result.trial.state["booked"] == result.trial.case_id
        )


def raising_lookup(order_id: str) -> dict[str, Any]:
    raise KeyError(order_id)


def slow_lookup(order_id: str) -> dict[str, Any]:
    raise TimeoutError("the fixture says: slow")


@agenteval.tool
def lookup_invoice(order_id: str) -> dict[str, Any]:
    LIVE.append(("lookup_invoice", order_id))
    return {}


def looking_up(prompt: str) -> str:
    try:
        return str(lookup_invoice(prompt))
    except KeyError:
        return "no such order"


def test_a_mock_function_that_raises_is_an_injected_failure(tmp_path: Path) -> None:
    LIVE.clear()
    cases = [
        EvalCase(
            id="key",
            input="o-9",
            expected_output="no such order",
            tool_mocks={"lookup_invoice": {"result": raising_lookup}},
        ),
        EvalCase(id="slow", input="o-9", tool_mocks={"lookup_invoice": {"result": slow_lookup}}),
    ]
    run = evaluate(looking_up, cases, store=tmp_path / "r.db", retries=2)
    by_case = {r.trial.case_id: r for r in run.results}
    handled = by_case["key"]
    assert handled.trial.output == "no such order"
    assert handled.trial.tool_calls[0].mocked == "mock"
    assert handled.scores["tool_execution"].value is None  # the case's failure, not the agent's
    slow = by_case["slow"].trial
    assert slow.failure is not None and slow.failure.cause is FailureCause.AGENT_ERROR
    assert slow.attempts == 1  # never retried as infrastructure
    assert LIVE == []


@agenteval.tool
def charge_cards(card: str, amounts: list[int], retry: bool = False) -> dict[str, Any]:
    raise AssertionError("a live payment API: the mock answers")


def reporting(prompt: str) -> dict[str, Any]:
    # An agent reporting its own calls as its framework logs them: defaults filled in.
    calls: list[dict[str, Any]] = []
    logged = {"card": "c1", "amounts": [5, 7], "retry": False}
    for _ in range(2):
        try:
            result = charge_cards(card="c1", amounts=[5, 7])
            calls.append({"name": "charge_cards", "arguments": logged, "result": result})
            break
        except TimeoutError as exc:
            calls.append({"name": "charge_cards", "arguments": logged, "error": str(exc)})
    return {"output": "charged", "tool_calls": calls}


def test_calls_an_agent_reports_itself_are_marked_mocked(tmp_path: Path) -> None:
    sequence = {"sequence": [{"error": "timeout"}, {"result": {"ok": True}}]}
    case = EvalCase(id="c", input="x", tool_mocks={"charge_cards": sequence})
    run = evaluate(reporting, [case], store=tmp_path / "r.db")
    (result,) = run.results
    assert [call.mocked for call in result.trial.tool_calls] == ["mock", "mock"]
    assert result.scores["tool_execution"].passed is True  # the injected timeout left out
