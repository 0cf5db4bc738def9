"""Resuming a mocked run keeps its mocks: the cases' (stored with the cases, a function given
as a `result` by its reference, loaded again) and the run's (stored in its settings). A
function that cannot be loaded again (a lambda, one defined inside another) is one clear
error naming the case, before anything runs; a function that raises answers the call with
its error."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase, RunStore, evaluate, evaluate_async
from agenteval.errors import DatasetError

REAL: list[str] = []


@agenteval.tool
def get_temperature(city: str) -> dict[str, Any]:
    REAL.append(city)
    raise RuntimeError("the real tool ran")


@agenteval.tool
def get_humidity(city: str) -> dict[str, Any]:
    REAL.append(city)
    raise RuntimeError("the real tool ran")


def celsius_of(city: str) -> dict[str, Any]:
    """A mock's result as a function of the call's arguments (top level: it loads again)."""
    return {"celsius": len(city)}


def no_such_city(city: str) -> dict[str, Any]:
    raise LookupError(f"no such city: {city}")


class Gate:
    """Holds the trial of `city` until the run is stopped: a run stopped midway."""

    def __init__(self, city: str) -> None:
        self.city = city
        self.closed = True
        self.reached = asyncio.Event()

    async def agent(self, city: str) -> str:
        if city == self.city and self.closed:
            self.reached.set()
            await asyncio.sleep(3600)
        try:
            temperature = get_temperature(city)
        except LookupError as exc:
            return f"error: {exc}"
        return f"{temperature['celsius']} / {get_humidity(city)['percent']}"


async def stopped_midway(gate: Gate, cases: Sequence[EvalCase], store: Path, **kw: Any) -> str:
    task = asyncio.create_task(evaluate_async(gate.agent, cases, store=store, concurrency=1, **kw))
    await gate.reached.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with RunStore(store) as runs:
        (row,) = runs.list_runs()
        assert row.status.value != "finished"
        return row.run_id


def test_resume_of_a_mocked_run_keeps_case_and_run_mocks(tmp_path: Path) -> None:
    REAL.clear()
    store = tmp_path / "runs.db"
    gate = Gate("Rome")
    cases = [
        EvalCase(id=city, input=city, tool_mocks={"get_temperature": {"result": celsius_of}})
        for city in ("Paris", "Rome", "Oslo")
    ]
    run_mocks = {"get_humidity": {"result": {"percent": 40}}}

    run_id = asyncio.run(stopped_midway(gate, cases, store, tool_mocks=run_mocks))
    with RunStore(store) as runs:
        stored = {case.id: case for case in runs.iter_cases(run_id)}
        settings = runs.get_info(run_id).settings
    assert stored["Rome"].model_dump(mode="json")["tool_mocks"] == {
        "get_temperature": {
            "result": {"agenteval.callable": f"{__name__}:celsius_of"},
        }
    }
    assert settings["tool_mocks"] == {"get_humidity": {"result": {"percent": 40}}}

    gate.closed = False
    resumed = evaluate(gate.agent, cases, store=store, resume=run_id)  # no mocks given again

    assert resumed.complete
    outputs = {result.case.id: result.trial.output for result in resumed.results}
    assert outputs == {"Paris": "5 / 40", "Rome": "4 / 40", "Oslo": "4 / 40"}
    assert REAL == []
    for result in resumed.results:
        assert [call.mocked for call in result.trial.tool_calls] == ["mock", "mock"]


def outer_function() -> Any:
    def inner(city: str) -> dict[str, Any]:
        return {"celsius": 1}

    return inner


@pytest.mark.parametrize(
    ("result", "why"),
    [
        (lambda city: {"celsius": 1}, "a lambda"),
        (outer_function(), "a function defined inside another"),
    ],
    ids=["lambda", "nested"],
)
def test_a_function_that_cannot_load_again_stops_the_resume_naming_the_case(
    tmp_path: Path, result: Any, why: str
) -> None:
    REAL.clear()
    store = tmp_path / "runs.db"
    gate = Gate("Rome")
    cases = [
        EvalCase(
            id="Paris", input="Paris", tool_mocks={"get_temperature": {"result": {"celsius": 3}}}
        ),
        EvalCase(id="Rome", input="Rome", tool_mocks={"get_temperature": {"result": result}}),
    ]
    run_id = asyncio.run(
        stopped_midway(gate, cases, store, tool_mocks={"get_humidity": {"result": {"percent": 1}}})
    )
    gate.closed = False

    with pytest.raises(DatasetError) as caught:
        evaluate(gate.agent, cases, store=store, resume=run_id)

    error = caught.value
    assert (error.case, error.field) == ("Rome", "tool_mocks.get_temperature")
    assert why in error.message and "cannot be loaded again" in error.message
    assert error.hint is not None and "top level of a module" in error.hint
    assert REAL == []


def test_a_function_result_that_raises_answers_the_call_with_its_error(tmp_path: Path) -> None:
    REAL.clear()
    case = EvalCase(
        id="Atlantis",
        input="Atlantis",
        tool_mocks={
            "get_temperature": {"result": no_such_city},
            "get_humidity": {"result": {"percent": 1}},
        },
    )
    gate = Gate("nowhere")

    run = evaluate(gate.agent, [case], store=tmp_path / "runs.db")

    (result,) = run.results
    assert result.trial.output == "error: no such city: Atlantis"
    (call,) = result.trial.tool_calls
    assert call.name == "get_temperature" and call.error is not None
    assert "no such city: Atlantis" in call.error
    assert REAL == []


def test_a_streamed_case_s_lambda_is_refused_before_the_first_trial(tmp_path: Path) -> None:
    REAL.clear()
    ran: list[str] = []

    def stream() -> Any:
        yield EvalCase(id="a", input="Paris", tool_mocks={"get_temperature": {"result": 1}})
        yield EvalCase(
            id="b", input="Rome", tool_mocks={"get_temperature": {"result": lambda city: 1}}
        )

    def agent(city: str) -> str:
        ran.append(city)
        return city

    with pytest.raises(DatasetError) as caught:
        evaluate(agent, stream(), store=tmp_path / "runs.db")

    assert (caught.value.case, caught.value.field) == ("b", "tool_mocks.get_temperature")
    assert "a lambda" in caught.value.message and "the stream's cases" in caught.value.message
    assert caught.value.hint is not None and "give the cases as a list" in caught.value.hint
    assert ran == []


def count_call(city: str) -> dict[str, Any]:
    """A function result that reads and changes the trial's own state."""
    state = agenteval.state()
    state["calls"] = state.get("calls", 0) + 1
    return {"celsius": state["calls"], "city": city}


def test_function_results_and_sequences_stay_per_trial_at_concurrency_8(tmp_path: Path) -> None:
    REAL.clear()

    async def agent(city: str) -> str:
        seen = []
        for _ in range(3):
            await asyncio.sleep(0)  # let the other trials interleave
            seen.append(get_temperature(city)["celsius"])
            seen.append(get_humidity(city)["percent"])
        return f"{city} {seen}"

    cases = [
        EvalCase(
            id=f"c{i}",
            input=f"city{i}",
            initial_state={"calls": 0},
            tool_mocks={
                "get_temperature": {"result": count_call},
                "get_humidity": {"sequence": [{"result": {"percent": n}} for n in (1, 2, 3)]},
            },
        )
        for i in range(16)
    ]

    run = evaluate(agent, cases, trials=2, concurrency=8, store=tmp_path / "runs.db")

    assert len(run.results) == 32
    for result in run.results:
        assert result.trial.output == f"{result.case.input} [1, 1, 2, 2, 3, 3]"
        assert result.trial.state == {"calls": 3}
    assert REAL == []


def test_a_run_mock_s_lambda_stops_the_resume_naming_the_run_s_mock(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    gate = Gate("Rome")
    cases = [EvalCase(id=city, input=city) for city in ("Paris", "Rome")]
    mocks = {
        "get_temperature": {"result": lambda city: {"celsius": 1}},
        "get_humidity": {"result": {"percent": 1}},
    }
    run_id = asyncio.run(stopped_midway(gate, cases, store, tool_mocks=mocks))
    gate.closed = False

    with pytest.raises(DatasetError) as caught:
        evaluate(gate.agent, cases, store=store, resume=run_id)

    error = caught.value
    assert (error.case, error.field) == (None, "tool_mocks.get_temperature")
    assert error.message.startswith("the run's mock of 'get_temperature' answers with")
    assert "a lambda" in error.message
