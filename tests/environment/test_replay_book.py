"""`ReplayBook`: which recorded call answers a live one (in order, in rounds of calls made at
once, or in any order; identical calls in their recorded order), arguments compared as stored,
what a miss says; and a recorded error raised again of the same type."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agenteval.agents.environment import (
    InjectedError,
    ReplayBook,
    ReplayMissError,
    ToolEnvironment,
    replayed_error,
)
from agenteval.trace import FailureCause, ToolCall

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def call(
    name: str,
    result: Any = None,
    *,
    at: float | None = None,
    took: float | None = None,
    error: str | None = None,
    **arguments: Any,
) -> ToolCall:
    return ToolCall(
        name=name,
        arguments=arguments,
        result=result,
        error=error,
        started_at=None if at is None else T0 + timedelta(seconds=at),
        duration_s=took,
    )


def results(book: ReplayBook, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    taken = [book.take(name, args) for name, args in calls]
    return [None if found is None else found.result for found in taken]


def test_in_order_identical_calls_get_their_recorded_answers_in_turn() -> None:
    book = ReplayBook(
        [
            call("poll", "pending", job=1, at=0, took=1),
            call("poll", "done", job=1, at=2, took=1),
            call("fetch", "data", job=1, at=4, took=1),
        ],
        run_id="r1",
    )
    assert results(book, ("poll", {"job": 1}), ("poll", {"job": 1}), ("fetch", {"job": 1})) == [
        "pending",
        "done",
        "data",
    ]
    # The stored trial polled twice: a third poll is one more than it made.
    assert book.take("poll", {"job": 1}) is None
    assert (
        "poll(job=1) was never called a 3rd time in the replayed run r1: it was called 2 times"
        in book.miss("poll", {"job": 1})
    )
    assert book.miss("fetch", {"job": 2}) == "fetch(job=2) was never called in the replayed run r1"


def test_in_order_refuses_a_call_out_of_turn_and_names_the_expected_one() -> None:
    book = ReplayBook(
        [
            call("create", "T-1", title="x", at=0, took=1),
            call("get", "open", id="T-1", at=2, took=1),
        ],
        run_id="r1",
        trial=0,
    )
    assert book.take("get", {"id": "T-1"}) is None
    said = book.miss("get", {"id": "T-1"})
    assert (
        "get(id='T-1') is not the next call in the replayed run r1 (its trial 0 of this case)"
        in said
    )
    assert "it made create(title='x') at this point" in said
    # The miss used nothing up: the calls in turn still replay.
    assert results(book, ("create", {"title": "x"}), ("get", {"id": "T-1"})) == ["T-1", "open"]


def test_calls_made_at_once_replay_in_either_order_within_their_round() -> None:
    # a and b overlapped in time (started together, as parallel calls do); c came after both.
    recorded = [
        call("a", "A", at=0.0, took=1.0),
        call("b", "B", at=0.1, took=0.5),
        call("c", "C", at=2.0, took=0.1),
    ]
    book = ReplayBook(recorded, run_id="r1")
    assert results(book, ("b", {}), ("a", {}), ("c", {})) == ["B", "A", "C"]
    # But the next round opens only once the round before is used up.
    book = ReplayBook(recorded, run_id="r1")
    assert results(book, ("a", {}), ("c", {})) == ["A", None]
    assert "(or 0 more" not in book.miss("c", {})
    assert "it made b() at this point" in book.miss("c", {})


def test_calls_with_no_recorded_time_are_a_round_each() -> None:
    book = ReplayBook([call("a", "A"), call("b", "B")], run_id="r1")
    assert results(book, ("b", {})) == [None]
    assert results(book, ("a", {}), ("b", {})) == ["A", "B"]


def test_any_order_takes_the_first_unused_equal_call_anywhere() -> None:
    book = ReplayBook(
        [call("poll", 1, job=1), call("other", "o"), call("poll", 2, job=1)],
        run_id="r1",
        any_order=True,
    )
    assert results(book, ("other", {}), ("poll", {"job": 1}), ("poll", {"job": 1})) == ["o", 1, 2]
    assert book.take("poll", {"job": 1}) is None
    assert "poll(job=1) was never called a 3rd time" in book.miss("poll", {"job": 1})
    assert book.take("poll", {"job": 2}) is None
    assert "poll(job=2) was never called in the replayed run r1" in book.miss("poll", {"job": 2})


def test_any_order_names_a_call_never_made() -> None:
    book = ReplayBook([call("a", "A"), call("b", "B")], run_id="r1", any_order=True, trial=2)
    assert book.take("c", {"x": 1}) is None
    assert (
        book.miss("c", {"x": 1})
        == "c(x=1) was never called in the replayed run r1 (its trial 2 of this case)"
    )


def test_arguments_are_compared_as_the_store_wrote_them() -> None:
    def as_stored(name: str, args: dict[str, Any]) -> dict[str, Any]:
        return {
            k: ("[REDACTED]" if k == "token" else list(v) if isinstance(v, tuple) else v)
            for k, v in args.items()
        }

    book = ReplayBook(
        [call("login", "ok", token="[REDACTED]", scopes=["a", "b"])],
        run_id="r1",
        stored_form=as_stored,
    )
    assert book.take("login", {"token": "s3cret", "scopes": ("a", "b")}) is not None


def test_an_absent_case_misses_every_call_saying_why() -> None:
    environment = ToolEnvironment(
        replay=ReplayBook((), run_id="r1", absent="the replayed run r1 has no case 'new'")
    )
    with pytest.raises(ReplayMissError, match="has no case 'new'"):
        environment.answer("lookup", {"q": 1})
    assert environment.violation is not None
    assert environment.violation.cause is FailureCause.REPLAY_MISS
    assert "lookup(q=1) is not replayed" in environment.violation.message


def test_fallthrough_lets_a_miss_run_for_real_and_notes_nothing() -> None:
    environment = ToolEnvironment(replay=ReplayBook((), run_id="r1"), replay_fallthrough=True)
    assert environment.answer("lookup", {"q": 1}) is None
    assert environment.violation is None


def test_a_recorded_error_is_raised_again_of_the_same_type_name() -> None:
    book = ReplayBook(
        [
            call("a", error="UnknownCityError: no such city"),
            call("b", error="ValueError: bad value"),
            call("c", error="InjectedTimeout: c: the call timed out (injected by a tool mock)"),
            call("d", error="KeyError"),
        ],
        run_id="r1",
        any_order=True,
    )
    environment = ToolEnvironment(replay=book)
    raised: dict[str, BaseException] = {}
    for name in "abcd":
        answer = environment.answer(name, {})
        assert answer is not None and answer.kind == "replay"
        with pytest.raises(InjectedError) as caught:
            answer.value()
        raised[name] = caught.value
    assert type(raised["a"]).__name__ == "UnknownCityError" and str(raised["a"]) == "no such city"
    # Python's own types are caught as the real ones would be.
    assert isinstance(raised["b"], ValueError) and str(raised["b"]) == "bad value"
    assert isinstance(raised["c"], TimeoutError)
    assert isinstance(raised["d"], KeyError) and type(raised["d"]).__name__ == "KeyError"


def test_a_recorded_error_in_free_text_is_raised_as_it_reads() -> None:
    error = replayed_error("the service said no: go away", "tool")
    assert type(error) is InjectedError and str(error) == "the service said no: go away"


def test_calls_the_harness_refused_in_the_stored_run_are_not_replayed() -> None:
    book = ReplayBook(
        [
            call("a", error="ReplayMissError: a() was never made in the replayed run r0"),
            call("b", error="UnmockedToolError: b() has no mock"),
            call("c", "C"),
        ],
        run_id="r1",
    )
    assert book.take("a", {}) is None
    assert results(book, ("c", {})) == ["C"]
