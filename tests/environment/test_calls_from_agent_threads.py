"""A tool the run answers in place (a mock, `tool_mocks_only`, a replay) called from a thread
the agent started itself (`ThreadPoolExecutor`, `loop.run_in_executor`: no trial context, so no
mock can answer it) is refused, never run for real. Before, it ran the live tool (a card
charged in a case that mocks the charge), and the trial passed on a scenario that never
played: an injected `timeout` the agent never met, a `tool_mocks_only` case whose call touched
the live system."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.environment.agents_threads import charging

import agenteval
from agenteval import EvalCase

AGENT = f"{Path(charging.__file__)}:run"


@pytest.fixture(autouse=True)
def _no_charges() -> None:
    charging.LIVE_CHARGES.clear()


def _trial(cases: list[EvalCase], store: Path, **options: object) -> agenteval.TrialResult:
    run = agenteval.evaluate(charging.run, cases, store=store, **options)  # type: ignore[arg-type]
    (result,) = run.results
    return result


def test_an_injected_failure_is_never_replaced_by_the_live_tool(tmp_path: Path) -> None:
    case = EvalCase(
        id="charge-timeout",
        input="charge 45",
        expected_output="charged: captured",
        tool_mocks={"charge_card": {"error": "timeout"}},
    )
    result = _trial([case], tmp_path / "runs.db")
    assert charging.LIVE_CHARGES == []  # the live system was not touched
    failure = result.trial.failure
    assert failure is not None and failure.error_type == "UnmockedToolError"
    assert "called outside any trial" in failure.message
    assert "contextvars.copy_context().run" in failure.message  # the fix
    assert result.scores["exact_match"].value == 0.0  # no pass from a scenario never played


def test_a_mocks_only_case_never_runs_the_live_tool_from_a_thread(tmp_path: Path) -> None:
    case = EvalCase(
        id="mocks-only",
        input="charge 45",
        tool_mocks={"other_tool": {"result": 1}},
        tool_mocks_only=True,
    )
    result = _trial(
        [case],
        tmp_path / "runs.db",
        tools={
            "charge_card": charging.charge_card.tool_spec,
            "other_tool": charging.charge_card.tool_spec,
        },
    )
    assert charging.LIVE_CHARGES == []
    assert result.trial.failure is not None
    assert result.trial.failure.error_type == "UnmockedToolError"


def test_a_run_that_answers_no_tool_in_place_still_runs_them_and_after_a_run_too(
    tmp_path: Path,
) -> None:
    plain = EvalCase(id="plain", input="charge 45", expected_output="charged: captured")
    result = _trial([plain], tmp_path / "runs.db")
    assert result.trial.failure is None and charging.LIVE_CHARGES == [45]
    mocked = EvalCase(id="m", input="x", tool_mocks={"charge_card": {"result": {"status": "m"}}})
    _trial([mocked], tmp_path / "runs.db")
    # Outside any run the tool is the plain function again, from any thread.
    assert charging.run("charge") == "charged: captured"
    assert charging.LIVE_CHARGES == [45, 45]


def test_a_case_with_no_mocks_runs_the_tool_from_a_thread_beside_one_that_mocks_it(
    tmp_path: Path,
) -> None:
    # Before, the mocked case's claim held for the rest of the run: the plain case after it
    # (a common set-up: a few cases mock a failure, the rest run live) was refused with
    # UnmockedToolError, a false failure. Only a trial answering the tool refuses it.
    mocked = [
        EvalCase(
            id=f"timeout-{n}", input="charge 45", tool_mocks={"charge_card": {"error": "timeout"}}
        )
        for n in (1, 2)
    ]
    plain = EvalCase(id="plain", input="charge 45", expected_output="charged: captured")
    run = agenteval.evaluate(
        charging.run, [mocked[0], plain, mocked[1]], store=tmp_path / "runs.db", concurrency=1
    )
    by_case = {result.case.id: result for result in run.results}
    assert by_case["plain"].trial.failure is None
    assert by_case["plain"].scores["exact_match"].value == 1.0
    assert charging.LIVE_CHARGES == [45]  # the plain case's charge only
    for result in run.results:
        if result.case.id != "plain":
            failure = result.trial.failure
            assert failure is not None and failure.error_type == "UnmockedToolError"


def test_on_worker_processes_too(tmp_path: Path) -> None:
    case = EvalCase(
        id="charge-timeout",
        input="charge 45",
        expected_output="charged: captured",
        tool_mocks={"charge_card": {"error": "timeout"}},
    )
    run = agenteval.evaluate(
        AGENT, [case], store=tmp_path / "runs.db", executor="process", workers=1
    )
    (result,) = run.results
    failure = result.trial.failure
    assert failure is not None and failure.error_type == "UnmockedToolError"
    assert result.scores["exact_match"].value == 0.0


def test_a_claim_outlived_by_its_run_takes_back_nothing_of_the_next_runs() -> None:
    """A claim is counted for the run it was made in: released after that run ended (and the
    next began), it leaves the next run's own claims as they are."""
    from agenteval.agents.environment import ToolEnvironment, UnmockedToolError
    from agenteval.agents.recorder import (
        claim_answered_tools,
        note_unrecorded_call,
        watch_unrecorded_calls,
    )
    from agenteval.tool_mocks import ToolMock

    mocked = ToolEnvironment(tool_mocks={"charge_card": ToolMock(result={"status": "m"})})
    assert claim_answered_tools(mocked) is None  # no run goes: nothing to refuse
    with watch_unrecorded_calls():
        old = claim_answered_tools(mocked)
        assert old is not None
    with watch_unrecorded_calls():
        new = claim_answered_tools(mocked)
        assert new is not None
        old.release()  # after its run ended: not this run's claim
        with pytest.raises(UnmockedToolError):
            note_unrecorded_call("charge_card")
        new.release()
        note_unrecorded_call("charge_card")  # no running trial answers it now
