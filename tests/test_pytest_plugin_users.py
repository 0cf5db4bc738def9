"""Simulated users under the pytest plugin: a case file's scripted user (beside the case file)
and `@agenteval_cases(user_simulator=...)` playing the cases that have only a goal; a script
that does not load is one message naming the case file, line and case."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.store import RunStore

pytest_plugins = ("pytester",)

AGENT = '''
def answer(messages):
    """Asks for the order number, then the email, one at a time, then refunds."""
    said = " ".join(m["content"] for m in messages if m["role"] == "user")
    if "8812" not in said:
        return "What is your order number?"
    if "@" not in said:
        return "What is your email?"
    return "Refund issued for order 8812."
'''

USERS = """
def refund_user(messages):
    last = messages[-1]["content"].lower() if messages else ""
    if not messages:
        return "My order arrived broken."
    if "refund issued" in last:
        return None
    return "8812" if "order number" in last else "ana@example.com"
"""

CASES = """
- id: scripted
  user_simulation:
    script: users.py:refund_user
    max_turns: 5
  keywords: [refund issued]
  expected_output: Refund issued for order 8812.
- id: simulated
  input: Hi, my order arrived broken.
  user_simulation:
    goal: Get a refund for order 8812 (email ana@example.com).
    max_turns: 5
  keywords: [refund issued]
  expected_output: Refund issued for order 8812.
"""

TEST = """
from agenteval import EndReason, UserReply
from agenteval.pytest_plugin import agenteval_cases


class PlayedUser:
    '''A stand-in for the model simulator: answers from its goal.'''

    label = "test:played"

    async def reply(self, request):
        last = request.messages[-1]["content"].lower()
        if "refund issued" in last:
            return UserReply(stop=EndReason.GOAL_ACHIEVED, detail="refunded")
        return UserReply(message="8812" if "order number" in last else "ana@example.com")


@agenteval_cases(
    "evals/cases.yaml", agent="evals/agent.py:answer", user_simulator=PlayedUser(), builtins=True
)
def test_refunds(agenteval_result):
    for trial in agenteval_result.trials:
        assert trial.simulation is not None
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    evals = pytester.path / "evals"
    evals.mkdir()
    (evals / "cases.yaml").write_text(CASES, encoding="utf-8")
    (evals / "agent.py").write_text(AGENT, encoding="utf-8")
    (evals / "users.py").write_text(USERS, encoding="utf-8")
    pytester.makeini(
        "[pytest]\nagenteval_store = evals/runs.db\nasyncio_default_fixture_loop_scope = function\n"
    )
    return pytester


def test_scripted_and_simulated_users_play_their_cases(project: pytest.Pytester) -> None:
    project.makepyfile(test_users=TEST)

    result = project.runpytest("-v")

    result.assert_outcomes(passed=2)
    with RunStore(project.path / "evals" / "runs.db", create=False) as store:
        (row,) = store.list_runs()
        trials = {r.case.id: r.trial for r in store.iter_results(row.run_id)}
    scripted, simulated = trials["scripted"].simulation, trials["simulated"].simulation
    assert scripted is not None and simulated is not None
    assert scripted.user.endswith("evals/users.py:refund_user")
    assert [turn.source for turn in scripted.turns] == ["scripted"] * 3
    assert simulated.user == "test:played"
    assert [turn.source for turn in simulated.turns] == ["written", "simulated", "simulated"]
    assert simulated.end_reason.value == "goal_achieved"


def test_without_a_simulator_a_goal_only_case_is_refused_before_it_runs(
    project: pytest.Pytester,
) -> None:
    """A case no one can play is refused before the run starts (as a script that does not
    load is): every test of the decorated function errors with the one message, nothing runs."""
    project.makepyfile(test_users=TEST.replace("user_simulator=PlayedUser(), ", ""))

    result = project.runpytest("-v")

    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") is None and outcomes.get("errors") == 2
    said = result.stdout.str()
    assert "case 'simulated' simulates its user" in said and "no user simulator" in said
    assert "Traceback" not in said


def test_a_script_that_does_not_load_is_one_message(project: pytest.Pytester) -> None:
    cases = project.path / "evals" / "cases.yaml"
    cases.write_text(CASES.replace("users.py:refund_user", "users.py:refund"), encoding="utf-8")
    project.makepyfile(test_users=TEST)

    result = project.runpytest("-v")

    assert result.parseoutcomes().get("passed") is None
    said = result.stdout.str()
    assert f"{Path('evals') / 'cases.yaml'}:4, case 'scripted', field 'user_simulation.script'" in (
        said.replace(str(project.path) + "/", "")
    )
    assert "did you mean users.py:refund_user?" in said
    assert "Traceback" not in said
