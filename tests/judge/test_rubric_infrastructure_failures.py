"""A judge rubric does not judge a trial that failed for an infrastructure reason (the agent
never got to answer), as no built-in scorer does: no score with the cause, never a 0.0 "the
trial gave no answer". Seen failing first: correctness gave 0.0 to a timed-out trial."""

from __future__ import annotations

import pytest

from agenteval.case import EvalCase
from agenteval.judge.rubrics import RUBRICS, JudgeRubric
from agenteval.trace import Failure, FailureCause, Trial

CASE = EvalCase(input="q", expected_output="a")


@pytest.mark.parametrize("name", RUBRICS)
@pytest.mark.parametrize("cause", [c for c in FailureCause if c.is_infrastructure])
async def test_an_infrastructure_failure_gets_no_score(name: str, cause: FailureCause) -> None:
    trial = Trial(failure=Failure(cause=cause, message="gave up after 3 tries"))
    score = await JudgeRubric(name)(CASE, trial)
    assert (score.value, score.passed, score.error) == (None, None, None)
    assert score.reason == (
        f"not judged: the trial failed for an infrastructure reason ({cause.value}: gave up "
        "after 3 tries)"
    )


async def test_a_trial_the_agent_failed_is_still_judged() -> None:
    trial = Trial(failure=Failure(cause=FailureCause.AGENT_ERROR, message="boom"))
    score = await JudgeRubric("correctness")(CASE, trial)
    assert (score.value, score.reason) == (0.0, "the trial gave no answer")
