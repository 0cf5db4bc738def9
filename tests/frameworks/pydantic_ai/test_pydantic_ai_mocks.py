"""Tool mocks, injected failures and environment state on a real pydantic-ai `Agent` (driven by
a scripted `FunctionModel`): the mock answers where the tool would run, the tool never runs, and
pydantic-ai (its validation, its retries, the agent's own capabilities) handles the answer as
the tool's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.toolsets import FunctionToolset
from tests.frameworks.pydantic_ai.scripted import Ledger, ledger_agent
from tests.frameworks.pydantic_ai.scripted_desk import DeskAgent, script, seen

import agenteval
from agenteval import EvalCase, FailureCause, RunStore
from agenteval.agents.environment import EnvironmentPlan, ReplayBook
from agenteval.agents.frameworks.pydantic_ai import PydanticAIAgent
from agenteval.case import Invocation
from agenteval.engine.trials import TrialRunner
from agenteval.retry import RetryPolicy
from agenteval.run import TrialResult
from agenteval.trace import Trial


def results(store: Path) -> dict[tuple[str, int], TrialResult]:
    """Every trial of the store's latest run, read back from the SQLite file."""
    with RunStore(store) as runs:
        run_id = runs.resolve_run_id("latest")
        return {(r.case.id, r.trial.trial): r for r in runs.iter_results(run_id)}


def only(store: Path) -> TrialResult:
    (result,) = results(store).values()
    return result


WEATHER_RULES = [
    {"when": {"city": "Paris"}, "result": {"celsius": 14, "sky": "cloudy"}},
    {"when": {"city": "Atlantis"}, "error": "UnknownCityError: no such city"},
    {"result": {"celsius": 20}},
]


def test_rules_answer_in_place_of_the_tool_which_never_runs(tmp_path: Path) -> None:
    desk = DeskAgent(handles_errors=True)
    store = tmp_path / "runs.db"
    calls = [("get_weather", {"city": c}) for c in ("Paris", "Atlantis", "Rome")]
    case = EvalCase(id="rules", input=script(calls), tool_mocks={"get_weather": WEATHER_RULES})
    agenteval.evaluate(desk.agent, [case], store=store)
    trial = only(store).trial
    assert desk.ran == []
    assert trial.failure is None
    # What the model saw: the results, and the injected error as the agent's own capability
    # answered it (a retry naming the error), as if the tool had raised it.
    assert seen(trial.output) == [
        ["get_weather", "success", {"celsius": 14, "sky": "cloudy"}],
        ["get_weather", "retried", "UnknownCityError: no such city"],
        ["get_weather", "success", {"celsius": 20}],
    ]
    assert [(c.arguments, c.result, c.error, c.mocked) for c in trial.tool_calls] == [
        ({"city": "Paris"}, {"celsius": 14, "sky": "cloudy"}, None, "mock"),
        ({"city": "Atlantis"}, None, "UnknownCityError: no such city", "mock"),
        ({"city": "Rome"}, {"celsius": 20}, None, "mock"),
    ]
    assert trial.retries == {"tool_retry": 1}


def test_a_call_no_rule_applies_to_runs_the_real_tool(tmp_path: Path) -> None:
    desk = DeskAgent()
    store = tmp_path / "runs.db"
    mocks = {"get_weather": {"when": {"city": "Paris"}, "result": "mocked"}}
    calls = [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]
    case = EvalCase(id="partial", input=script(calls), tool_mocks=mocks)
    agenteval.evaluate(desk.agent, [case], store=store)
    trial = only(store).trial
    assert desk.ran == ["get_weather Oslo"]
    assert [(c.result, c.mocked) for c in trial.tool_calls] == [
        ("mocked", "mock"),
        ("Oslo: live", None),
    ]


def test_a_sequence_with_an_injected_timeout_the_agent_retries(tmp_path: Path) -> None:
    """`charge_card` times out first: the agent's capability turns the `TimeoutError` into a
    `ModelRetry`, the model charges again, and the sequence's next answer (the last, which
    repeats) answers."""
    desk = DeskAgent(handles_errors=True)
    store = tmp_path / "runs.db"
    mocks = {
        "charge_card": {
            "sequence": [{"error": "timeout"}, {"result": {"status": "ok"}, "latency_s": 0.01}]
        }
    }
    charge = [("charge_card", {"amount": 10})]
    case = EvalCase(id="seq", input=script(charge, charge, charge), tool_mocks=mocks)
    agenteval.evaluate(desk.agent, [case], store=store)
    trial = only(store).trial
    assert desk.ran == []
    assert trial.failure is None
    timed_out = "InjectedTimeout: charge_card: the call timed out (injected by a tool mock)"
    assert seen(trial.output) == [
        ["charge_card", "retried", timed_out],
        ["charge_card", "success", {"status": "ok"}],
        ["charge_card", "success", {"status": "ok"}],
    ]
    assert [c.mocked for c in trial.tool_calls] == ["mock", "mock", "mock"]
    assert trial.tool_calls[0].error == timed_out
    assert trial.retries == {"tool_retry": 1}


def test_an_injected_error_the_agent_does_not_handle_ends_the_trial_as_the_agents(
    tmp_path: Path,
) -> None:
    desk = DeskAgent()  # no error handling: a tool that raises ends pydantic-ai's run
    store = tmp_path / "runs.db"
    mocks = {"charge_card": {"error": "timeout"}, "get_weather": {"result": "sunny"}}
    steps = script([("get_weather", {"city": "Paris"})], [("charge_card", {"amount": 5})])
    case = EvalCase(id="down", input=steps, tool_mocks=mocks)
    run = agenteval.evaluate(desk.agent, [case], store=store, retries=2)
    trial = only(store).trial
    assert desk.ran == []
    assert trial.failure is not None
    assert trial.failure.cause == FailureCause.AGENT_ERROR
    assert trial.failure.error_type == "InjectedTimeout"
    assert "timed out (injected by a tool mock)" in trial.failure.message
    assert run.results[0].trial.attempts == 1  # the case's scenario, never retried
    # The calls made before the run ended are kept, marked as answered by the mocks.
    assert [(c.name, c.result, c.mocked) for c in trial.tool_calls] == [
        ("get_weather", "sunny", "mock"),
        ("charge_card", None, "mock"),
    ]


def test_mocks_only_fails_an_unmocked_call_even_when_the_agent_handles_it(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    steps = script([("get_weather", {"city": "Paris"})], [("create_ticket", {"title": "leak"})])
    mocks = {"get_weather": {"result": "sunny"}}
    cases = [
        EvalCase(id="only", input=steps, tool_mocks=mocks, tool_mocks_only=True),
        EvalCase(id="real", input=steps, tool_mocks=mocks),
    ]
    for handles in (False, True):
        desk = DeskAgent(handles_errors=handles)
        agenteval.evaluate(desk.agent, cases, store=store)
        by_case = {case_id: r.trial for (case_id, _), r in results(store).items()}
        only_trial = by_case["only"]
        assert only_trial.failure is not None, handles
        assert only_trial.failure.cause == FailureCause.UNMOCKED_TOOL
        assert only_trial.failure.error_type == "UnmockedToolError"
        assert "create_ticket(title='leak') has no mock" in only_trial.failure.message
        # The unmocked tool never ran in the mocks-only case; in the other, it ran for real.
        assert desk.ran == ["create_ticket leak"], handles
        assert by_case["real"].failure is None
        assert by_case["real"].tool_calls[1].result == {"id": "LIVE-1"}
        assert by_case["real"].tool_calls[1].mocked is None
        if handles:  # the agent went on, the harness saw the call all the same
            assert seen(only_trial.output)[1][:2] == ["create_ticket", "retried"]


def test_invalid_arguments_take_pydantic_ais_retry_path_and_never_reach_the_mock(
    tmp_path: Path,
) -> None:
    """The model's arguments are validated by pydantic-ai before the mock is asked: invalid
    ones are sent back to the model as for a real call (`retried`, the validation error), and
    the sequence does not move; the corrected call takes the sequence's first answer."""
    desk = DeskAgent()
    store = tmp_path / "runs.db"
    mocks = {"get_weather": {"sequence": [{"result": "first"}, {"result": "second"}]}}
    steps = script([("get_weather", {"town": "Oslo"})], [("get_weather", {"city": "Oslo"})])
    case = EvalCase(id="badargs", input=steps, tool_mocks=mocks, tool_mocks_only=True)
    agenteval.evaluate(desk.agent, [case], store=store)
    result = only(store)
    trial = result.trial
    assert trial.failure is None
    assert desk.ran == []
    first, second = trial.tool_calls
    assert (first.arguments, first.result, first.mocked) == ({"town": "Oslo"}, None, None)
    assert "Field required" in (first.error or "")
    assert (second.arguments, second.result, second.mocked) == ({"city": "Oslo"}, "first", "mock")
    assert trial.retries == {"tool_retry": 1}
    assert result.scores["tool_arguments_valid"].passed is False  # as for a real call


def test_the_mock_sees_the_models_arguments_and_a_callable_result_is_called_with_them(
    tmp_path: Path,
) -> None:
    """`create_ticket(title, priority=1)`: the model leaves `priority` out; the mock's `when`
    and its callable see the arguments as the model gave them (as the trial records them),
    not pydantic-ai's defaults added."""
    desk = DeskAgent()
    store = tmp_path / "runs.db"
    seen_by_mock: list[dict[str, Any]] = []

    def ticket(**arguments: Any) -> dict[str, Any]:
        seen_by_mock.append(arguments)
        return {"id": f"T-{arguments['title']}"}

    mocks = {
        "create_ticket": [
            {"when": {"title": "urgent", "priority": 3}, "result": {"id": "T-0"}},
            {"result": ticket},
        ]
    }
    calls = [
        ("create_ticket", {"title": "urgent", "priority": 3}),
        ("create_ticket", {"title": "later"}),
        ("create_ticket", {"title": "coerced", "priority": "2"}),
    ]
    case = EvalCase(id="args", input=script(calls), tool_mocks=mocks)
    agenteval.evaluate(desk.agent, [case], store=store)
    trial = only(store).trial
    assert desk.ran == []
    assert seen_by_mock == [{"title": "later"}, {"title": "coerced", "priority": "2"}]
    assert [(c.arguments, c.result, c.mocked) for c in trial.tool_calls] == [
        ({"title": "urgent", "priority": 3}, {"id": "T-0"}, "mock"),
        ({"title": "later"}, {"id": "T-later"}, "mock"),
        ({"title": "coerced", "priority": "2"}, {"id": "T-coerced"}, "mock"),
    ]


def test_a_tool_of_a_prefixed_toolset_is_mocked_by_the_name_the_model_calls(
    tmp_path: Path,
) -> None:
    desk = DeskAgent()
    store = tmp_path / "runs.db"
    steps = script([("crm_find", {"email": "a@b.c"})])
    mocks = {"crm_find": {"when": {"email": "a@b.c"}, "result": {"customer": "Ada"}}}
    case = EvalCase(id="crm", input=steps, tool_mocks=mocks, tool_mocks_only=True)
    agenteval.evaluate(desk.agent, [case], store=store)
    trial = only(store).trial
    assert desk.ran == []
    assert trial.failure is None
    assert [(c.name, c.result, c.mocked) for c in trial.tool_calls] == [
        ("crm_find", {"customer": "Ada"}, "mock")
    ]


def test_the_tools_read_before_a_run_are_named_as_the_model_is_offered_them() -> None:
    """What a check of the mocks against the agent's tools reads: the prefixed toolset's tool
    under its prefixed name, a renamed one under its new name."""
    desk = DeskAgent()
    specs = PydanticAIAgent(desk.agent).tool_specs()
    assert set(specs) == {"get_weather", "create_ticket", "charge_card", "crm_find"}
    assert specs["crm_find"].name == "crm_find"
    assert specs["crm_find"].parameters["required"] == ["email"]
    renamed = Agent(
        desk.agent.model, toolsets=[FunctionToolset([free]).renamed({"lookup": "free"})]
    )
    assert set(PydanticAIAgent(renamed).tool_specs()) == {"lookup"}


def free(day: str) -> bool:
    """Whether the calendar is free that day."""
    return True


def test_run_level_mocks_apply_to_every_case_and_a_cases_own_mock_wins(tmp_path: Path) -> None:
    desk = DeskAgent()
    store = tmp_path / "runs.db"
    steps = script([("get_weather", {"city": "Rome"}), ("charge_card", {"amount": 3})])
    cases = [
        EvalCase(id="run", input=steps),
        EvalCase(id="own", input=steps, tool_mocks={"get_weather": {"result": "case's"}}),
    ]
    run_mocks = {"get_weather": {"result": "run's"}, "charge_card": {"result": {"status": "ok"}}}
    agenteval.evaluate(desk.agent, cases, store=store, tool_mocks=run_mocks)
    by_case = {case_id: r.trial for (case_id, _), r in results(store).items()}
    assert desk.ran == []
    assert [c.result for c in by_case["run"].tool_calls] == ["run's", {"status": "ok"}]
    assert [c.result for c in by_case["own"].tool_calls] == ["case's", {"status": "ok"}]
    assert all(c.mocked == "mock" for t in by_case.values() for c in t.tool_calls)


def test_state_is_the_trials_for_real_tools_and_mocks_alike(tmp_path: Path) -> None:
    """`agenteval.state()` inside a real (sync, threaded) tool, and a mock's `set_state`, both
    change the trial's state, which starts from the case's `initial_state`."""
    desk = DeskAgent()
    store = tmp_path / "runs.db"
    mocks = {"charge_card": {"result": {"status": "ok"}, "set_state": {"charged": 10}}}
    steps = script([("create_ticket", {"title": "refund"})], [("charge_card", {"amount": 10})])
    case = EvalCase(
        id="state",
        input=steps,
        tool_mocks=mocks,
        initial_state={"tickets": ["old"], "charged": 0},
    )
    agenteval.evaluate(desk.agent, [case], store=store)
    trial = only(store).trial
    assert desk.ran == ["create_ticket refund"]
    assert trial.state == {"tickets": ["old", "refund"], "charged": 10}
    assert trial.tool_calls[0].result == {"id": "LIVE-2"}


def test_a_case_with_state_and_no_mocks_runs_its_real_tools_on_that_state(
    tmp_path: Path,
) -> None:
    desk = DeskAgent()
    store = tmp_path / "runs.db"
    steps = script([("create_ticket", {"title": "new"})])
    case = EvalCase(id="state", input=steps, initial_state={"tickets": ["a", "b"]})
    agenteval.evaluate(desk.agent, [case], store=store)
    trial = only(store).trial
    assert desk.ran == ["create_ticket new"]
    assert [(c.result, c.mocked) for c in trial.tool_calls] == [({"id": "LIVE-3"}, None)]
    assert trial.state == {"tickets": ["a", "b", "new"]}


def test_concurrent_trials_keep_their_own_state_and_sequence_positions(tmp_path: Path) -> None:
    """Eight at a time, three trials of each case: every trial's sequence starts at its first
    answer and its state starts from its own case's, whatever the others did meanwhile."""
    desk = DeskAgent()
    store = tmp_path / "runs.db"
    names = ["ana", "bo", "cy", "di", "ed", "flo"]
    charge = [("charge_card", {"amount": 1})]
    ticket = [("create_ticket", {"title": "t"})]
    cases = [
        EvalCase(
            id=name,
            input=script(charge, ticket, charge, charge),
            tool_mocks={
                "charge_card": {
                    "sequence": [
                        {"result": f"{name}-1"},
                        {"result": f"{name}-2", "set_state": {"paid": name}},
                        {"result": f"{name}-3"},
                    ]
                }
            },
            initial_state={"owner": name, "tickets": []},
        )
        for name in names
    ]
    agenteval.evaluate(desk.agent, cases, store=store, trials=3, concurrency=8)
    stored = results(store)
    assert len(stored) == len(names) * 3
    for (case_id, _), result in stored.items():
        trial = result.trial
        assert trial.failure is None, case_id
        assert [c.result for c in trial.tool_calls] == [
            f"{case_id}-1",
            {"id": "LIVE-1"},
            f"{case_id}-2",
            f"{case_id}-3",
        ]
        assert [c.mocked for c in trial.tool_calls] == ["mock", None, "mock", "mock"]
        assert trial.state == {"owner": case_id, "tickets": ["t"], "paid": case_id}
    assert sorted(desk.ran) == ["create_ticket t"] * len(stored)
    assert "charge_card" not in json.dumps(desk.ran)


def test_the_users_agent_is_unchanged_and_runs_its_real_tools_after(tmp_path: Path) -> None:
    desk = DeskAgent(handles_errors=True)
    agent = desk.agent
    capabilities = list(agent.root_capability.capabilities)
    toolsets = list(agent.toolsets)
    case = EvalCase(
        id="c",
        input=script([("get_weather", {"city": "Paris"})]),
        tool_mocks={"get_weather": {"result": "mocked"}},
        tool_mocks_only=True,
    )
    agenteval.evaluate(agent, [case], store=tmp_path / "runs.db")
    assert desk.ran == []
    assert list(agent.root_capability.capabilities) == capabilities
    assert list(agent.toolsets) == toolsets
    assert agent.name == "desk"
    # Run directly afterwards (no trial, no environment), the agent calls its real tool.
    direct = agent.run_sync(script([("get_weather", {"city": "Paris"})]))
    assert seen(direct.output) == [["get_weather", "success", "Paris: live"]]
    assert desk.ran == ["get_weather Paris"]


def test_a_replayed_run_answers_with_the_recorded_results(tmp_path: Path) -> None:
    """The replay of a stored trial (the engine's `EnvironmentPlan`, as `--replay-tools` sets
    it): each call answered with what the recorded one returned, matched by the arguments as
    recorded (`priority` left out by the model stays out); a call the stored run never made is
    a `replay_miss`, never run live, unless the replay falls through."""
    desk = DeskAgent()
    store = tmp_path / "runs.db"
    made = script(
        [("create_ticket", {"title": "refund"}), ("get_weather", {"city": "Oslo"})],
        [("charge_card", {"amount": 7})],
    )
    agenteval.evaluate(desk.agent, [EvalCase(id="live", input=made)], store=store)
    recorded = only(store).trial
    assert sorted(desk.ran) == ["charge_card 7", "create_ticket refund", "get_weather Oslo"]
    desk.ran.clear()

    def replayed(*, extra: bool, fallthrough: bool = False) -> Trial:
        async def book(case_id: str, index: int) -> ReplayBook:
            return ReplayBook(recorded.tool_calls, run_id="0123456789abcdef")

        plan = EnvironmentPlan(replay=book, replay_fallthrough=fallthrough)
        runner = TrialRunner.of(
            PydanticAIAgent(desk.agent), timeout_s=None, retry=RetryPolicy(), environment=plan
        )
        steps = made if not extra else script([("get_weather", {"city": "Rome"})])
        return asyncio.run(runner.run(EvalCase(id="live", input=steps), 0))

    again = replayed(extra=False)
    assert desk.ran == []
    assert again.failure is None
    assert [(c.name, c.arguments, c.result, c.mocked) for c in again.tool_calls] == [
        (c.name, c.arguments, c.result, "replay") for c in recorded.tool_calls
    ]
    assert again.output == recorded.output

    missed = replayed(extra=True)
    assert missed.failure is not None
    assert missed.failure.cause == FailureCause.REPLAY_MISS
    assert "get_weather(city='Rome') was never called in the replayed run" in (
        missed.failure.message
    )
    assert desk.ran == []

    live = replayed(extra=True, fallthrough=True)
    assert live.failure is None
    assert desk.ran == ["get_weather Rome"]
    assert [(c.result, c.mocked) for c in live.tool_calls] == [("Rome: live", None)]


def test_a_sequence_goes_on_across_the_turns_of_a_conversation(tmp_path: Path) -> None:
    """Each turn is a run of its own (the model makes calls with the same ids again); the
    trial's environment, and where its sequence stands, spans them all."""
    desk = DeskAgent()
    store = tmp_path / "runs.db"
    charge = script([("charge_card", {"amount": 1})])
    mocks = {"charge_card": {"sequence": [{"result": "one"}, {"result": "two"}]}}
    case = EvalCase(
        id="talk",
        conversation=[Invocation(input=charge), Invocation(input=charge)],
        tool_mocks=mocks,
    )
    agenteval.evaluate(desk.agent, [case], store=store)
    trial = only(store).trial
    assert desk.ran == []
    assert [(c.id, c.result, c.mocked) for c in trial.tool_calls] == [
        ("s0c0", "one", "mock"),
        ("s0c0", "two", "mock"),
    ]
    assert trial.metadata["turn_outputs"] == [
        json.dumps([["charge_card", "success", "one"]]),
        json.dumps([["charge_card", "success", "two"]]),
    ]


def test_a_wrapper_agent_and_an_agent_with_deps_are_mocked_alike(tmp_path: Path) -> None:
    from pydantic_ai.agent import WrapperAgent

    desk = DeskAgent()
    store = tmp_path / "runs.db"
    mocks = {"get_weather": {"result": "mocked"}}
    case = EvalCase(id="w", input=script([("get_weather", {"city": "Rome"})]), tool_mocks=mocks)
    agenteval.evaluate(WrapperAgent(desk.agent), [case], store=store)
    assert desk.ran == []
    assert [(c.result, c.mocked) for c in only(store).trial.tool_calls] == [("mocked", "mock")]

    # A tool taking the run's context (`@agent.tool`), whose deps the trial's factory makes.
    ledgers: list[Ledger] = []

    def make_deps() -> Ledger:
        ledgers.append(Ledger())
        return ledgers[-1]

    agent = PydanticAIAgent(ledger_agent(), deps=make_deps)
    weather = EvalCase(id="l", input="Weather in Oslo?", tool_mocks=mocks)
    agenteval.evaluate(agent, [weather], store=store)
    assert [(c.result, c.mocked) for c in only(store).trial.tool_calls] == [("mocked", "mock")]
    assert [ledger.cities for ledger in ledgers] == [[]]  # the tool never ran
