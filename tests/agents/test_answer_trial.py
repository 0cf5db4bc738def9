"""`answer_trial` (the trial of an agent's bare str or None answer, built without validation)
is `Trial(output=...)`: every field, the fields set, the JSON, and nothing shared between two
trials."""

from __future__ import annotations

import pytest

from agenteval.agents.calling import answer_trial, read_agent_output
from agenteval.trace import Trial

ANSWERS = ["Paris", None, "", "   ", 'é\u2028\x00 "quoted" {json}', "x" * 10_000]


@pytest.mark.parametrize("output", ANSWERS)
def test_it_is_the_validated_trial(output: str | None) -> None:
    built, validated = answer_trial(output), Trial(output=output)
    assert built == validated
    assert list(built.__dict__) == list(validated.__dict__)  # every field, in order
    assert built.__pydantic_fields_set__ == validated.__pydantic_fields_set__ == {"output"}
    assert built.__pydantic_extra__ is validated.__pydantic_extra__ is None
    assert built.__pydantic_private__ is validated.__pydantic_private__ is None
    assert built.usage.__pydantic_fields_set__ == validated.usage.__pydantic_fields_set__
    assert built.model_dump_json() == validated.model_dump_json()
    assert built.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    assert built.model_dump(exclude_defaults=True) == validated.model_dump(exclude_defaults=True)


def test_it_covers_every_field_of_trial() -> None:
    """Fails when `Trial` gains a field (or a default changes) that `answer_trial` lacks."""
    assert set(answer_trial("x").__dict__) == set(Trial.model_fields)
    for name, field in Trial.model_fields.items():
        if name != "output":
            expected = field.default_factory() if field.default_factory else field.default  # type: ignore[call-arg]
            assert getattr(answer_trial("x"), name) == expected, name


def test_two_trials_share_no_mutable_default() -> None:
    first, second = answer_trial("a"), answer_trial("b")
    for name, value in first.__dict__.items():
        if isinstance(value, list | dict) or name == "usage":
            assert value is not second.__dict__[name], name
    first.tool_calls.append(None)  # type: ignore[arg-type]
    first.metadata["k"] = 1
    assert second.tool_calls == [] and second.metadata == {}


def test_a_bare_answer_is_read_as_one() -> None:
    assert read_agent_output("Paris") == Trial(output="Paris")
    assert read_agent_output(None) == Trial(output=None)
