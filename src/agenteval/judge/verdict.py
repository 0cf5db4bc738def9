"""The verdict a judge must return, as a pydantic model and the JSON schema sent to the provider."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["VERDICT_SCHEMA", "Verdict"]


class Verdict(BaseModel):
    """One judge sample: its reasoning first (so the score follows from it), then the score."""

    model_config = ConfigDict(extra="forbid")

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
