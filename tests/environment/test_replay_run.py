"""A run replaying a stored run's tool results (`evaluate(replay_tools=...)`): the same scores
with no tool run, order and any order, a miss failing the trial (never run live), fallthrough,
a case the stored run lacks, errors replayed, concurrency, resume, and the refusals."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tests.judge.fakes import FakeOpenAI, verdict

import agenteval
from agenteval import EvalCase, FailureCause, RunStore, evaluate
from agenteval.errors import ConfigError
from agenteval.judge.judge import JudgeConfig
from agenteval.records import RunStatus

RAN: Counter[str] = Counter()
"""Each tool's real runs: the side effects a replay must never have."""
_LOCK = threading.Lock()


def _ran(name: str) -> int:
    with _LOCK:
        RAN[name] += 1
        return RAN[name]


@agenteval.tool
def find_flight(origin: str, destination: str) -> dict[str, Any]:
    """A live system: each real call answers differently (a price that drifts)."""
    seen = _ran("find_flight")
    return {"flight": f"{origin}-{destination}", "price": 100 + seen}


@agenteval.tool
def book_flight(flight: str, price: int) -> dict[str, Any]:
    if price > 10_000:
        raise ValueError(f"price {price} is over the limit")
    return {"booking": f"B-{_ran('book_flight')}", "flight": flight}


@agenteval.tool
async def seat_map(flight: str) -> list[str]:
    _ran("seat_map")
    await asyncio.sleep(0.01)
    return ["1A", "1B"]


@agenteval.tool
async def weather(city: str) -> str:
    _ran("weather")
    await asyncio.sleep(0.01)
    return f"sunny in {city}"


async def travel_agent(prompt: str) -> str:
    """Deterministic given its tools' answers: finds, books (handling a refusal), and asks two
    tools at once."""
    origin, destination = prompt.split("-")
    found = find_flight(origin, destination)
    try:
        booked = book_flight(found["flight"], found["price"])["booking"]
    except ValueError as exc:
        booked = f"refused ({exc})"
    seats, sky = await asyncio.gather(seat_map(found["flight"]), weather(destination))
    return f"{found['flight']} at {found['price']}: {booked}; seats {seats[0]}; {sky}"


CASES = [
    EvalCase(id=route, input=route, expected_output=None, expected_tools=["find_flight"])
    for route in ("LHR-CDG", "CDG-FCO", "FCO-JFK")
]


def scores_of(store: Path, run_id: str) -> dict[tuple[str, int, str], Any]:
    with RunStore(store) as runs:
        return {
            (result.case.id, result.trial.trial, name): (score.value, score.passed, score.reason)
            for result in runs.iter_results(run_id)
            for name, score in result.scores.items()
        }


def outputs_of(run: Any) -> dict[tuple[str, int], str | None]:
    return {(r.case.id, r.trial.trial): r.trial.output for r in run.results}


def test_a_replay_reproduces_the_stored_scores_with_no_tool_run(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    recorded = evaluate(travel_agent, CASES, store=store, trials=2)
    assert recorded.info.status is RunStatus.FINISHED
    before = Counter(RAN)
    replayed = evaluate(travel_agent, CASES, store=store, trials=2, replay_tools=recorded.run_id)
    assert before == RAN  # no tool ran
    assert outputs_of(replayed) == outputs_of(recorded)
    assert scores_of(store, replayed.run_id) == scores_of(store, recorded.run_id)
    for result in replayed.results:
        assert result.trial.failure is None
        assert {call.mocked for call in result.trial.tool_calls} == {"replay"}
    assert replayed.info.settings["replay"] == {
        "run_id": recorded.run_id,
        "match": "in-order",
        "fallthrough": False,
    }
    # Run live again, the price has drifted: the replay is what kept the recorded answers.
    live = evaluate(travel_agent, CASES, store=store, trials=2)
    assert outputs_of(live) != outputs_of(recorded)


def test_each_trial_replays_its_own_stored_trial_else_the_first(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    recorded = evaluate(travel_agent, CASES[:1], store=store, trials=2)
    RAN.clear()
    replayed = evaluate(
        travel_agent, CASES[:1], store=store, trials=3, replay_tools=recorded.run_id
    )
    assert sum(RAN.values()) == 0
    before, after = outputs_of(recorded), outputs_of(replayed)
    assert after[("LHR-CDG", 0)] == before[("LHR-CDG", 0)]
    assert after[("LHR-CDG", 1)] == before[("LHR-CDG", 1)]
    assert after[("LHR-CDG", 2)] == before[("LHR-CDG", 0)]  # no trial 2 stored: the first


def test_a_recorded_error_replays_as_an_error_the_agent_handles(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    case = EvalCase(id="pricey", input="LHR-SYD")
    mocks = {"find_flight": {"result": {"flight": "LHR-SYD", "price": 20_000}}}
    mocked = EvalCase(id="pricey", input="LHR-SYD", tool_mocks=mocks)
    recorded = evaluate(travel_agent, [mocked], store=store)
    (stored,) = recorded.results
    assert stored.trial.tool_calls[1].error == "ValueError: price 20000 is over the limit"
    RAN.clear()
    replayed = evaluate(travel_agent, [case], store=store, replay_tools=recorded.run_id)
    (trial,) = [r.trial for r in replayed.results]
    assert sum(RAN.values()) == 0  # the mocked call replays too
    assert trial.output == stored.trial.output
    assert "refused (price 20000 is over the limit)" in (trial.output or "")
    assert trial.tool_calls[1].error == "ValueError: price 20000 is over the limit"


def reordering_agent(prompt: str) -> str:
    """The travel agent changed: it asks about the weather first, then the flight."""
    origin, destination = prompt.split("-")
    sky = asyncio.run(weather(destination))
    found = find_flight(origin, destination)
    return f"{found['flight']} at {found['price']}; {sky}"


def first_flight_agent(prompt: str) -> str:
    origin, destination = prompt.split("-")
    found = find_flight(origin, destination)
    return f"{found['flight']} at {found['price']}; {asyncio.run(weather(destination))}"


def test_in_order_a_call_out_of_turn_fails_any_order_replays_it(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    recorded = evaluate(first_flight_agent, CASES, store=store)
    RAN.clear()
    strict = evaluate(reordering_agent, CASES, store=store, replay_tools=recorded.run_id)
    assert sum(RAN.values()) == 0  # a miss is never run live
    for result in strict.results:
        failure = result.trial.failure
        assert failure is not None and failure.cause is FailureCause.REPLAY_MISS
        assert failure.message.startswith(f"weather(city='{result.case.id[4:]}') is not the next")
        assert "it made find_flight(origin=" in failure.message
    relaxed = evaluate(
        reordering_agent,
        CASES,
        store=store,
        replay_tools=recorded.run_id,
        replay_match="any-order",
    )
    assert sum(RAN.values()) == 0
    assert {r.trial.failure for r in relaxed.results} == {None}
    assert relaxed.info.settings["replay"]["match"] == "any-order"


def test_a_call_never_made_fails_the_trial_even_when_the_agent_catches_it(
    tmp_path: Path,
) -> None:
    def careful(prompt: str) -> str:
        try:
            return str(find_flight("XXX", "YYY"))
        except Exception as exc:
            return f"sorry: {exc}"

    store = tmp_path / "runs.db"
    recorded = evaluate(first_flight_agent, CASES[:1], store=store)
    RAN.clear()
    run = evaluate(careful, CASES[:1], store=store, replay_tools=recorded.run_id)
    (trial,) = [r.trial for r in run.results]
    assert RAN["find_flight"] == 0
    assert trial.output is not None and trial.output.startswith("sorry: find_flight(origin='XXX'")
    assert trial.failure is not None and trial.failure.cause is FailureCause.REPLAY_MISS
    assert "find_flight(origin='XXX', destination='YYY')" in trial.failure.message


def test_fallthrough_runs_a_call_never_made_for_real(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    recorded = evaluate(first_flight_agent, CASES[:1], store=store)
    RAN.clear()
    run = evaluate(
        reordering_agent,
        CASES[:1],
        store=store,
        replay_tools=recorded.run_id,
        replay_fallthrough=True,
    )
    (trial,) = [r.trial for r in run.results]
    assert trial.failure is None
    # The weather call (out of turn) ran for real; the flight, recorded next, replayed.
    assert dict(RAN) == {"weather": 1}
    assert [(c.name, c.mocked) for c in trial.tool_calls] == [
        ("weather", None),
        ("find_flight", "replay"),
    ]


def test_a_case_the_stored_run_lacks_misses_every_call_or_falls_through(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    recorded = evaluate(first_flight_agent, CASES[:1], store=store)
    new_case = EvalCase(id="AMS-OSL", input="AMS-OSL")
    RAN.clear()
    run = evaluate(first_flight_agent, [new_case], store=store, replay_tools=recorded.run_id)
    (trial,) = [r.trial for r in run.results]
    assert sum(RAN.values()) == 0
    assert trial.failure is not None and trial.failure.cause is FailureCause.REPLAY_MISS
    assert f"the replayed run {recorded.run_id} has no case 'AMS-OSL'" in trial.failure.message
    run = evaluate(
        first_flight_agent,
        [new_case],
        store=store,
        replay_tools=recorded.run_id,
        replay_fallthrough=True,
    )
    assert [r.trial.failure for r in run.results] == [None]
    assert dict(RAN) == {"find_flight": 1, "weather": 1}


def test_concurrent_trials_each_replay_their_own_trial_from_its_start(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    cases = [EvalCase(id=f"R{i}-D{i}", input=f"R{i}-D{i}") for i in range(6)]
    recorded = evaluate(travel_agent, cases, store=store, trials=3, concurrency=8)
    prices = outputs_of(recorded)
    assert len(set(prices.values())) == 18  # every trial saw its own price
    RAN.clear()
    replayed = evaluate(
        travel_agent, cases, store=store, trials=3, concurrency=8, replay_tools=recorded.run_id
    )
    assert sum(RAN.values()) == 0
    assert outputs_of(replayed) == prices
    assert all(r.trial.failure is None for r in replayed.results)


def test_a_resumed_replaying_run_keeps_replaying_the_same_run(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    cases = [EvalCase(id=f"R{i}-D{i}", input=f"R{i}-D{i}") for i in range(6)]
    recorded = evaluate(travel_agent, cases, store=store, trials=3, concurrency=8)
    later = evaluate(travel_agent, cases, store=store)  # the newest finished run: not replayed
    assert later.run_id != recorded.run_id
    RAN.clear()
    stored: list[str] = []

    async def stuck_on_the_last_case(prompt: str) -> str:
        if prompt == "R5-D5":
            await asyncio.Event().wait()  # until the run is stopped
        return await travel_agent(prompt)

    async def stopped_midway() -> None:
        task = asyncio.current_task()
        assert task is not None

        def stop_when_only_the_stuck_are_left(result: Any) -> None:
            stored.append(result.case.id)
            if len(stored) == 15:
                task.cancel()  # the run is stopped, as Ctrl-C stops it

        await agenteval.evaluate_async(
            stuck_on_the_last_case,
            cases,
            store=store,
            trials=3,
            concurrency=8,
            replay_tools=recorded.run_id,
            on_result=stop_when_only_the_stuck_are_left,
        )

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(stopped_midway())
    with RunStore(store) as runs:
        row = runs.list_runs()[0]
        assert row.status is RunStatus.RUNNING and row.trials_done == 15
        halted = row.run_id
    # Resumed with no replay asked for (and another asked for): the run's own replay goes on.
    resumed = evaluate(
        travel_agent,
        cases,
        store=store,
        resume=halted,
        replay_tools=later.run_id,
        replay_match="any-order",
    )
    assert sum(RAN.values()) == 0
    assert resumed.complete and resumed.info.settings["replay"]["run_id"] == recorded.run_id
    assert resumed.info.settings["replay"]["match"] == "in-order"
    assert outputs_of(resumed) == outputs_of(recorded)


def test_replaying_an_unknown_or_unfinished_run_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    with pytest.raises(ConfigError, match="cannot replay run 'nope'") as unknown:
        evaluate(travel_agent, CASES, store=store, replay_tools="nope")
    assert unknown.value.hint is not None and "agenteval runs" in unknown.value.hint
    recorded = evaluate(travel_agent, CASES, store=store)
    with RunStore(store) as runs:
        runs.set_status(recorded.run_id, RunStatus.RUNNING)
    with pytest.raises(ConfigError, match=f"cannot replay run {recorded.run_id}: it did not fin"):
        evaluate(travel_agent, CASES, store=store, replay_tools=recorded.run_id[:15])
    with pytest.raises(ConfigError, match="no finished run of python:travel_agent to replay"):
        evaluate(travel_agent, CASES, store=store, replay_tools="latest")


def test_replay_options_without_a_run_to_replay_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="apply only to a replay"):
        evaluate(travel_agent, CASES, store=tmp_path / "runs.db", replay_fallthrough=True)
    with pytest.raises(ConfigError, match="in-order or any-order, got 'sorted'"):
        evaluate(
            travel_agent, CASES, store=tmp_path / "runs.db", replay_tools="x", replay_match="sorted"
        )


def test_a_replay_is_judged_as_the_recorded_run_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    store = tmp_path / "runs.db"
    with FakeOpenAI() as fake:
        # The judge's verdict follows what the trial shows it: the flight's price.
        fake.handler = lambda body: verdict(
            {"score": 1.0 if "at 101" in json.dumps(body) else 0.0, "reasoning": "read"}
        )
        judge = JudgeConfig(
            spec="openai:gpt-4o-mini",
            base_url=fake.base_url,
            cache_path=tmp_path / "judge.db",
        )
        RAN.clear()
        recorded = evaluate(
            travel_agent, CASES[:2], store=store, judge=judge, rubrics=["answer_relevance"]
        )
        asked = fake.request_count
        replayed = evaluate(
            travel_agent,
            CASES[:2],
            store=store,
            judge=judge,
            rubrics=["answer_relevance"],
            use_cache=False,
            replay_tools=recorded.run_id,
        )
        assert fake.request_count == 2 * asked  # judged afresh
    assert dict(RAN) == {"find_flight": 2, "book_flight": 2, "seat_map": 2, "weather": 2}
    judged = {
        k: v for k, v in scores_of(store, replayed.run_id).items() if k[2] == "answer_relevance"
    }
    assert sorted(value for value, _, _ in judged.values()) == [0.0, 1.0]
    assert judged == {
        k: v for k, v in scores_of(store, recorded.run_id).items() if k[2] == "answer_relevance"
    }


def test_a_call_a_case_mock_answers_keeps_the_replay_in_step(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    recorded = evaluate(reordering_agent, CASES[:1], store=store)  # weather, then the flight
    mocked = EvalCase(
        id=CASES[0].id, input=CASES[0].input, tool_mocks={"weather": {"result": "mocked sky"}}
    )
    RAN.clear()
    run = evaluate(reordering_agent, [mocked], store=store, replay_tools=recorded.run_id)
    (trial,) = [r.trial for r in run.results]
    assert sum(RAN.values()) == 0
    assert trial.failure is None
    assert [(c.name, c.mocked) for c in trial.tool_calls] == [
        ("weather", "mock"),
        ("find_flight", "replay"),
    ]
    assert (trial.output or "").endswith("; mocked sky")
