"""Judge prompt templates, kept as files in the package, and the fencing of untrusted text.

A template file (`templates/<id>.yaml`) holds its `id`, a `version` that goes into the cache key,
the question it asks, what it `needs` from a trial, its `system` and `user` prompts, and any
`verdict` fields of its own that the judge returns beside the reasoning and the score. The
user prompt's `{{ name }}` placeholders are filled with fenced blocks: the agent's answer, its
tool results and the case input are data written by others, so each sits between a
`<<<BEGIN name id>>>` and an `<<<END name id>>>` line whose id is a hash of the block's own
content. A text cannot close its own fence early, because it cannot contain the hash of itself.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

import jinja2
import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agenteval.judge.verdict import RESERVED_FIELDS, Verdict, read_verdict, verdict_schema

__all__ = ["Template", "fence", "load_template", "template_ids"]

_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
)


class Template(BaseModel):
    """One judge prompt: its identity, what it needs, and its two messages."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    version: int
    question: str
    needs: tuple[str, ...] = Field(default=())
    system: str
    user: str
    verdict: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """The template's own verdict fields, each a JSON schema (a list of unsupported claims, say),
    returned beside the reasoning and the score."""

    @field_validator("verdict")
    @classmethod
    def _check_verdict_fields(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name, schema in value.items():
            if name in RESERVED_FIELDS:
                raise ValueError(f"verdict field {name!r} is reserved")
            try:
                Draft202012Validator.check_schema(schema)
            except SchemaError as exc:
                raise ValueError(f"verdict field {name!r}: {exc.message}") from exc
        return value

    @property
    def verdict_schema(self) -> dict[str, Any]:
        """The JSON schema the judge's verdict must follow for this template."""
        return verdict_schema(self.verdict)

    def read_verdict(self, data: Mapping[str, Any]) -> tuple[Verdict, dict[str, Any]]:
        """The verdict in `data` and the values of this template's own fields (see
        `verdict.read_verdict`); raises `ValueError` when it is not a valid verdict."""
        return read_verdict(data, self.verdict)

    def render(self, blocks: dict[str, str]) -> str:
        """The user message, with each placeholder replaced by its fenced block."""
        return _ENV.from_string(self.user).render(**blocks).strip() + "\n"


def fence(name: str, text: str) -> str:
    """`text` between BEGIN/END lines whose id is derived from the text itself."""
    digest = hashlib.sha256(f"{name}\0{text}".encode()).hexdigest()[:16]
    return f"<<<BEGIN {name} {digest}>>>\n{text}\n<<<END {name} {digest}>>>"


def template_ids() -> list[str]:
    """The ids of the templates shipped in the package."""
    folder = resources.files("agenteval.judge") / "templates"
    return sorted(
        entry.name.removesuffix(".yaml")
        for entry in folder.iterdir()
        if entry.name.endswith(".yaml")
    )


@cache
def load_template(template_id: str) -> Template:
    """The shipped template with this id."""
    path = resources.files("agenteval.judge") / "templates" / f"{template_id}.yaml"
    data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    return Template.model_validate(data)
