"""The seam of tool mocks and environment state: `@agenteval.tool` answered by a case's mock,
a run's mock, a sequence, an injected error, `agenteval.state()` per trial."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase, FailureCause, evaluate

CALLS: list[str] = []


@agenteval.tool
def get_weather(city: str) -> dict[str, Any]:
    CALLS.append(city)
    return {"celsius": 99}


@agenteval.tool
async def charge_card(amount: int) -> dict[str, Any]:
    CALLS.append(f"charge {amount}")
    return {"status": "real"}


def weather_agent(prompt: str) -> str:
    try:
        return str(get_weather(prompt))
    except Exception as exc:
        return f"sorry: {type(exc).__name__}: {exc}"


async def charging_agent(prompt: str) -> str:
    answers = []
    for _ in range(3):
        try:
            answers.append(str(await charge_card(10)))
        except TimeoutError:
            answers.append("timeout")
    agenteval.state()["charged"] = agenteval.state().get("charged", 0) + 1
    return "; ".join(answers)


def trials_of(run: Any) -> list[Any]:
    return [result.trial for result in run.results]


def test_a_case_mock_answers_by_rule_and_the_tool_never_runs(tmp_path: Path) -> None:
    CALLS.clear()
    mocks = {
        "get_weather": [
            {"when": {"city": "Paris"}, "result": {"celsius": 14}},
            {"when": {"city": "Atlantis"}, "error": "UnknownCityError: no such city"},
            {"result": {"celsius": 20}},
        ]
    }
    cases = [
        EvalCase(id=city, input=city, tool_mocks=mocks) for city in ("Paris", "Atlantis", "Rome")
    ]
    run = evaluate(weather_agent, cases, store=tmp_path / "runs.db")
    by_case = {t.case_id: t for t in trials_of(run)}
    assert CALLS == []
    assert by_case["Paris"].output == "{'celsius': 14}"
    assert by_case["Paris"].tool_calls[0].mocked == "mock"
    assert by_case["Atlantis"].output == "sorry: UnknownCityError: no such city"
    assert by_case["Atlantis"].tool_calls[0].error == "UnknownCityError: no such city"
    assert by_case["Rome"].output == "{'celsius': 20}"


def test_an_unmocked_call_runs_for_real_unless_mocks_only(tmp_path: Path) -> None:
    CALLS.clear()
    mocks = {"get_weather": {"when": {"city": "Paris"}, "result": {"celsius": 14}}}
    cases = [
        EvalCase(id="real", input="Rome", tool_mocks=mocks),
        EvalCase(id="only", input="Rome", tool_mocks=mocks, tool_mocks_only=True),
    ]
    run = evaluate(weather_agent, cases, store=tmp_path / "runs.db")
    by_case = {t.case_id: t for t in trials_of(run)}
    assert CALLS == ["Rome"]
    assert by_case["real"].tool_calls[0].mocked is None
    assert by_case["real"].failure is None
    only = by_case["only"]
    # The agent caught the error, and still the harness fails the trial.
    assert only.output.startswith("sorry: UnmockedToolError")
    assert only.failure is not None and only.failure.cause is FailureCause.UNMOCKED_TOOL


def test_a_run_mock_sequence_per_trial_with_state(tmp_path: Path) -> None:
    CALLS.clear()
    case = EvalCase(id="c", input="pay", initial_state={"charged": 5}, expected_state={})
    run = evaluate(
        charging_agent,
        [case],
        trials=3,
        concurrency=3,
        store=tmp_path / "runs.db",
        tool_mocks={"charge_card": {"sequence": [{"error": "timeout"}, {"result": {"ok": 1}}]}},
    )
    trials = trials_of(run)
    assert CALLS == []
    assert len(trials) == 3
    for trial in trials:
        assert trial.output == "timeout; {'ok': 1}; {'ok': 1}"
        assert trial.state == {"charged": 6}  # each trial from the initial state, alone
        assert [call.mocked for call in trial.tool_calls] == ["mock"] * 3


def test_an_injected_error_the_agent_lets_out_is_its_own_failure(tmp_path: Path) -> None:
    def careless(prompt: str) -> str:
        return str(get_weather(prompt))

    case = EvalCase(id="c", input="x", tool_mocks={"get_weather": {"error": "timeout"}})
    run = evaluate(careless, [case], store=tmp_path / "runs.db", retries=2)
    (trial,) = trials_of(run)
    assert trial.failure is not None and trial.failure.cause is FailureCause.AGENT_ERROR
    assert trial.attempts == 1


def test_state_outside_a_trial_says_so() -> None:
    with pytest.raises(RuntimeError, match="state of the trial running"):
        agenteval.state()


def test_mocked_arguments_are_checked_against_the_schema(tmp_path: Path) -> None:
    def wrong(prompt: str) -> str:
        try:
            return str(asyncio.run(charge_card("ten")))  # type: ignore[arg-type]
        except ValueError as exc:
            return f"refused: {exc}"

    case = EvalCase(id="c", input="x", tool_mocks={"charge_card": {"result": {"ok": 1}}})
    run = evaluate(wrong, [case], store=tmp_path / "runs.db")
    (trial,) = trials_of(run)
    assert trial.output.startswith("refused: charge_card: the arguments do not fit")


def test_tool_execution_leaves_out_the_errors_a_mock_injected(tmp_path: Path) -> None:
    injected = EvalCase(id="injected", input="x", tool_mocks={"get_weather": {"error": "timeout"}})
    run = evaluate(weather_agent, [injected], store=tmp_path / "runs.db")
    (result,) = run.results
    score = result.scores["tool_execution"]
    assert score.value is None
    assert "injected error" in (score.reason or "")
    real_error = EvalCase(id="real", input="x", tool_mocks={"charge_card": {"result": 1}})

    @agenteval.tool
    def broken(city: str) -> str:
        raise RuntimeError("down")

    def calls_broken(prompt: str) -> str:
        try:
            broken("x")
        except RuntimeError:
            return "sorry"
        return "never"

    run = evaluate(calls_broken, [real_error], store=tmp_path / "runs2.db")
    (result,) = run.results
    assert result.scores["tool_execution"].passed is False  # a real error still counts
