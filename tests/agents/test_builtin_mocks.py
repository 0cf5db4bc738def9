"""The built-in agent under tool mocks, against a loopback OpenAI-compatible server: a mocked
tool never runs, an injected error goes back to the model as a real one would, the tools'
state is the trial's own (eight trials at once), and `tool_mocks_only` fails a trial whose
model called an unmocked tool even though the model was told and answered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.agents.fakes_toolcalls import ToolCallingOpenAI, answer, call, tool_calls

import agenteval
from agenteval import EvalCase, FailureCause
from agenteval.agents.builtin import BuiltinAgent, builtin_agent

TOOLS = '''
from pathlib import Path

import agenteval

LEDGER = Path(__file__).with_name("ledger.txt")


@agenteval.tool
def bim_charge(amount: int, card: str = "visa") -> dict:
    """Charge the customer's card (a side effect: written to the ledger)."""
    with LEDGER.open("a") as ledger:
        ledger.write(f"charged {amount}\\n")
    return {"status": "charged for real"}


@agenteval.tool
def bim_note(text: str) -> str:
    """Keep a note in the trial's environment state."""
    agenteval.state().setdefault("notes", []).append(text)
    return "noted"
'''


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    (tmp_path / "bim_tools.py").write_text(TOOLS, encoding="utf-8")
    return tmp_path


def _agent(fake: ToolCallingOpenAI, tools_dir: Path) -> BuiltinAgent:
    spec = {"model": "openai:fake-llm", "base_url": fake.base_url, "tools": "bim_tools.py"}
    return builtin_agent(spec, base_dir=tools_dir)


def _tool_replies(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def charging_model(body: dict[str, Any]) -> Any:
    """A model with a policy, answering from the conversation it is sent (so trials running at
    once each get their own next step): charge the amount the user names, retry once on an
    error, note the charge's status, then answer."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    amount = int(user.split()[-1])
    replies = _tool_replies(body)
    if not replies or (replies[-1].startswith("error: ") and len(replies) == 1):
        return tool_calls(call("bim_charge", amount=amount))
    if len(replies) == 2 and not replies[-1].startswith("error: "):
        return tool_calls(call("bim_note", text=f"{user}: {json.loads(replies[-1])['status']}"))
    return answer(f"done after {len(replies)} tool replies: {replies[-1]}")


CHARGE_MOCK = {
    "bim_charge": {
        "sequence": [
            {"error": "timeout"},
            {"result": {"status": "ok"}, "set_state": {"charged": True}},
        ]
    }
}


def test_a_mocked_tool_never_runs_and_the_model_sees_the_injected_error(
    openai_fake: ToolCallingOpenAI, tools_dir: Path
) -> None:
    openai_fake.handler = charging_model
    case = EvalCase(
        id="pay",
        input="charge 30",
        tool_mocks=CHARGE_MOCK,
        initial_state={"notes": []},
        expected_state={"charged": True, "notes": ["charge 30: ok"]},
    )
    run = agenteval.evaluate(_agent(openai_fake, tools_dir), [case], store=tools_dir / "r.db")
    (result,) = run.results
    trial = result.trial
    assert not (tools_dir / "ledger.txt").exists()  # the real charge never ran
    assert trial.failure is None
    assert [(c.name, c.mocked) for c in trial.tool_calls] == [
        ("bim_charge", "mock"),
        ("bim_charge", "mock"),
        ("bim_note", None),  # no mock: it ran, into the trial's state
    ]
    assert trial.tool_calls[0].error is not None and "timed out" in trial.tool_calls[0].error
    assert trial.tool_calls[1].result == {"status": "ok"}
    # What the model was told after the first charge: the error a real timeout would give.
    replies = _tool_replies(openai_fake.requests[1])
    assert replies == [
        "error: InjectedTimeout: bim_charge: the call timed out (injected by a tool mock)"
    ]
    assert trial.state == {"notes": ["charge 30: ok"], "charged": True}
    assert result.scores["state_match"].passed is True
    # The injected failure is the case's, not the agent's: the other call ran without error.
    assert result.scores["tool_execution"].passed is True


def test_eight_trials_at_once_keep_their_own_state_and_sequence(
    openai_fake: ToolCallingOpenAI, tools_dir: Path
) -> None:
    openai_fake.handler = charging_model
    cases = [
        EvalCase(
            id=f"pay-{n}",
            input=f"charge {n}",
            tool_mocks=CHARGE_MOCK,
            expected_state={"charged": True, "notes": [f"charge {n}: ok"]},
        )
        for n in range(4)
    ]
    run = agenteval.evaluate(
        _agent(openai_fake, tools_dir),
        cases,
        trials=2,
        concurrency=8,
        store=tools_dir / "r.db",
    )
    assert len(run.results) == 8
    assert not (tools_dir / "ledger.txt").exists()
    for result in run.results:
        n = result.case.id.split("-")[1]
        # Each trial's sequence started at its own first answer, and its state is its own.
        assert [c.error is None for c in result.trial.tool_calls] == [False, True, True]
        assert result.trial.state == {"charged": True, "notes": [f"charge {n}: ok"]}
        assert result.scores["state_match"].passed is True, result.scores["state_match"]


def test_an_unmocked_call_fails_a_mocks_only_trial_though_the_model_answered(
    openai_fake: ToolCallingOpenAI, tools_dir: Path
) -> None:
    openai_fake.push(tool_calls(call("bim_charge", amount=5)), answer("I could not charge."))
    case = EvalCase(
        id="only", input="charge 5", tool_mocks={"bim_note": {"result": "ok"}}, tool_mocks_only=True
    )
    run = agenteval.evaluate(_agent(openai_fake, tools_dir), [case], store=tools_dir / "r.db")
    (result,) = run.results
    assert not (tools_dir / "ledger.txt").exists()
    assert result.trial.output == "I could not charge."
    failure = result.trial.failure
    assert failure is not None and failure.cause is FailureCause.UNMOCKED_TOOL
    assert "bim_charge(amount=5) has no mock" in failure.message
    assert _tool_replies(openai_fake.requests[1])[0].startswith("error: UnmockedToolError: ")


def test_a_mocked_call_with_bad_arguments_is_refused_as_a_real_one(
    openai_fake: ToolCallingOpenAI, tools_dir: Path
) -> None:
    openai_fake.push(tool_calls(call("bim_charge", amount="ten")), answer("sorry"))
    case = EvalCase(id="bad", input="charge 5", tool_mocks=CHARGE_MOCK)
    run = agenteval.evaluate(_agent(openai_fake, tools_dir), [case], store=tools_dir / "r.db")
    (result,) = run.results
    (charge,) = result.trial.tool_calls
    assert charge.mocked is None  # no mock answered: the arguments were refused first
    assert charge.error is not None and "do not fit its schema" in charge.error
    assert _tool_replies(openai_fake.requests[1])[0].startswith("error: ToolArgumentsError: ")
    assert not (tools_dir / "ledger.txt").exists()
