"""What a case asks and what it expects: `EvalCase`, with `Invocation` turns and `Rubric`s."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from agenteval.tool_mocks import ToolMock
from agenteval.trace import AgentStep, ToolCall
from agenteval.user_simulation import UserSimulation

__all__ = [
    "DECIMAL_KEY",
    "MAX_TURNS_BELOW_WRITTEN",
    "EvalCase",
    "ExpectedCall",
    "Invocation",
    "Message",
    "Rubric",
    "decimals_tagged",
    "state_numbers",
]

MAX_TURNS_BELOW_WRITTEN = "max_turns_below_written"
"""The error type of a case whose `user_simulation.max_turns` is below the user messages it
writes (case files name the field with it)."""


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")


class Message(_Model):
    """One message of a conversation given as input (`role` is `user`, `assistant` or `system`)."""

    role: str
    content: str


class ExpectedCall(_Model):
    """A tool call a case expects, by name, with the arguments it must carry (if any).

    Empty `arguments` accept any arguments. `args` is an alias of `arguments`, as on `ToolCall`.
    """

    name: str
    arguments: dict[str, Any] = Field(
        default_factory=dict, validation_alias=AliasChoices("arguments", "args")
    )

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"name": value}
        if isinstance(value, ToolCall):
            return {"name": value.name, "arguments": value.arguments}
        return value

    @property
    def args(self) -> dict[str, Any]:
        """Alias of `arguments` (the criterion API's name): the same dict, not a copy."""
        return self.arguments


class Rubric(_Model):
    """A written grading rule for an LLM judge, with its weight among the case's rubrics."""

    rubric_id: str = ""
    content: str
    weight: float = 1.0
    type: str | None = None
    """What the rule grades, as ADK's rubric `type` names it (`TOOL_USE_QUALITY`,
    `TRAJECTORY_QUALITY`, `FINAL_RESPONSE_QUALITY`); None grades the answer."""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"content": value}
        return value

    @model_validator(mode="after")
    def _default_id(self) -> Rubric:
        if not self.rubric_id:
            digest = hashlib.sha256(self.content.encode()).hexdigest()[:8]
            self.rubric_id = f"rubric-{digest}"
        return self


class Invocation(_Model):
    """One user turn of a multi-turn case, with what that turn expects."""

    input: str | None = Field(
        default=None, validation_alias=AliasChoices("input", "user_content", "user_input")
    )
    expected_final_response: str | None = None
    expected_tool_trajectory: list[ToolCall] = Field(default_factory=list)
    expected_node_order: list[str] = Field(default_factory=list)
    rubrics: list[Rubric] = Field(default_factory=list)
    """Grading rules for this turn's answer."""


def state_numbers(value: Any) -> Any:
    """`value` (a state, or a value in one) with each `Decimal` in its dicts, lists and tuples
    made the JSON number it stands for: an int when written whole (`Decimal("2")`), else the
    nearest float, as JSON and YAML read `1.50`. So a ledger's `Decimal("1.50")` equals an
    `expected_state` of `1.5`, in the trial and in the store, where a Decimal would be its text
    (`"1.50"`). A container holding none comes back as it is; a circular one is left for the
    JSON copy to cut, and a Decimal that is no number (`NaN`) stays what it is."""
    return _each_decimal(value, _number, set())


DECIMAL_KEY = "$decimal"
"""The key of the one-key object that writes a `Decimal` of a case's `initial_state` as JSON
(`{"$decimal": "0.50"}`): the store keeps a case so, and reads it back as that Decimal."""


def decimals_tagged(value: Any) -> Any:
    """`value` (an `initial_state`) with each `Decimal` in its dicts, lists and tuples as its
    `DECIMAL_KEY` object, as `EvalCase` writes it as JSON; as `state_numbers`, a container
    holding none as it is. Never raises: a state nested past Python's recursion limit comes
    back as it is, for the JSON copy to cut."""
    try:
        return _each_decimal(value, _tag, set())
    except RecursionError:
        return value


def _number(value: Decimal) -> Any:
    if not value.is_finite():
        return value
    exponent = value.as_tuple().exponent
    return int(value) if isinstance(exponent, int) and exponent >= 0 else float(value)


def _tag(value: Decimal) -> dict[str, str]:
    return {DECIMAL_KEY: str(value)}


def _each_decimal(value: Any, convert: Callable[[Decimal], Any], active: set[int]) -> Any:
    """`value` with `convert` applied to each Decimal in its dicts, lists and tuples."""
    if isinstance(value, Decimal):
        return convert(value)
    if not isinstance(value, dict | list | tuple) or id(value) in active:
        return value
    active.add(id(value))
    try:
        if isinstance(value, dict):
            items = {key: _each_decimal(item, convert, active) for key, item in value.items()}
            changed = any(items[key] is not item for key, item in value.items())
            return items if changed else value
        made = [_each_decimal(item, convert, active) for item in value]
        if all(new is old for new, old in zip(made, value, strict=True)):
            return value
        return made if isinstance(value, list) else tuple(made)
    finally:
        active.discard(id(value))


def _untagged(value: Any, active: set[int]) -> Any:
    """`value` with each `DECIMAL_KEY` object holding a Decimal's text as that Decimal; any
    other object, however like it, as it is (and a circular container, where it comes back)."""
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get(DECIMAL_KEY), str):
            try:
                return Decimal(value[DECIMAL_KEY])
            except ArithmeticError:  # not a Decimal's text: the user's own object
                return value
    elif not isinstance(value, list):
        return value
    if id(value) in active:
        return value
    active.add(id(value))
    try:
        if isinstance(value, dict):
            items = {key: _untagged(item, active) for key, item in value.items()}
            changed = any(items[key] is not item for key, item in value.items())
            return items if changed else value
        made = [_untagged(item, active) for item in value]
        return made if any(a is not b for a, b in zip(made, value, strict=True)) else value
    finally:
        active.discard(id(value))


def _text(value: Any) -> Any:
    # YAML reads `expected_output: 19753` as a number; an expected answer is text.
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return str(value)
    return value


class EvalCase(_Model):
    """One case: the input to give the agent and everything a scorer may check.

    A case without an `id` gets a stable one derived from its content, so the same file gives the
    same ids on every run. `expected_tool_calls` (the agent evaluators' name) is an alias of
    `expected_tools`: accepted as a constructor keyword and read as a property.
    """

    id: str = ""
    input: str | list[Message] | None = None
    expected_output: str | None = None
    expected_tools: list[str] | None = Field(
        default=None, validation_alias=AliasChoices("expected_tools", "expected_tool_calls")
    )
    expected_trajectory: list[ExpectedCall] | None = None
    max_tool_calls: int | None = Field(default=None, ge=0)
    relevant_docs: list[str] | None = None
    must_not_contain: list[str] | None = None
    keywords: list[str] | None = None
    rubrics: list[Rubric] | None = None
    context: str | None = None
    agent_trace: list[AgentStep] | None = None
    conversation: list[Invocation] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    tool_mocks: dict[str, ToolMock] | None = None
    """What tools answer instead of running, by tool name (`agenteval.tool_mocks`); a tool not
    named runs for real, unless `tool_mocks_only`."""
    tool_mocks_only: bool = False
    """Every tool call must be answered by a mock (or a replay): an unmocked call fails the
    trial (`unmocked_tool`), even when the agent caught the error it raised."""
    initial_state: dict[str, Any] | None = None
    """The environment state each trial starts from (`agenteval.state()`; an ADK session's
    state)."""
    expected_state: dict[str, Any] | None = None
    """The environment state a trial must leave: the `state_match` scorer checks it."""
    user_simulation: UserSimulation | None = None
    """A user the agent does not know in advance, played after the written turns (if any):
    a goal and persona for the run's simulator model, or a scripted user
    (`agenteval.user_simulation`)."""

    @field_validator("expected_state")
    @classmethod
    def _expected_numbers(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        # Compared with the trial's state, where a Decimal is the number it stands for; and
        # the store would keep a Decimal as its text.
        return None if value is None else state_numbers(value)

    @field_validator("initial_state", mode="before")
    @classmethod
    def _initial_decimals(cls, value: Any) -> Any:
        # A stored case (a stream's, a resumed run's) writes a Decimal as its tagged object: the
        # trial starts from the Decimal the case was given, as a case given as a list does.
        try:
            return _untagged(value, set())
        except RecursionError:  # nested past the recursion limit: no store wrote that
            return value

    @field_serializer("initial_state", when_used="json")
    def _initial_as_json(self, value: dict[str, Any] | None) -> Any:
        # As JSON a Decimal would be its text ("0.50"), and a tool adding a Decimal to it fails.
        return decimals_tagged(value)

    @field_validator("expected_output", mode="before")
    @classmethod
    def _expected_as_text(cls, value: Any) -> Any:
        return _text(value)

    @field_validator("expected_tools", mode="before")
    @classmethod
    def _tool_names(cls, value: Any) -> Any:
        # The agent evaluators list names; ToolCall objects or {name: ...} dicts mean the same.
        if isinstance(value, list):
            return [
                item.name
                if isinstance(item, ToolCall | ExpectedCall)
                else item.get("name", item)
                if isinstance(item, dict)
                else item
                for item in value
            ]
        return value

    @field_validator("relevant_docs", "must_not_contain", "keywords", mode="before")
    @classmethod
    def _text_items(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [value]
        if isinstance(value, list):
            return [_text(item) for item in value]
        return value

    @model_validator(mode="after")
    def _check_and_identify(self) -> EvalCase:
        if (
            self.input is None
            and not self.conversation
            and self.agent_trace is None
            and self.user_simulation is None
        ):
            raise ValueError(
                "a case needs an `input`, a `conversation`, a `user_simulation` or an `agent_trace`"
            )
        if self.user_simulation is not None:
            self._check_max_turns(self.user_simulation)
        if not self.id:
            self.id = self.content_id()
        return self

    def _check_max_turns(self, simulation: UserSimulation) -> None:
        """`max_turns` counts the written user messages too: fewer than the case writes is a
        mistake (they would all be played anyway, past the limit the case states)."""
        written = len(self.written_opening()[1]) + (simulation.starting_prompt is not None)
        if written > simulation.max_turns:
            raise PydanticCustomError(
                MAX_TURNS_BELOW_WRITTEN,
                "user_simulation.max_turns is {max_turns}, fewer than the {written} user "
                "messages the case writes (its turns and starting_prompt): max_turns counts "
                "them too",
                {"max_turns": simulation.max_turns, "written": written},
            )

    @property
    def expected_tool_calls(self) -> list[str] | None:
        """Alias of `expected_tools` (the agent evaluators' name): the same list, not a copy."""
        return self.expected_tools

    def content_id(self) -> str:
        """A short id derived from the case's content (everything but `id`)."""
        content = self.model_dump(mode="json", exclude={"id"}, exclude_defaults=True)
        canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return "case-" + hashlib.sha256(canonical.encode()).hexdigest()[:10]

    def written_opening(self) -> tuple[list[Message], list[str]]:
        """The messages before the case's first user turn and the user turns it writes, as
        every player plays them: its `conversation`'s turns; its text `input`; or, for a list
        `input`, the messages before its last user message and that message (none when the
        list does not end with one)."""
        if self.conversation:
            return [], self.turns
        if isinstance(self.input, str):
            return [], [self.input]
        messages = list(self.input or ())
        if messages and messages[-1].role == "user":
            return messages[:-1], [messages[-1].content]
        return messages, []

    @property
    def turns(self) -> list[str]:
        """The user turns to play, in order: the conversation's inputs, else the single input."""
        if self.conversation:
            return [turn.input or "" for turn in self.conversation]
        if isinstance(self.input, str):
            return [self.input]
        return []
