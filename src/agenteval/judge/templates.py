"""Judge prompt templates, kept as files in the package, and the fencing of untrusted text.

A template file (`templates/<id>.yaml`) holds its `id`, a `version` that goes into the cache key,
the question it asks, what it `needs` from a trial, and its `system` and `user` prompts. The
user prompt's `{{ name }}` placeholders are filled with fenced blocks: the agent's answer, its
tool results and the case input are data written by others, so each sits between a
`<<<BEGIN name id>>>` and an `<<<END name id>>>` line whose id is a hash of the block's own
content. A text cannot close its own fence early, because it cannot contain the hash of itself.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from typing import Any

import jinja2
import yaml
from pydantic import BaseModel, ConfigDict, Field

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
