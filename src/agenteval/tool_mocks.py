"""What a tool answers instead of running: a case's (or a run's) `tool_mocks`, as data.

Pure data, like the rest of the model: the answer is given (`agents/environment.py` gives it, in
every place agenteval sees a tool called). A tool's mock is written in one of three shapes:

```yaml
tool_mocks:
  get_weather:                      # rules: the first whose `when` the arguments include
    - when: {city: Paris}
      result: {celsius: 14}
    - error: "UnknownCityError: no such city"     # no `when`: every other call
  create_ticket:                    # one answer for every call
    result: {id: T-1}
    latency_s: 0.2
  charge_card:                      # answers in order of the calls, the last repeating
    sequence:
      - error: timeout
      - result: {status: ok}
```

An answer is a `result` (any data; `null` too: an answer given as empty is an answer) or an
`error` (the tool raises: a message, `"TypeName: message"` to name the exception's type, or the
words `timeout` / `rate_limited` for the exceptions a real client raises), never both, with an
optional `latency_s` and a `set_state` merged into the trial's environment state. In Python a
`result` may also be a function of the call's arguments; a case stores it as a reference
(`{"agenteval.callable": "module:qualname"}`), loaded again when a stored run is resumed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

__all__ = [
    "CALLABLE_KEY",
    "INJECTED_ERRORS",
    "MOCK_FIXES",
    "MockAnswer",
    "MockRule",
    "ToolMock",
    "callable_reference",
]

CALLABLE_KEY: Final = "agenteval.callable"
"""How a stored case names a Python function given as a mock's `result`."""

INJECTED_ERRORS: Final = ("timeout", "rate_limited")
"""The words an `error:` may be instead of a message: the failure a real client raises."""


def callable_reference(fn: Callable[..., Any]) -> str:
    """`module:qualname` of a function, as a stored case keeps it (a lambda or a function
    defined inside another keeps a name that cannot be loaded back: resuming says so)."""
    module = getattr(fn, "__module__", None) or "?"
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{module}:{name}"


MOCK_FIXES: Final = {
    "mock_both": "keep one; to answer some calls with an error, write rules with `when:` "
    "or a `sequence:`",
    "mock_neither": "add `result:` (what the tool returns; `null` is a result) or `error:` "
    "(what it raises: a message, `timeout` or `rate_limited`)",
    "mock_empty_error": "write the message the tool raises, or `timeout` / `rate_limited`",
    "mock_latency": "write the delay in seconds, e.g. `latency_s: 0.2`, or remove it",
    "mock_shape": "write `{result: ...}`, `{error: ...}`, a list of rules with `when:`, or "
    "`{sequence: [...]}`",
    "mock_no_rules": "write at least one rule (`- result: ...`), or remove the tool's mock",
    "mock_empty_sequence": "list at least one answer (`- result: ...`), or remove the tool's mock",
    "mock_unreachable": "move the rule without `when` last: the rules are tried in order",
}
"""The fix for each of a mock's own mistakes (pydantic's error type), for the messages."""

_ANSWER_KEYS: Final = ("when", "result", "error", "latency_s", "set_state")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


class MockAnswer(_Model):
    """One answer of a mocked tool: a `result` or an `error`, after `latency_s`, changing the
    environment state by `set_state`."""

    result: Any = None
    error: str | None = None
    latency_s: float | None = Field(default=None, ge=0)
    set_state: dict[str, Any] | None = None
    _function: Callable[..., Any] | None = PrivateAttr(default=None)

    @field_validator("latency_s")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise PydanticCustomError(
                "mock_latency", "latency_s must be a finite number of seconds"
            )
        return value

    @model_validator(mode="after")
    def _one_answer(self) -> MockAnswer:
        if callable(self.result):
            # Held as its reference, as a stored run keeps it (the store copies fields, never
            # a function); the function itself answers in this process.
            self._function = self.result
            self.result = {CALLABLE_KEY: callable_reference(self.result)}
        given = self.model_fields_set
        if "result" in given and "error" in given:
            raise PydanticCustomError("mock_both", "a `result` and an `error` are both given")
        if "result" not in given and "error" not in given:
            raise PydanticCustomError("mock_neither", "neither a `result` nor an `error` is given")
        if self.error is not None and not self.error.strip():
            raise PydanticCustomError("mock_empty_error", "`error` is empty")
        return self

    @property
    def raises(self) -> bool:
        """Whether this answer is an error."""
        return "error" in self.model_fields_set

    @property
    def function(self) -> Callable[..., Any] | None:
        """The function given as the `result`, in the process that gave it; None read back
        from a store (the `result` names it: `{"agenteval.callable": "module:qualname"}`)."""
        return self._function

    @model_serializer
    def _written(self) -> dict[str, Any]:
        # As written: only the keys given (a result of None stays a result).
        written: dict[str, Any] = {}
        for key in _ANSWER_KEYS:
            if key in self.model_fields_set:
                written[key] = getattr(self, key)
        return written


class MockRule(MockAnswer):
    """An answer for the calls whose arguments include `when` (every call without `when`)."""

    when: dict[str, Any] | None = None

    def applies(self, arguments: dict[str, Any]) -> bool:
        """Whether a call with these arguments takes this rule: each `when` key is among the
        arguments with an equal value (no `when`: every call)."""
        if self.when is None:
            return True
        return all(key in arguments and arguments[key] == value for key, value in self.when.items())


class ToolMock(_Model):
    """What one tool answers: `rules` (the first that applies; a call none applies to is
    unmocked) or a `sequence` (the n-th call takes the n-th answer, the last repeating).

    Written as a list of rules, one answer (a rule without `when`), or `{sequence: [...]}`.
    """

    rules: list[MockRule] | None = None
    sequence: list[MockAnswer] | None = None

    @model_validator(mode="before")
    @classmethod
    def _shapes(cls, value: Any) -> Any:
        if isinstance(value, ToolMock):
            return value
        if isinstance(value, list):
            return {"rules": value}
        if isinstance(value, dict) and ("sequence" in value or "rules" in value):
            return value
        if isinstance(value, dict | MockAnswer):
            return {"rules": [value]}
        return value

    @model_validator(mode="after")
    def _one_shape(self) -> ToolMock:
        if (self.rules is None) == (self.sequence is None):
            raise PydanticCustomError(
                "mock_shape", "a tool's mock is a list of rules, one answer, or a `sequence:`"
            )
        if self.rules is not None and not self.rules:
            raise PydanticCustomError("mock_no_rules", "a tool's mock needs at least one rule")
        if self.sequence is not None and not self.sequence:
            raise PydanticCustomError("mock_empty_sequence", "a `sequence:` has no answer")
        for position, rule in enumerate((self.rules or [])[:-1]):
            if rule.when is None:  # it takes every call: the rules after it never answer
                raise PydanticCustomError(
                    "mock_unreachable",
                    "rule {position} has no `when`, so it answers every call and the rules "
                    "after it never do",
                    {"position": position + 1},
                )
        return self

    @model_serializer
    def _written(self) -> Any:
        if self.sequence is not None:
            return {"sequence": [answer.model_dump(mode="json") for answer in self.sequence]}
        rules = self.rules or []
        dumped = [rule.model_dump(mode="json") for rule in rules]
        return dumped[0] if len(dumped) == 1 and rules[0].when is None else dumped

    def answers(self, arguments: dict[str, Any]) -> bool:
        """Whether a call with these arguments takes an answer of this mock (a `sequence`
        answers every call; rules, when one applies)."""
        return self.sequence is not None or any(r.applies(arguments) for r in self.rules or ())

    def arguments_named(self) -> set[str]:
        """The argument names the rules' `when` look at (checked against the tool's schema)."""
        return {key for rule in self.rules or () if rule.when for key in rule.when}
