"""The verdict a judge must return, as a pydantic model and the JSON schema sent to the provider."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RESERVED_FIELDS", "VERDICT_SCHEMA", "Verdict", "read_verdict", "verdict_schema"]


class Verdict(BaseModel):
    """One judge sample: its reasoning first (so the score follows from it), then the score.

    Strict, as the schema sent to the provider is: the score is a JSON number (a whole number
    too) and the reasoning a string; a score written as text (`"1"`), a boolean, bytes or a
    field of its own is a malformed verdict, asked again, never read as a number.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    reasoning: str = Field(description="Why the score: what was checked and what was found.")
    score: float = Field(
        ge=0.0,
        le=1.0,
        description="From 0.0 to 1.0, on the rubric's scale.",
    )


# Written out rather than generated: the strict structured-output modes of the providers accept
# a narrow subset of JSON Schema (every property required, no additional properties, no
# numeric bounds in some), and the range is checked by `Verdict` on the way back.
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {
            "type": "string",
            "description": "Why the score: what was checked and what was found.",
        },
        "score": {
            "type": "number",
            "description": "From 0.0 to 1.0, on the rubric's scale.",
        },
    },
    "required": ["reasoning", "score"],
    "additionalProperties": False,
}

RESERVED_FIELDS = frozenset({"reasoning", "score", "cached", "error", "raw"})
"""Names a template's own verdict fields cannot take (the verdict's and a sample record's)."""


def verdict_schema(fields: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The verdict schema with a template's own `fields` (each a JSON schema) added between the
    reasoning and the score, every one required, as the strict structured-output modes want."""
    if not fields:
        return VERDICT_SCHEMA
    properties = VERDICT_SCHEMA["properties"]
    return {
        "type": "object",
        "properties": {
            "reasoning": properties["reasoning"],
            **{name: dict(schema) for name, schema in fields.items()},
            "score": properties["score"],
        },
        "required": ["reasoning", *fields, "score"],
        "additionalProperties": False,
    }


def read_verdict(
    data: Mapping[str, Any], fields: Mapping[str, Mapping[str, Any]]
) -> tuple[Verdict, dict[str, Any]]:
    """The verdict in `data` and the values of a template's own `fields`.

    Raises `ValueError` when the verdict is invalid, holds a field the template does not
    declare, or a declared field's value does not follow its schema. A declared field the model
    left out is simply absent from the values (providers without a strict mode may omit one).
    """
    base = {key: value for key, value in data.items() if key not in fields}
    verdict = Verdict.model_validate(base)
    values: dict[str, Any] = {}
    for name, schema in fields.items():
        if name not in data:
            continue
        error = best_match(Draft202012Validator(dict(schema)).iter_errors(data[name]))
        if error is not None:
            raise ValueError(f"verdict field {name!r}: {error.message}")
        values[name] = data[name]
    return verdict, values
