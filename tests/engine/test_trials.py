"""How one trial runs: answers read, tools recorded, failures classified, retries counted."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any

import pytest

import agenteval
from agenteval import AgentStep, EvalCase, FailureCause, ToolCall, Trial
from agenteval.engine.trials import RetryPolicy, run_trial

FAST_RETRY = RetryPolicy(max_retries=2, initial_wait_s=0.01, max_wait_s=0.05)
NO_RETRY = RetryPolicy(max_retries=0)


@agenteval.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@agenteval.tool
async def lookup_city(name: str) -> dict[str, Any]:
    """Look a city up."""
    await asyncio.sleep(0.001)
    if name == "Atlantis":
        raise KeyError(name)
    return {"name": name, "population": len(name) * 1000}


async def run(agent: Any, case: EvalCase | None = None, **kw: Any) -> Trial:
    kw.setdefault("timeout_s", None)
    kw.setdefault("retry", NO_RETRY)
    return await run_trial(agent, case or EvalCase(input="hi"), 0, **kw)


def provider_error(status: int, retry_after: str | None = None) -> Exception:
    """What the openai SDK raises for an HTTP status: the real class, built as the SDK builds
    it (infrastructure is recognised by type, never by a `status_code` attribute)."""
    httpx2 = pytest.importorskip("httpx2")
    openai = pytest.importorskip("openai")
    request = httpx2.Request("POST", "https://api.openai.com/v1/chat/completions")
    headers = {"retry-after": retry_after} if retry_after else {}
    response = httpx2.Response(status, request=request, headers=headers)
    cls = openai.RateLimitError if status == 429 else openai.InternalServerError
    error: Exception = cls(f"HTTP {status}", response=response, body=None)
    return error


class StatusError(Exception):
    """A class of the user's own that looks like an SDK's: a status and a Retry-After."""

    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code
        self.headers = {"retry-after": "0"}


async def test_a_sync_agent_returning_a_string() -> None:
    trial = await run(lambda text: f"echo {text}")
    assert trial.output == "echo hi"
    assert trial.failure is None
    assert trial.latency_s is not None and trial.working_latency_s is not None


async def test_a_sync_agent_runs_in_a_worker_thread_not_the_event_loop() -> None:
    seen: list[str] = []

    def agent(text: str) -> str:
        seen.append(threading.current_thread().name)
        return "ok"

    await run(agent)
    assert seen and seen[0] != threading.main_thread().name


async def test_tool_calls_are_recorded_in_order_with_results_and_errors() -> None:
    async def agent(text: str) -> str:
        total = add(2, b=3)
        city = await lookup_city("Paris")
        with contextlib.suppress(KeyError):
            await lookup_city("Atlantis")
        return f"{total} {city['population']}"

    trial = await run(agent)
    assert [c.name for c in trial.tool_calls] == ["add", "lookup_city", "lookup_city"]
    assert trial.tool_calls[0].arguments == {"a": 2, "b": 3}
    assert trial.tool_calls[0].result == 5
    assert trial.tool_calls[1].result == {"name": "Paris", "population": 5000}
    assert trial.tool_calls[2].error == "KeyError: 'Atlantis'"
    assert all(c.duration_s is not None and c.started_at is not None for c in trial.tool_calls)


async def test_tools_called_from_a_sync_agent_are_recorded_too() -> None:
    trial = await run(lambda text: str(add(1, 1)))
    assert [(c.name, c.result) for c in trial.tool_calls] == [("add", 2)]


async def test_concurrent_trials_never_mix_their_tool_calls() -> None:
    async def agent(text: str) -> str:
        for _ in range(3):
            await lookup_city(text)
            await asyncio.sleep(0)
        return text

    cases = [EvalCase(input=f"city{i}") for i in range(30)]
    trials = await asyncio.gather(*(run(agent, case) for case in cases))
    for case, trial in zip(cases, trials, strict=True):
        assert [c.arguments["name"] for c in trial.tool_calls] == [case.input] * 3


async def test_model_calls_are_summed_into_the_trials_usage() -> None:
    def agent(text: str) -> str:
        agenteval.record_model_call("m", input_tokens=10, output_tokens=3, duration_s=0.01)
        agenteval.record_model_call("m", input_tokens=5, output_tokens=2, cached_tokens=4)
        return "done"

    trial = await run(agent)
    assert (trial.usage.input_tokens, trial.usage.output_tokens) == (15, 5)
    assert trial.usage.cached_tokens == 4
    assert [m.model for m in trial.model_calls] == ["m", "m"]


async def test_an_agent_may_return_steps_a_mapping_or_a_trial() -> None:
    steps = [
        AgentStep(thought="look", tool_calls=[ToolCall(name="search", result=["a"])]),
        AgentStep(output="final"),
    ]
    from_steps = await run(lambda text: steps)
    assert from_steps.output == "final"
    assert [c.name for c in from_steps.tool_calls] == ["search"]

    from_mapping = await run(lambda text: {"output": "x", "tool_calls": [{"name": "t"}]})
    assert from_mapping.output == "x" and from_mapping.tool_calls[0].name == "t"

    from_trial = await run(lambda text: Trial(output="y"))
    assert from_trial.output == "y"


async def test_an_exception_in_the_agent_is_an_agent_error_and_is_not_retried() -> None:
    calls = 0

    def agent(text: str) -> str:
        nonlocal calls
        calls += 1
        raise ValueError("boom")

    trial = await run(agent, retry=FAST_RETRY)
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.AGENT_ERROR
    assert trial.failure.message == "boom"
    assert trial.failure.error_type == "ValueError"
    assert calls == 1 and trial.retries == {}


async def test_a_trial_past_its_timeout_fails_with_timeout() -> None:
    async def agent(text: str) -> str:
        await asyncio.sleep(5)
        return "late"

    trial = await run(agent, timeout_s=0.05)
    assert trial.failure is not None and trial.failure.cause is FailureCause.TIMEOUT
    assert "0.05 s" in trial.failure.message


async def test_no_answer_and_garbage_answers_are_told_apart() -> None:
    empty = await run(lambda text: None)
    assert empty.failure is not None and empty.failure.cause is FailureCause.NO_RESPONSE
    blank = await run(lambda text: "   ")
    assert blank.failure is not None and blank.failure.cause is FailureCause.NO_RESPONSE
    number = await run(lambda text: 42)
    assert number.failure is not None and number.failure.cause is FailureCause.INVALID_OUTPUT
    mapping = await run(lambda text: {"answer": "x"})
    assert mapping.failure is not None and mapping.failure.cause is FailureCause.INVALID_OUTPUT


@pytest.mark.parametrize(
    ("status", "cause"),
    [
        (429, FailureCause.RATE_LIMITED),
        (503, FailureCause.PROVIDER_ERROR),
        (None, FailureCause.CONNECTION_ERROR),
    ],
)
async def test_infrastructure_failures_are_retried_and_counted_by_reason(
    status: int | None, cause: FailureCause
) -> None:
    error = ConnectionResetError("reset") if status is None else provider_error(status)
    attempts = 0

    def agent(text: str) -> str:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise error
        return "finally"

    trial = await run(agent, retry=FAST_RETRY)
    assert trial.output == "finally" and trial.failure is None
    assert trial.attempts == 3
    assert trial.retries == {cause.value: 2}


async def test_retries_that_run_out_end_in_the_cause() -> None:
    error = provider_error(429)

    def agent(text: str) -> str:
        raise error

    trial = await run(agent, retry=FAST_RETRY)
    assert trial.failure is not None and trial.failure.cause is FailureCause.RATE_LIMITED
    assert trial.attempts == 3 and trial.retries == {"rate_limited": 2}


@pytest.mark.parametrize("status", [429, 503])
async def test_a_status_on_a_class_of_the_users_own_is_the_agents_error(status: int) -> None:
    def agent(text: str) -> str:
        raise StatusError(status)

    trial = await run(agent, retry=FAST_RETRY)
    assert trial.failure is not None and trial.failure.cause is FailureCause.AGENT_ERROR
    assert trial.attempts == 1 and trial.retries == {}


async def test_a_timeout_is_retried() -> None:
    attempts = 0

    async def agent(text: str) -> str:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            await asyncio.sleep(5)
        return "second time"

    trial = await run(agent, timeout_s=0.05, retry=FAST_RETRY)
    assert trial.output == "second time"
    assert trial.retries == {"timeout": 1}


async def test_backoff_counts_in_total_latency_but_not_in_latency_excluding_waits() -> None:
    attempts = 0

    error = provider_error(429, retry_after="0.3")

    def agent(text: str) -> str:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise error
        return "ok"

    trial = await run(agent, retry=RetryPolicy(max_retries=1, max_wait_s=1.0))
    assert trial.latency_s is not None and trial.working_latency_s is not None
    # The provider's Retry-After (0.3 s) was waited, and left out of the working time.
    assert trial.latency_s - trial.working_latency_s >= 0.3


async def test_waits_the_agent_reports_are_left_out_of_latency_excluding_waits() -> None:
    def agent(text: str) -> str:
        import time

        agenteval.record_retry("rate_limited")
        time.sleep(0.2)
        agenteval.record_wait(0.2)
        return "ok"

    trial = await run(agent)
    assert trial.retries == {"rate_limited": 1}
    assert trial.latency_s is not None and trial.working_latency_s is not None
    assert trial.latency_s - trial.working_latency_s >= 0.19


async def test_a_multi_turn_case_calls_the_agent_once_per_turn_with_the_conversation() -> None:
    seen: list[Any] = []

    def agent(messages: list[dict[str, str]]) -> str:
        seen.append(list(messages))
        return f"answer {len(messages)}"

    case = EvalCase(conversation=[{"input": "first"}, {"input": "second"}])
    trial = await run(agent, case)
    assert trial.output == "answer 3"
    assert seen[1] == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "answer 1"},
        {"role": "user", "content": "second"},
    ]
    assert trial.metadata["turn_outputs"] == ["answer 1", "answer 3"]


async def test_a_sync_agent_that_never_returns_times_out_and_holds_nothing_up() -> None:
    import threading as th

    never = th.Event()

    def stuck(text: str) -> str:
        never.wait()
        return "never"

    trial = await run(stuck, timeout_s=0.1)
    assert trial.failure is not None and trial.failure.cause is FailureCause.TIMEOUT
    # The stuck thread holds no slot: the next sync trial runs at once.
    assert (await run(lambda text: "next", timeout_s=0.5)).output == "next"
    never.set()


async def test_sys_exit_in_the_agent_is_an_agent_error_not_the_end_of_the_run() -> None:
    def agent(text: str) -> str:
        raise SystemExit(3)

    trial = await run(agent)
    assert trial.failure is not None and trial.failure.cause is FailureCause.AGENT_ERROR
    assert trial.failure.error_type == "SystemExit"
