"""The JSON Schema of a case file (`case_file_schema`), for editors and validators."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agenteval.case import EvalCase, ExpectedCall, Rubric
from agenteval.casefiles.fields import INPUT_FIELDS, models_under, other_names
from agenteval.tool_mocks import MockAnswer, MockRule, ToolMock
from agenteval.user_simulation import UserSimulation

__all__ = ["CaseFile", "case_file_schema"]


def case_file_schema() -> dict[str, Any]:
    """The JSON Schema of a case file: a list of cases, or a mapping with a `cases:` list."""
    schema = TypeAdapter(_CaseList | CaseFile).json_schema()
    definitions: dict[str, Any] = schema.get("$defs", {})
    for model in models_under(EvalCase):
        definition = definitions.get(model.__name__)
        if definition is None:
            continue
        properties = definition.get("properties", {})
        for name, info in model.model_fields.items():
            prop = properties.get(name)
            if prop is None:
                continue
            for other in other_names(name, info.validation_alias):
                if other not in properties:
                    properties[other] = {**prop, "description": f"Another name for `{name}`."}
    if "EvalCase" in definitions:
        definitions["EvalCase"]["anyOf"] = [{"required": [field]} for field in INPUT_FIELDS]
    for model, shorthand in ((ExpectedCall, "The tool's name alone."), (Rubric, "The text alone.")):
        definition = definitions.get(model.__name__)
        if definition is not None:
            definitions[model.__name__] = {
                "anyOf": [{"type": "string", "description": shorthand}, definition]
            }
    _written_mocks(definitions)
    _written_user(definitions)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "agenteval case file",
        "description": "A list of cases, or a mapping with a `cases:` list.",
        **schema,
    }


def _written_mocks(definitions: dict[str, Any]) -> None:
    """A tool's mock as it is written (one answer, a list of rules, or `sequence:`), not as the
    model holds it; an answer has a `result` or an `error`, never both."""
    if ToolMock.__name__ not in definitions:
        return
    one = [{"required": ["result"]}, {"required": ["error"]}]
    for model in (MockAnswer, MockRule):
        definitions[model.__name__]["oneOf"] = one
    rule = {"$ref": f"#/$defs/{MockRule.__name__}"}
    answer = {"$ref": f"#/$defs/{MockAnswer.__name__}"}
    definitions[ToolMock.__name__] = {
        "description": ToolMock.__doc__,
        "anyOf": [
            rule,
            {"type": "array", "items": rule, "minItems": 1},
            {
                "type": "object",
                "properties": {"sequence": {"type": "array", "items": answer, "minItems": 1}},
                "required": ["sequence"],
                "additionalProperties": False,
            },
        ],
    }


_USER_FIELDS = {
    "goal": "What the simulated user wants from the agent (the run's `user_simulator` plays it).",
    "persona": "How the simulated user behaves and writes.",
    "starting_prompt": "The user's first message, as written (the simulator writes it otherwise).",
    "max_turns": "User messages the conversation holds at most, the written ones included.",
    "script": "A Python function playing the user: module:function, or path/to/file.py:function "
    "relative to the case file's folder. Called with the conversation so far, it returns the "
    "next message, or None to stop.",
    "extra": "What another format says of the user, kept as given.",
}


def _written_user(definitions: dict[str, Any]) -> None:
    """A simulated user as written: a `goal` or a `script` (one of them, not null), each field
    described, a script a `module:function` reference."""
    definition = definitions.get(UserSimulation.__name__)
    if definition is None:
        return
    properties = definition.get("properties", {})
    for name, description in _USER_FIELDS.items():
        if name in properties:
            properties[name]["description"] = description
    if "script" in properties:
        properties["script"] = {
            **properties["script"],
            "anyOf": [{"type": "string", "pattern": r"^.+:[A-Za-z_][A-Za-z0-9_]*$"}],
        }
    if "goal" in properties:
        properties["goal"] = {**properties["goal"], "anyOf": [{"type": "string", "minLength": 1}]}
    definition["anyOf"] = [{"required": ["goal"]}, {"required": ["script"]}]


# ---------------------------------------------------------------------------------------------
# The case file's shape, for the schema


_CaseList = Annotated[list[EvalCase], Field(min_length=1)]


class CaseFile(BaseModel):
    """A case file written as a mapping with a `cases:` list."""

    model_config = ConfigDict(extra="forbid")

    cases: _CaseList
