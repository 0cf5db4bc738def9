"""The JSON Schema of a case file (`case_file_schema`), for editors and validators."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agenteval.case import EvalCase, ExpectedCall, Rubric
from agenteval.casefiles.fields import INPUT_FIELDS, models_under, other_names
from agenteval.tool_mocks import MockAnswer, MockRule, ToolMock

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


# ---------------------------------------------------------------------------------------------
# The case file's shape, for the schema


_CaseList = Annotated[list[EvalCase], Field(min_length=1)]


class CaseFile(BaseModel):
    """A case file written as a mapping with a `cases:` list."""

    model_config = ConfigDict(extra="forbid")

    cases: _CaseList
