"""`error: timeout` and `error: rate_limited` are caught by the `except` clauses an agent's code
already has for its HTTP client, and one the agent lets out is its own failure."""

from __future__ import annotations

from pathlib import Path

import httpx
import requests

import agenteval
from agenteval import EvalCase, FailureCause, evaluate
from agenteval.agents.injected import InjectedError, injected_error, named_error


@agenteval.tool
def fetch_ticket(ticket: str) -> dict[str, str]:
    response = httpx.get(f"http://127.0.0.1:9/tickets/{ticket}")  # never runs: mocked
    response.raise_for_status()
    return dict(response.json())


def httpx_agent(prompt: str) -> str:
    try:
        return str(fetch_ticket(prompt))
    except httpx.TimeoutException:
        return "httpx timeout"
    except httpx.HTTPStatusError as exc:
        retry = exc.response.headers.get("Retry-After")
        return f"httpx status {exc.response.status_code}, retry after {retry}"


def requests_agent(prompt: str) -> str:
    try:
        return str(fetch_ticket(prompt))
    except requests.exceptions.Timeout:
        return "requests timeout"
    except requests.exceptions.HTTPError as exc:
        assert exc.response is not None
        return f"requests status {exc.response.status_code}"


def cases() -> list[EvalCase]:
    return [
        EvalCase(id=word, input="T-1", tool_mocks={"fetch_ticket": {"error": word}})
        for word in ("timeout", "rate_limited")
    ]


def outputs(agent: object, tmp_path: Path) -> dict[str, str | None]:
    run = evaluate(agent, cases(), store=tmp_path / "runs.db")
    return {r.trial.case_id: r.trial.output for r in run.results}


def test_the_agents_own_httpx_handlers_catch_the_injected_failures(tmp_path: Path) -> None:
    assert outputs(httpx_agent, tmp_path) == {
        "timeout": "httpx timeout",
        "rate_limited": "httpx status 429, retry after 1",
    }


def test_the_agents_own_requests_handlers_catch_the_injected_failures(tmp_path: Path) -> None:
    assert outputs(requests_agent, tmp_path) == {
        "timeout": "requests timeout",
        "rate_limited": "requests status 429",
    }


def test_a_timeout_is_pythons_timeout_error_too() -> None:
    exc = injected_error("timeout", "fetch_ticket")
    assert isinstance(exc, TimeoutError) and isinstance(exc, InjectedError)
    assert "fetch_ticket" in str(exc)


def test_a_named_error_reads_as_written() -> None:
    exc = named_error("UnknownCityError: no such city")
    assert type(exc).__name__ == "UnknownCityError" and str(exc) == "no such city"
    assert type(named_error("UnknownCityError: other")) is type(exc)
    plain = named_error("no such city: Atlantis")
    assert type(plain) is InjectedError and str(plain) == "no such city: Atlantis"


def test_an_injected_rate_limit_the_agent_lets_out_is_not_retried(tmp_path: Path) -> None:
    def careless(prompt: str) -> str:
        return str(fetch_ticket(prompt))

    run = evaluate(careless, cases(), store=tmp_path / "runs.db", retries=3)
    for result in run.results:
        assert result.trial.failure is not None
        assert result.trial.failure.cause is FailureCause.AGENT_ERROR
        assert result.trial.attempts == 1


def test_a_named_python_exception_is_that_exception_too() -> None:
    exc = named_error("ValueError: bad amount")
    assert isinstance(exc, ValueError) and isinstance(exc, InjectedError)
    assert str(exc) == "bad amount"
    assert isinstance(named_error("KeyError: "), KeyError)
    assert str(named_error("KeyError: ")) == ""


def test_an_agent_catching_value_error_catches_the_mocked_one(tmp_path: Path) -> None:
    def careful(prompt: str) -> str:
        try:
            return str(fetch_ticket(prompt))
        except ValueError as exc:
            return f"invalid ticket: {exc}"

    case = EvalCase(
        id="bad", input="T-?", tool_mocks={"fetch_ticket": {"error": "ValueError: no such id"}}
    )
    run = evaluate(careful, [case], store=tmp_path / "runs.db")
    (result,) = run.results
    assert result.trial.output == "invalid ticket: no such id"
    assert result.trial.tool_calls[0].error == "ValueError: no such id"
