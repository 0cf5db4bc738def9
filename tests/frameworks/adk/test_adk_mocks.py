"""Tool mocks, injected failures and environment state for a Google ADK agent: a real `LlmAgent`
with function tools on a scripted model, run through `agenteval.evaluate`, the tools' bodies
counting every real run (they must never run under a mock)."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.sessions import InMemorySessionService
from google.adk.tools import ToolContext
from google.genai import types
from tests.frameworks.adk.scripted import ScriptedModel

import agenteval
from agenteval.agents.frameworks.adk import AdkAgent
from agenteval.case import EvalCase
from agenteval.evalset.session import final_session_state_match
from agenteval.trace import FailureCause, Trial

REAL: list[str] = []
"""Every real run of a tool body, in order (none is expected under a mock)."""


def get_weather(city: str) -> dict[str, Any]:
    """The weather in `city`."""
    REAL.append(f"get_weather {city}")
    return {"celsius": 99, "real": True}


async def charge_card(amount: int) -> dict[str, Any]:
    """Charge `amount` to the card on file."""
    REAL.append(f"charge_card {amount}")
    return {"status": "charged for real"}


def create_ticket(title: str) -> str:
    """Open a support ticket and give its id."""
    REAL.append(f"create_ticket {title}")
    return "T-REAL"


def close_ticket(ticket: str) -> None:
    """Close a ticket."""
    REAL.append(f"close_ticket {ticket}")


def file_ticket(title: str, tool_context: ToolContext) -> str:
    """A real tool keeping its tickets in agenteval's environment state, and counting them in
    the session state as ADK tools do."""
    tickets = agenteval.state().setdefault("tickets", [])
    tickets.append({"title": title, "by": agenteval.state().get("user")})
    tool_context.state["filed"] = int(tool_context.state.get("filed", 0)) + 1
    return f"filed {title} for {agenteval.state().get('user')}"


class EchoingModel(ScriptedModel):
    """The scripted model, whose answer `ECHO` is replaced by the tool responses it was just
    sent (JSON): so a test sees what the model saw."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        async for response in super().generate_content_async(llm_request, stream):
            parts = response.content.parts if response.content else None
            if parts and parts[0].text == "ECHO":
                last = llm_request.contents[-1]
                seen = [
                    p.function_response.response
                    for p in last.parts or ()
                    if p.function_response is not None
                ]
                response.content = types.Content(
                    role="model", parts=[types.Part(text=json.dumps(seen, sort_keys=True))]
                )
            yield response


def agent_of(script: dict[str, list[Any]], **options: Any) -> LlmAgent:
    return LlmAgent(
        name="desk",
        model=EchoingModel(script=script),
        instruction="Help the customer.",
        tools=[get_weather, charge_card, create_ticket, close_ticket, file_ticket],
        **options,
    )


def report_error(tool: Any, args: Any, tool_context: Any, error: Exception) -> dict[str, Any]:
    """An agent's own `on_tool_error_callback`: the model is told what went wrong."""
    return {
        "error": f"{type(error).__name__}: {error}",
        "timeout": isinstance(error, TimeoutError),
    }


def trials(run: agenteval.Run) -> list[Trial]:
    return sorted((r.trial for r in run.results), key=lambda t: (t.case_id, t.trial))


@pytest.fixture(autouse=True)
def _no_real_runs_yet() -> None:
    REAL.clear()


TRIP = "Plan my trip"
TRIP_SCRIPT: dict[str, list[Any]] = {
    TRIP: [
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
        [("charge_card", {"amount": 10})],
        [("charge_card", {"amount": 10}), ("create_ticket", {"title": "trip"})],
        [("charge_card", {"amount": 10}), ("close_ticket", {"ticket": "T-1"})],
        "ECHO",
    ]
}
TRIP_MOCKS: dict[str, Any] = {
    "get_weather": [
        {"when": {"city": "Paris"}, "result": {"celsius": 14}},
        {"result": {"celsius": 20}},
    ],
    "charge_card": {
        "sequence": [
            {"result": {"status": "first"}},
            {"result": {"status": "again"}, "latency_s": 0.2},
        ]
    },
    "create_ticket": {"result": "T-1"},
    "close_ticket": {"result": None},
}


def test_mocks_answer_by_rule_sequence_and_latency_and_the_tools_never_run(
    tmp_path: Path,
) -> None:
    case = EvalCase(id="trip", input=TRIP, tool_mocks=TRIP_MOCKS, tool_mocks_only=True)
    run = agenteval.evaluate(agent_of(TRIP_SCRIPT), [case], store=tmp_path / "runs.db")
    (trial,) = trials(run)
    assert trial.failure is None, trial.failure
    assert REAL == []
    assert [(c.name, c.arguments, c.result) for c in trial.tool_calls] == [
        ("get_weather", {"city": "Paris"}, {"celsius": 14}),
        ("get_weather", {"city": "Rome"}, {"celsius": 20}),
        ("charge_card", {"amount": 10}, {"status": "first"}),
        ("charge_card", {"amount": 10}, {"status": "again"}),
        # A plain value is wrapped as ADK wraps what a function tool returns; None included.
        ("create_ticket", {"title": "trip"}, {"result": "T-1"}),
        ("charge_card", {"amount": 10}, {"status": "again"}),  # the last answer repeats
        ("close_ticket", {"ticket": "T-1"}, {"result": None}),
    ]
    assert [c.mocked for c in trial.tool_calls] == ["mock"] * 7
    assert all(c.error is None for c in trial.tool_calls)
    # The model was given the mocked answers (the last turn's two).
    assert json.loads(trial.output or "") == [{"status": "again"}, {"result": None}]
    # Two calls answered after a latency of 0.2 s each, in two model turns.
    assert trial.latency_s is not None and trial.latency_s >= 0.4


def test_an_injected_timeout_reaches_the_agents_error_handling_as_the_tools_error(
    tmp_path: Path,
) -> None:
    retry = [[("charge_card", {"amount": 5})], [("charge_card", {"amount": 5})], "ECHO"]
    mocks = {"charge_card": {"sequence": [{"error": "timeout"}, {"result": {"status": "ok"}}]}}
    case = EvalCase(id="pay", input="Pay", tool_mocks=mocks)
    retrying = agent_of({"Pay": retry}, on_tool_error_callback=report_error)
    run = agenteval.evaluate(retrying, [case], store=tmp_path / "runs.db")
    (trial,) = trials(run)
    assert trial.failure is None, trial.failure
    assert REAL == []
    first, second = trial.tool_calls
    message = "charge_card: the call timed out (injected by a tool mock)"
    # The call keeps the error the tool "raised", and what the agent's callback answered.
    assert first.error == f"InjectedTimeout: {message}"
    assert first.result == {"error": f"InjectedTimeout: {message}", "timeout": True}
    assert second.result == {"status": "ok"} and second.error is None
    assert [c.mocked for c in trial.tool_calls] == ["mock", "mock"]
    assert json.loads(trial.output or "") == [{"status": "ok"}]

    # Asked once more, the model is seen getting the error as the tool's response.
    echoing = agent_of({"Pay": [retry[0], "ECHO"]}, on_tool_error_callback=report_error)
    run = agenteval.evaluate(echoing, [case], store=tmp_path / "runs.db")
    (trial,) = trials(run)
    assert json.loads(trial.output or "") == [
        {"error": f"InjectedTimeout: {message}", "timeout": True}
    ]


def test_an_injected_error_nothing_handles_fails_the_trial_as_the_tools_own(
    tmp_path: Path,
) -> None:
    script = {"Pay": [[("get_weather", {"city": "Oslo"}), ("charge_card", {"amount": 5})], "no"]}
    mocks = {
        "charge_card": {"error": "CardDeclined: insufficient funds"},
        "get_weather": {"result": {"celsius": 3}},
    }
    run = agenteval.evaluate(
        agent_of(script),
        [EvalCase(id="pay", input="Pay", tool_mocks=mocks)],
        store=tmp_path / "runs.db",
        retries=2,
    )
    (trial,) = trials(run)
    assert REAL == []
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.AGENT_ERROR
    # What ADK lets out of a raising tool, not its plugin manager's wrapper around it.
    assert trial.failure.error_type == "CardDeclined"
    assert trial.failure.message == "insufficient funds"
    assert trial.attempts == 1  # the case's own scenario: never retried
    calls = {c.name: c for c in trial.tool_calls}
    assert calls["charge_card"].error == "CardDeclined: insufficient funds"
    assert calls["get_weather"].result == {"celsius": 3}


def test_an_unmocked_call_fails_a_mocks_only_trial_even_when_the_agent_goes_on(
    tmp_path: Path,
) -> None:
    script = {
        "Weather and pay": [
            [("get_weather", {"city": "Lima"})],
            [("charge_card", {"amount": 1})],
            "ECHO",
        ]
    }
    mocks = {"get_weather": {"result": {"celsius": 18}}}
    cases = [
        EvalCase(id="only", input="Weather and pay", tool_mocks=mocks, tool_mocks_only=True),
        EvalCase(id="real", input="Weather and pay", tool_mocks=mocks),
    ]
    run = agenteval.evaluate(
        agent_of(script, on_tool_error_callback=report_error), cases, store=tmp_path / "runs.db"
    )
    only, real = trials(run)
    # The case allowing real calls ran the unmocked tool; the mocks-only one never did.
    assert REAL == ["charge_card 1"]
    assert real.failure is None
    assert [c.mocked for c in real.tool_calls] == ["mock", None]
    assert real.tool_calls[1].result == {"status": "charged for real"}
    # The agent's callback answered the refusal and the model went on; the harness saw it.
    assert only.failure is not None
    assert only.failure.cause is FailureCause.UNMOCKED_TOOL
    assert "charge_card(amount=1) has no mock" in only.failure.message
    assert "UnmockedToolError" in (only.output or "")
    assert only.tool_calls[1].error is not None
    assert only.tool_calls[1].error.startswith("UnmockedToolError: charge_card(amount=1)")


def test_mocked_arguments_outside_the_declared_schema_are_refused_as_the_tool(
    tmp_path: Path,
) -> None:
    script = {"Bad": [[("get_weather", {"town": "Paris"})], "ECHO"]}
    case = EvalCase(id="bad", input="Bad", tool_mocks={"get_weather": {"result": {"celsius": 1}}})
    run = agenteval.evaluate(
        agent_of(script, on_tool_error_callback=report_error), [case], store=tmp_path / "runs.db"
    )
    (trial,) = trials(run)
    assert REAL == []
    (call,) = trial.tool_calls
    assert call.error is not None
    assert call.error.startswith("ToolArgumentsError: get_weather: the arguments do not fit")
    (seen,) = json.loads(trial.output or "")
    assert "'city' is a required property" in seen["error"]

    # With nothing to handle it, it fails the trial as the tool's exception would.
    run = agenteval.evaluate(agent_of(script), [case], store=tmp_path / "runs2.db")
    (trial,) = trials(run)
    assert trial.failure is not None and trial.failure.error_type == "ToolArgumentsError"


STATE_SCRIPT: dict[str, list[Any]] = {
    "Pay and file": [
        [("charge_card", {"amount": 30})],
        [("file_ticket", {"title": "refund"})],
        [("file_ticket", {"title": "again"})],
        "Done.",
    ]
}


def test_initial_state_set_state_and_agenteval_state_are_the_session_state(
    tmp_path: Path,
) -> None:
    services: list[InMemorySessionService] = []

    def service() -> InMemorySessionService:
        services.append(InMemorySessionService())
        return services[-1]

    final = {
        "user": "ann",
        "tier": "gold",
        "balance": 70,
        "charged": True,
        "tickets": [{"title": "refund", "by": "ann"}, {"title": "again", "by": "ann"}],
        "filed": 2,
    }
    case = EvalCase(
        id="state",
        input="Pay and file",
        # The case's initial state wins over session_input's on a key both give.
        initial_state={"user": "ann", "balance": 100},
        metadata={
            "session_input": {"state": {"user": "bob", "tier": "gold"}},
            "final_session_state": final,
        },
        expected_state=final,
        tool_mocks={
            "charge_card": {
                "result": {"status": "ok"},
                "set_state": {"balance": 70, "charged": True},
            }
        },
    )
    agent = AdkAgent(agent_of(STATE_SCRIPT), session_service=service)
    run = agenteval.evaluate(
        agent, [case], store=tmp_path / "runs.db", scorers=[final_session_state_match]
    )
    (result,) = run.results
    trial = result.trial
    assert trial.failure is None, trial.failure
    assert REAL == []
    assert trial.state == final
    assert trial.metadata["session_state"] == final
    assert result.scores["final_session_state_match"].passed is True
    assert [c.result for c in trial.tool_calls[1:]] == [
        {"result": "filed refund for ann"},
        {"result": "filed again for ann"},
    ]
    # ADK's own session holds the same state, reached through its events' state deltas.
    (svc,) = services
    (listed,) = agenteval_sessions(svc)
    assert listed.state == final
    deltas = [e.actions.state_delta for e in listed.events if e.actions and e.actions.state_delta]
    assert {"balance": 70, "charged": True} in deltas


def agenteval_sessions(service: InMemorySessionService) -> list[Any]:
    import asyncio

    async def read() -> list[Any]:
        listed = await service.list_sessions(app_name="EvaluationGenerator")
        return [
            await service.get_session(app_name=s.app_name, user_id=s.user_id, session_id=s.id)
            for s in listed.sessions
        ]

    return asyncio.run(read())


def test_run_level_mocks_apply_and_a_cases_own_mock_wins(tmp_path: Path) -> None:
    script = {
        "Weather": [[("get_weather", {"city": "Oslo"}), ("create_ticket", {"title": "x"})], "ECHO"]
    }
    cases = [
        EvalCase(id="own", input="Weather", tool_mocks={"get_weather": {"result": {"celsius": 1}}}),
        EvalCase(id="run", input="Weather"),
    ]
    run = agenteval.evaluate(
        agent_of(script),
        cases,
        store=tmp_path / "runs.db",
        tool_mocks={"get_weather": {"result": {"celsius": 2}}, "create_ticket": {"result": "T-9"}},
    )
    own, by_run = trials(run)
    assert REAL == []
    assert [c.result for c in own.tool_calls] == [{"celsius": 1}, {"result": "T-9"}]
    assert [c.result for c in by_run.tool_calls] == [{"celsius": 2}, {"result": "T-9"}]
    assert all(c.mocked == "mock" for t in (own, by_run) for c in t.tool_calls)


def test_the_agents_own_before_tool_guard_still_runs_before_a_mock(tmp_path: Path) -> None:
    def guard(tool: Any, args: Any, tool_context: Any) -> dict[str, Any] | None:
        if tool.name == "charge_card" and args.get("amount", 0) > 100:
            return {"error": "over the limit"}
        return None

    script = {"Pay": [[("charge_card", {"amount": 500}), ("charge_card", {"amount": 5})], "ECHO"]}
    case = EvalCase(
        id="guard",
        input="Pay",
        tool_mocks={
            "charge_card": {
                "sequence": [{"result": {"status": "ok"}}, {"result": {"status": "second"}}]
            }
        },
    )
    run = agenteval.evaluate(
        agent_of(script, before_tool_callback=guard), [case], store=tmp_path / "runs.db"
    )
    (trial,) = trials(run)
    refused, paid = trial.tool_calls
    assert refused.result == {"error": "over the limit"}
    assert refused.mocked is None  # the guard answered it, not the mock
    # The refused call took no place in the sequence.
    assert paid.result == {"status": "ok"} and paid.mocked == "mock"


def test_a_transfer_still_runs_in_a_mocks_only_case(tmp_path: Path) -> None:
    helper = LlmAgent(
        name="helper",
        model=EchoingModel(
            model="scripted-helper",
            script={"Weather?": [[("get_weather", {"city": "Rome"})], "ECHO"]},
        ),
        description="Looks up the weather.",
        tools=[get_weather],
    )
    root = LlmAgent(
        name="root",
        model=EchoingModel(
            script={"Weather?": [[("transfer_to_agent", {"agent_name": "helper"})]]}
        ),
        sub_agents=[helper],
    )
    case = EvalCase(
        id="team",
        input="Weather?",
        tool_mocks={"get_weather": {"result": {"celsius": 22}}},
        tool_mocks_only=True,
    )
    run = agenteval.evaluate(root, [case], store=tmp_path / "runs.db")
    (trial,) = trials(run)
    assert trial.failure is None, trial.failure
    assert trial.node_visits == ["root", "helper"]
    assert [(c.name, c.mocked) for c in trial.tool_calls] == [
        ("transfer_to_agent", None),
        ("get_weather", "mock"),
    ]
    assert json.loads(trial.output or "") == [{"celsius": 22}]


def test_concurrent_trials_keep_their_own_state_and_sequence_position(tmp_path: Path) -> None:
    people = ["ann", "bob", "cy", "dee"]
    script = {
        f"Pay for {who}": [
            [("charge_card", {"amount": 1})],
            [("charge_card", {"amount": 1})],
            [("file_ticket", {"title": who})],
            [("charge_card", {"amount": 1})],
            "ECHO",
        ]
        for who in people
    }
    cases = [
        EvalCase(
            id=who,
            input=f"Pay for {who}",
            initial_state={"user": who},
            tool_mocks={
                "charge_card": {
                    "sequence": [
                        {"result": {"n": 1, "who": who}, "latency_s": 0.01},
                        {"result": {"n": 2, "who": who}, "set_state": {"paid": who}},
                        {"result": {"n": 3, "who": who}},
                    ]
                }
            },
        )
        for who in people
    ]
    run = agenteval.evaluate(
        agent_of(script), cases, store=tmp_path / "runs.db", trials=3, concurrency=8
    )
    done = trials(run)
    assert len(done) == 12
    assert REAL == []
    for trial in done:
        who = trial.case_id
        assert trial.failure is None, trial.failure
        assert [c.result for c in trial.tool_calls] == [
            {"n": 1, "who": who},
            {"n": 2, "who": who},
            {"result": f"filed {who} for {who}"},
            {"n": 3, "who": who},
        ]
        assert trial.state == {
            "user": who,
            "paid": who,
            "tickets": [{"title": who, "by": who}],
            "filed": 1,
        }
        assert trial.metadata["session_state"] == trial.state


def test_a_failed_trials_state_is_the_session_state_it_reached(tmp_path: Path) -> None:
    script = {
        "File and pay": [[("file_ticket", {"title": "first"})], [("charge_card", {"amount": 9})]]
    }
    case = EvalCase(
        id="fails",
        input="File and pay",
        initial_state={"user": "eve"},
        tool_mocks={"charge_card": {"error": "CardDeclined: no", "set_state": {"never": True}}},
    )
    run = agenteval.evaluate(agent_of(script), [case], store=tmp_path / "runs.db")
    (trial,) = trials(run)
    assert trial.failure is not None and trial.failure.error_type == "CardDeclined"
    # What the session holds when the run stopped: the failed call's delta never reached it.
    assert trial.state == {"user": "eve", "tickets": [{"title": "first", "by": "eve"}], "filed": 1}


def test_a_replayed_run_answers_every_call_and_the_tools_never_run() -> None:
    import asyncio

    from agenteval.agents.environment import EnvironmentPlan, ReplayBook
    from agenteval.engine.trials import TrialRunner
    from agenteval.retry import RetryPolicy

    helper = LlmAgent(
        name="helper",
        model=EchoingModel(
            model="scripted-helper",
            script={
                "Book it": [
                    [("get_weather", {"city": "Rome"}), ("create_ticket", {"title": "Rome"})],
                    "ECHO",
                ]
            },
        ),
        description="Books trips.",
        tools=[get_weather, create_ticket],
    )
    root = LlmAgent(
        name="root",
        model=EchoingModel(script={"Book it": [[("transfer_to_agent", {"agent_name": "helper"})]]}),
        sub_agents=[helper],
    )
    agent = AdkAgent.of(root)
    case = EvalCase(id="book", input="Book it")

    async def play(plan: EnvironmentPlan | None) -> Trial:
        runner = TrialRunner.of(agent, timeout_s=None, retry=RetryPolicy(), environment=plan)
        return await runner.run(case, 0)

    recorded = asyncio.run(play(None))
    assert recorded.failure is None, recorded.failure
    assert REAL == ["get_weather Rome", "create_ticket Rome"]
    REAL.clear()

    async def book(case_id: str, index: int) -> ReplayBook:
        return ReplayBook(recorded.tool_calls, run_id="recorded-run")

    replayed = asyncio.run(play(EnvironmentPlan(replay=book)))
    assert replayed.failure is None, replayed.failure
    assert REAL == []
    assert [(c.name, c.arguments, c.result) for c in replayed.tool_calls] == [
        (c.name, c.arguments, c.result) for c in recorded.tool_calls
    ]
    # The transfer ran again (it moves the run to the helper); the helper's calls were replayed.
    assert [c.mocked for c in replayed.tool_calls] == [None, "replay", "replay"]
    assert replayed.output == recorded.output


def test_agenteval_state_in_a_tool_is_the_session_state_with_nothing_mocked(
    tmp_path: Path,
) -> None:
    script = {"File": [[("file_ticket", {"title": "lost card"})], "Filed."]}
    case = EvalCase(id="plain", input="File", metadata={"session_input": {"state": {"user": "al"}}})
    run = agenteval.evaluate(agent_of(script), [case], store=tmp_path / "runs.db")
    (trial,) = trials(run)
    assert trial.failure is None, trial.failure
    # The tool read session_input's state through agenteval.state(), and its write reached it.
    assert trial.tool_calls[0].result == {"result": "filed lost card for al"}
    final = {"user": "al", "tickets": [{"title": "lost card", "by": "al"}], "filed": 1}
    assert trial.metadata["session_state"] == final
    assert trial.state == final


def test_an_apps_error_plugin_answers_an_injected_error_and_the_call_keeps_it(
    tmp_path: Path,
) -> None:
    from google.adk.apps import App
    from google.adk.plugins import ReflectAndRetryToolPlugin

    script = {"Pay": [[("charge_card", {"amount": 5})], [("charge_card", {"amount": 5})], "Paid."]}
    app = App(
        name="desk_app",
        root_agent=agent_of(script),
        plugins=[ReflectAndRetryToolPlugin(max_retries=2)],
    )
    mocks = {"charge_card": {"sequence": [{"error": "rate_limited"}, {"result": {"status": "ok"}}]}}
    run = agenteval.evaluate(
        app, [EvalCase(id="pay", input="Pay", tool_mocks=mocks)], store=tmp_path / "runs.db"
    )
    (trial,) = trials(run)
    assert trial.failure is None, trial.failure
    assert trial.output == "Paid."
    first, second = trial.tool_calls
    # ADK's plugin answered the model with its reflection guidance, and the call keeps its error.
    assert (
        first.error
        == "InjectedRateLimit: charge_card: 429 Too Many Requests (injected by a tool mock)"
    )
    assert "429 Too Many Requests" in json.dumps(first.result)
    assert second.result == {"status": "ok"}
    assert REAL == []


def test_a_toolsets_tool_is_mocked_and_checked_against_the_schema_adk_offered(
    tmp_path: Path,
) -> None:
    from google.adk.tools import FunctionTool
    from google.adk.tools.base_toolset import BaseToolset

    class WeatherServer(BaseToolset):
        """Tools listed only when a run asks (as an MCP server's)."""

        async def get_tools(self, readonly_context: Any = None) -> list[Any]:
            return [FunctionTool(get_weather)]

    agent = LlmAgent(
        name="mcp_agent",
        model=EchoingModel(
            script={
                "ok": [[("get_weather", {"city": "Oslo"})], "ECHO"],
                "bad": [[("get_weather", {"city": 3})], "ECHO"],
            }
        ),
        tools=[WeatherServer()],
        on_tool_error_callback=report_error,
    )
    mocks = {"get_weather": {"result": {"celsius": -2}}}
    cases = [
        EvalCase(id="ok", input="ok", tool_mocks=mocks),
        EvalCase(id="bad", input="bad", tool_mocks=mocks),
    ]
    bad, ok = trials(agenteval.evaluate(agent, cases, store=tmp_path / "runs.db"))
    assert REAL == []
    assert json.loads(ok.output or "") == [{"celsius": -2}]
    assert ok.tool_calls[0].mocked == "mock"
    (seen,) = json.loads(bad.output or "")
    assert seen["error"].startswith("ToolArgumentsError: get_weather: the arguments do not fit")
    assert "city: 3 is not of type 'string'" in seen["error"]
