"""What the user simulator's model returns each turn: one structured object, its JSON schema, and
the prompt template it is asked with.

The schema is written out, not generated, for the reason `judge/verdict.py` gives: the strict
structured-output modes of the three providers (OpenAI's `json_schema` with `strict`, Anthropic's
forced tool input, Gemini's `responseJsonSchema`) accept a narrow subset of JSON Schema: every
property required, no additional properties. The stop reasons are a string `enum`, which all
three accept; what the schema cannot say (a message for `message`, none for a stop) is checked
on the way back (`SimulatorReply`).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any, Literal

import jinja2
import yaml
from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["ACTIONS", "REPLY_SCHEMA", "SimulatorPrompt", "SimulatorReply", "load_prompt"]

ACTIONS = ("message", "goal_achieved", "agent_cannot_help", "user_gave_up")
"""The simulator's moves: its next message, or a stop with its reason (`trace.EndReason`)."""

REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {
            "type": "string",
            "description": "In one or two sentences: what the agent just did, and why this action.",
        },
        "action": {
            "type": "string",
            "enum": list(ACTIONS),
            "description": "message: write the next message; or stop: goal_achieved, "
            "agent_cannot_help, user_gave_up.",
        },
        "message": {
            "type": "string",
            "description": "The user's next message for `message`; an empty string for a stop.",
        },
    },
    "required": ["reasoning", "action", "message"],
    "additionalProperties": False,
}


class SimulatorReply(BaseModel):
    """One reply of the simulator's model, as read: strict, as the schema sent is (a field of
    its own, a number for a string, an action out of the list, no message for `message`, all
    are a malformed reply, asked again once)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    reasoning: str
    action: Literal["message", "goal_achieved", "agent_cannot_help", "user_gave_up"]
    message: str

    @model_validator(mode="after")
    def _message_when_asked(self) -> SimulatorReply:
        if self.action == "message" and not self.message.strip():
            raise ValueError("action is `message` and the message is empty")
        return self


_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=True,
    trim_blocks=True,  # a block tag's line leaves no blank line behind
    lstrip_blocks=True,
)


class SimulatorPrompt(BaseModel):
    """The simulator's prompt template (`templates/<id>.yaml`): its `version` goes into the
    cache key, so a changed prompt asks again instead of reading replies to the old one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    version: int
    system: str
    user: str

    def render(self, blocks: dict[str, str]) -> str:
        """The user message, each placeholder replaced by its (fenced) block."""
        return _ENV.from_string(self.user).render(**blocks).strip() + "\n"


@cache
def load_prompt(prompt_id: str = "user_simulator") -> SimulatorPrompt:
    """The shipped prompt template with this id."""
    path = resources.files("agenteval.simulation") / "templates" / f"{prompt_id}.yaml"
    data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    return SimulatorPrompt.model_validate(data)
