"""A user the agent does not know in advance: a case's `user_simulation`, and what a simulated
user says each turn.

Pure data, like the rest of the model. A case declares the user instead of (or after) its written
turns:

```yaml
user_simulation:
  goal: Get a refund for order 8812, which arrived broken.
  persona: Impatient, writes short messages, gives the order number only when asked.
  starting_prompt: My order arrived broken.    # optional: the first message, as written
  max_turns: 8
```

A model plays the user (the run's `user_simulator`, `agents/users.py` asks it), or a Python
function does (`script: my_users:refund_user`, a function of the conversation so far returning
the next message, or None to stop). The conversation the trial held is recorded as
`Trial.simulation` (`trace.SimulatedConversation`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from agenteval.trace import EndReason, ModelCall

__all__ = ["DEFAULT_MAX_TURNS", "UserReply", "UserRequest", "UserSimulation"]

DEFAULT_MAX_TURNS = 10
"""User messages a simulated conversation holds at most, unless the case says otherwise."""

STOPS = (EndReason.GOAL_ACHIEVED, EndReason.AGENT_CANNOT_HELP, EndReason.USER_GAVE_UP)
"""The reasons a simulated user may give for stopping (the rest are the harness's)."""


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")


class UserSimulation(_Model):
    """Who plays the user in a case: a goal and persona for the run's simulator model, or a
    scripted user; and how long the conversation may last.

    A case's written turns (its `conversation`, or its `input`) are played first, as written;
    then the starting prompt, if any; then the simulated user speaks until it stops or the
    conversation holds `max_turns` user messages (the written ones included).
    """

    goal: str | None = None
    """What the user wants from the agent (ADK's `conversation_plan`)."""
    persona: str | None = None
    """How the user behaves and writes."""
    starting_prompt: str | None = None
    """The first message, as written (the simulator writes it otherwise)."""
    max_turns: int = Field(default=DEFAULT_MAX_TURNS, ge=1)
    script: str | None = None
    """A scripted user, by reference (`module:function`, `path/to/file.py:function`): called
    with the conversation so far (a list of `Message`), it returns the next message, a
    `UserReply`, or None to stop. For offline tests and deterministic CI."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """What another format says of the user that agenteval keeps as given (ADK's persona
    behaviours, its `user_simulator_config`), for the simulator's prompt and the reports."""

    @field_validator("max_turns", mode="before")
    @classmethod
    def _not_a_boolean(cls, value: Any) -> Any:
        # pydantic reads true as 1: `max_turns: true` (or YAML's `yes`) would silently cut the
        # conversation to one message.
        if isinstance(value, bool):
            raise PydanticCustomError("int_type", "Input should be a valid integer")
        return value

    @model_validator(mode="after")
    def _has_a_user(self) -> UserSimulation:
        if self.script is None and not (self.goal or "").strip():
            raise ValueError(
                "a user_simulation needs a `goal` (what the simulated user wants) or a "
                "`script` (a function playing the user: module:function)"
            )
        return self


class UserRequest(_Model):
    """What a simulated user is asked for: its next message in one trial's conversation."""

    simulation: UserSimulation
    messages: list[dict[str, str]]
    """The conversation so far, oldest first: `{"role": "user" | "assistant", "content": ...}`
    (the agent's turns as `assistant`)."""
    case_id: str = ""
    trial: int = 0
    """The trial's index: each trial of a case is its own sample of the simulator (as for the
    judge), so trials differ where the model would, and a rerun of a trial repeats it."""


class UserReply(_Model):
    """A simulated user's next move: a message, or a stop with its reason.

    A scripted user may return one (`UserReply(stop=EndReason.GOAL_ACHIEVED)`) instead of text
    or None.
    """

    message: str | None = None
    stop: EndReason | None = None
    detail: str | None = None
    """Why it stopped (or what it was thinking), as the simulator said it."""
    model_calls: list[ModelCall] = Field(default_factory=list)
    """The simulator's model calls for this reply (none when it came from the cache)."""
    cached: bool = False
    cost_usd: float | None = None

    @model_validator(mode="after")
    def _message_or_stop(self) -> UserReply:
        if (self.message is None) == (self.stop is None):
            raise ValueError("a user's reply is a message or a stop, exactly one of them")
        if self.stop is not None and self.stop not in STOPS:
            raise ValueError(
                f"a user stops with {', '.join(reason.value for reason in STOPS)}, "
                f"not {self.stop.value}"
            )
        return self
