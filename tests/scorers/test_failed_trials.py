"""One rule for failed trials, across every built-in scorer.

A trial that failed for an infrastructure reason (timeout, rate limit, provider or connection
error) was never the agent's choice: no scorer judges it. A trial the agent itself failed
(`agent_error`, `no_response`, `invalid_output`) is judged like any other.
"""

from __future__ import annotations

from typing import Any

import pytest

from agenteval.agents.tools import ToolSpec
from agenteval.case import EvalCase
from agenteval.score import Score
from agenteval.scorers.builtin import BUILTIN_SCORERS, builtin_scorer
from agenteval.trace import Failure, FailureCause, ToolCall, Trial

INFRASTRUCTURE = [cause for cause in FailureCause if cause.is_infrastructure]
AGENT_FAULTS = [cause for cause in FailureCause if not cause.is_infrastructure]

TOOLS = {
    "search": ToolSpec(
        name="search",
        parameters={"type": "object", "properties": {"query": {"type": "string"}}},
    )
}

# A case every built-in scorer applies to.
CASE = EvalCase(
    input="What was revenue in 2024?",
    expected_output="5 million",
    expected_tools=["search"],
    expected_trajectory=["search"],
    max_tool_calls=1,
    relevant_docs=["doc-1"],
    must_not_contain=["HACKED"],
    expected_state={"reported": True},
)


def search() -> ToolCall:
    return ToolCall(
        name="search",
        arguments={"query": "revenue 2024"},
        result=[{"id": "doc-1", "text": "revenue 5 million"}],
    )


def score_all(trial: Trial) -> dict[str, Score]:
    scores: dict[str, Score] = {}
    for name in BUILTIN_SCORERS:
        score: Any = builtin_scorer(name, TOOLS)(CASE, trial)
        assert isinstance(score, Score)
        scores[name] = score
    return scores


def test_the_case_makes_every_scorer_apply() -> None:
    scores = score_all(Trial(output="5 million", tool_calls=[search()], state={"reported": True}))
    assert {name: score.value for name, score in scores.items()} == dict.fromkeys(
        BUILTIN_SCORERS, 1.0
    )


def test_responded_means_no_infrastructure_failure() -> None:
    assert Trial().responded is True  # no answer, no call, no failure: it did respond
    for cause in FailureCause:
        trial = Trial(output="5", failure=Failure(cause=cause))
        assert trial.responded is not cause.is_infrastructure


@pytest.mark.parametrize("cause", INFRASTRUCTURE)
def test_no_scorer_judges_an_infrastructure_failure(cause: FailureCause) -> None:
    # Even with an answer and calls recorded before the failure.
    trial = Trial(
        output="5 million",
        tool_calls=[search()],
        state={"reported": True},
        failure=Failure(cause=cause, message="gave up after 3 tries"),
    )
    reason = (
        f"not judged: the trial failed for an infrastructure reason "
        f"({cause.value}: gave up after 3 tries)"
    )
    for name, score in score_all(trial).items():
        assert (name, score.value, score.passed, score.reason) == (name, None, None, reason)


@pytest.mark.parametrize("cause", AGENT_FAULTS)
def test_a_trial_the_agent_failed_after_its_calls_is_judged(cause: FailureCause) -> None:
    trial = Trial(tool_calls=[search()], failure=Failure(cause=cause, message="boom"))
    scores = score_all(trial)
    assert scores["exact_match"].value == 0.0
    assert scores["exact_match"].reason == f"the trial gave no answer ({cause.value}: boom)"
    for name in (
        "tool_selection",
        "tool_arguments_valid",
        "tool_execution",
        "trajectory_order",
        "step_efficiency",
        "redundant_calls",
        "retrieval_recall",
    ):
        assert scores[name].value == 1.0, name
    # These two need an answer; the reason says why there is none.
    assert scores["tool_faithfulness"].value is None
    assert scores["tool_faithfulness"].reason == f"the trial gave no answer ({cause.value}: boom)"
    assert scores["avoids_forbidden_text"].value is None
    assert scores["avoids_forbidden_text"].reason == (
        f"the trial gave no answer ({cause.value}: boom): nothing was said"
    )
    # The state it left is judged like the calls it made (here it left none).
    assert scores["state_match"].value == 0.0


@pytest.mark.parametrize("cause", AGENT_FAULTS)
def test_a_trial_the_agent_failed_before_any_call_is_judged(cause: FailureCause) -> None:
    scores = score_all(Trial(failure=Failure(cause=cause, message="boom")))
    assert scores["exact_match"].value == 0.0
    assert scores["tool_selection"].value == 0.0
    assert scores["trajectory_order"].value == 0.0
    assert scores["retrieval_recall"].value == 0.0
    for score in scores.values():
        assert "infrastructure" not in (score.reason or "")
