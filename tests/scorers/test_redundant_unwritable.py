"""`redundant_calls` writes out (as canonical JSON) only the arguments of a tool called more
than once, since only those are compared. So a tool called once whose arguments cannot be
written out (an integer past Python's 4,300-digit string limit) no longer makes the scorer fail:
before issue 21 it gave an error score (not applied); it now passes, as nothing was repeated.
A tool called twice with such arguments still cannot be compared, and is still an error."""

from __future__ import annotations

from agenteval import EvalCase, ToolCall, Trial
from agenteval.scorers.base import prepare_scorers
from agenteval.scorers.tools import RedundantCalls

HUGE = 10**5000


def _score(*calls: ToolCall) -> tuple[float | None, str | None]:
    scorer = prepare_scorers([RedundantCalls()])[0]
    score = scorer.call(EvalCase(id="c", input="x"), Trial(output="x", tool_calls=list(calls)))
    return score.value, score.error


def test_a_tool_called_once_is_not_redundant_whatever_its_arguments() -> None:
    value, error = _score(
        ToolCall(name="a", arguments={"n": HUGE}, result=1),
        ToolCall(name="b", arguments={}, result=1),
    )
    assert (value, error) == (1.0, None)


def test_a_tool_called_twice_with_arguments_that_cannot_be_compared_is_an_error() -> None:
    value, error = _score(
        ToolCall(name="a", arguments={"n": HUGE}, result=1),
        ToolCall(name="a", arguments={"n": HUGE}, result=1),
    )
    assert value is None
    assert error is not None and "4300 digits" in error
