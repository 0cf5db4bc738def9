"""`trial_result` (the engine's result of one trial, built without validating what is valid
already) is `TrialResult(case=..., trial=..., scores=...)`: the same instance, fields set
included; anything else is validated and fails as before."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agenteval import EvalCase
from agenteval.records import TrialResult, trial_result
from agenteval.score import Score
from agenteval.trace import Trial


class OwnCase(EvalCase):
    pass


class OwnScore(Score):
    pass


CASE = EvalCase(id="a", input="x", expected_output="P")
TRIAL = Trial(case_id="a", output="P")
SCORES: list[dict[str, Any]] = [
    {},
    {"exact_match": Score(name="exact_match", value=1.0, passed=True)},
    {"a": Score(name="a", reason="none"), "b": OwnScore(name="b", value=0.5, passed=False)},
]


@pytest.mark.parametrize("scores", SCORES)
@pytest.mark.parametrize("case", [CASE, OwnCase(id="o", input="y")])
def test_it_is_the_validated_result(case: EvalCase, scores: dict[str, Score]) -> None:
    built, validated = (
        trial_result(case, TRIAL, scores),
        TrialResult(case=case, trial=TRIAL, scores=scores),
    )
    assert built == validated
    assert list(built.__dict__) == list(validated.__dict__)
    assert built.__pydantic_fields_set__ == validated.__pydantic_fields_set__
    assert built.__pydantic_extra__ is validated.__pydantic_extra__ is None
    assert built.__pydantic_private__ is validated.__pydantic_private__ is None
    for name in ("case", "trial"):
        assert getattr(built, name) is getattr(validated, name)  # checked, not copied
    assert built.scores is not scores and validated.scores is not scores  # copied
    assert all(built.scores[k] is validated.scores[k] for k in scores)
    assert built.model_dump_json() == validated.model_dump_json()


@pytest.mark.parametrize(
    ("case", "trial", "scores"),
    [
        ({"id": "a", "input": "x"}, TRIAL, {}),
        (CASE, {"output": "P"}, {}),
        (CASE, TRIAL, {"a": {"name": "a", "value": 1.0}}),
    ],
)
def test_what_validation_accepts_otherwise_it_still_accepts(
    case: Any, trial: Any, scores: Any
) -> None:
    assert trial_result(case, trial, scores) == TrialResult(case=case, trial=trial, scores=scores)


@pytest.mark.parametrize(
    ("case", "trial", "scores"),
    [(None, TRIAL, {}), (CASE, "P", {}), (CASE, TRIAL, {"a": 1}), (CASE, TRIAL, [("a", 1)])],
)
def test_what_validation_refuses_fails_as_it_did(case: Any, trial: Any, scores: Any) -> None:
    with pytest.raises(ValidationError) as validated:
        TrialResult(case=case, trial=trial, scores=scores)
    with pytest.raises(ValidationError) as built:
        trial_result(case, trial, scores)
    assert str(built.value) == str(validated.value)
